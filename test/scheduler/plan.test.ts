/** Planning (pure): which due fires are late-but-enqueued and which were missed, and the schedule book's heap. */
import { describe, expect, it } from 'vitest';
import { parseCron } from '../../src/scheduler/cron.js';
import { fireRequest, firstDue, inDowntime, INVALID_TASK, planFires } from '../../src/scheduler/plan.js';
import { ScheduleBook } from '../../src/scheduler/schedule-book.js';
import { type Schedule, type ScheduleInput } from '../../src/core/schedule.js';
import { validateSchedule } from '../../src/scheduler/schedule.js';

const T0 = Date.UTC(2026, 0, 1);

function schedule(overrides: Partial<ScheduleInput> = {}, run: Partial<Schedule> = {}): Schedule {
  const definition = validateSchedule({ id: 's', cron: '* * * * * *', task: { type: 't' }, overlap: 'allow', ...overrides });
  return {
    ...definition, generation: 1, createdAt: T0, updatedAt: T0, resumedAt: null,
    state: { watermark: T0, nextRunAt: null, lastFireAt: null, lastOutcome: null, lastTaskId: null, buffered: null },
    ...run,
  };
}

const every = parseCron('* * * * * *', 'UTC');
const actions = (s: Schedule, now: number, downtime?: { since: number; gaps: [number, number][] }) =>
  planFires(s, every, now, undefined, downtime).fires.map((f) => `${(f.nominalAt - T0) / 1000}:${f.action}`);

describe('planFires', () => {
  it('without downtime information every fire later than the grace goes to the catch-up policy (latest)', () => {
    expect(actions(schedule(), T0 + 5_000)).toEqual(['1:missed', '2:enqueue', '3:enqueue', '4:enqueue', '5:enqueue']);
  });

  it('a late fire while schedulers ran (no gap) is enqueued, late — never missed', () => {
    expect(actions(schedule(), T0 + 20_000, { since: T0 - 1, gaps: [] }).every((a) => a.endsWith(':enqueue'))).toBe(true);
  });

  it('fires inside a gap, or before anything was known, follow the policy; the others are enqueued', () => {
    const gaps: [number, number][] = [[T0 + 3_500, T0 + 8_500]];
    expect(actions(schedule(), T0 + 20_000, { since: T0 + 1_500, gaps })).toEqual([
      '1:missed', '2:enqueue', '3:enqueue', '4:missed', '5:missed', '6:missed', '7:missed', '8:enqueue',
      '9:enqueue', '10:enqueue', '11:enqueue', '12:enqueue', '13:enqueue', '14:enqueue', '15:enqueue', '16:enqueue', '17:enqueue', '18:enqueue', '19:enqueue', '20:enqueue',
    ]);
    const all = schedule({ catchUp: { policy: 'all' } });
    expect(actions(all, T0 + 20_000, { since: T0 + 1_500, gaps }).filter((a) => a.endsWith('missed'))).toEqual([]);
    const skip = schedule({ catchUp: { policy: 'skip' } });
    expect(actions(skip, T0 + 20_000, { since: T0 + 1_500, gaps }).filter((a) => a.endsWith('missed'))).toEqual(['1:missed', '4:missed', '5:missed', '6:missed', '7:missed', '8:missed']);
  });

  it('fires up to the end of a pause (its resume, or its until time) follow the policy', () => {
    const resumed = schedule({}, { resumedAt: T0 + 6_000 });
    expect(actions(resumed, T0 + 10_000, { since: T0, gaps: [] })).toEqual([
      '1:missed', '2:missed', '3:missed', '4:missed', '5:missed', '6:enqueue', '7:enqueue', '8:enqueue', '9:enqueue', '10:enqueue',
    ]);
    const until = schedule({ paused: true }, { pausedUntil: T0 + 4_000 });
    expect(actions(until, T0 + 10_000, { since: T0, gaps: [] })).toEqual([
      '1:missed', '2:missed', '3:missed', '4:enqueue', '5:enqueue', '6:enqueue', '7:enqueue', '8:enqueue', '9:enqueue', '10:enqueue',
    ]);
    expect(actions(until, T0 + 3_000, { since: T0, gaps: [] })).toEqual([]);
  });

  it('inDowntime: before since, or in (from, until] of a gap', () => {
    const d = { since: 100, gaps: [[200, 300]] as [number, number][] };
    expect([100, 101, 200, 201, 300, 301].map((t) => inDowntime(t, d))).toEqual([true, false, false, true, true, false]);
  });
});

describe('firstDue and the schedule book', () => {
  it('firstDue: the next fire after the watermark and the floor; a pause with an end waits for it; without one, nothing', () => {
    expect(firstDue(schedule(), every)).toBe(T0 + 1_000);
    expect(firstDue(schedule(), every, T0 + 5_500)).toBe(T0 + 6_000);
    expect(firstDue(schedule({ paused: true }), every)).toBeNull();
    expect(firstDue(schedule({ paused: true }, { pausedUntil: T0 + 9_500 }), every)).toBe(T0 + 9_500);
    expect(firstDue(schedule({ endAt: T0 + 500 }), every)).toBeNull();
  });

  it('hands out only the due schedules, earliest first; a raised floor moves the others on', () => {
    const book = new ScheduleBook();
    const schedules = Array.from({ length: 1_000 }, (_, i) =>
      ({ ...schedule({ id: `s${i}`, cron: `${i % 60} * * * * *` }), id: `s${i}` }),
    );
    book.load(schedules, 7, T0, () => undefined);
    expect(book.version).toBe(7);
    expect(book.earliest()).toBe(T0 + 1_000);
    const due = book.takeDue(T0 + 2_000);
    expect(due.map((e) => e.schedule.id).sort()).toEqual(schedules.filter((_, i) => i % 60 === 1 || i % 60 === 2).map((s) => s.id).sort());
    for (const entry of due) book.settle(entry, { ...entry.schedule.state, watermark: T0 + 2_000 });
    expect(book.earliest()).toBe(T0 + 3_000);
    book.raiseFloor(T0 + 10_000);
    expect(book.earliest()).toBe(T0 + 11_000);
    expect(book.takeDue(T0 + 10_999)).toEqual([]);
  });

  it('reports a schedule whose cron no longer parses and keeps the others', () => {
    const book = new ScheduleBook();
    const errors: unknown[] = [];
    book.load([schedule(), { ...schedule(), id: "broken", cron: "nope" }], 1, T0, (e) => errors.push(e));
    expect(book.size).toBe(1);
    expect(errors).toHaveLength(1);
  });
});

describe('fireRequest', () => {
  it('a stored task template the rules now refuse makes that fire skipped, not the whole step fail', () => {
    // Stored under older rules (retention beyond 100 years); validateSchedule would refuse it now.
    const legacy: Schedule = { ...schedule(), task: { type: 't', queue: 'default', retention: 2 ** 52 } };
    expect(fireRequest(legacy, T0 + 1000, 'enqueue')).toEqual({ fireId: 'schedule:s:1:' + String(T0 + 1000), nominalAt: T0 + 1000, action: 'skipped', reason: INVALID_TASK });
    const fine = fireRequest(schedule(), T0 + 1000, 'enqueue');
    expect(fine).toMatchObject({ action: 'enqueue', task: { type: 't', queue: 'default', links: { scheduleFireId: fine.fireId } } });
  });
});
