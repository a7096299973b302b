/**
 * Conformance: schedule storage — create, update, upsert, delete and generations,
 * pause and resume — the scheduler's leader lease with its fencing epoch, and the fenced write of
 * run state (advanceSchedules).
 */
import { describe, expect, it } from 'vitest';
import type { ScheduleState } from '../../core/schedule.js';
import type { Backend } from '../contract.js';
import { expectCode, HOUR, useStore, type OpenStore } from './harness.js';
import { definition } from './scheduling-harness.js';

const TTL = 10_000;

function runState(overrides: Partial<ScheduleState> = {}): ScheduleState {
  return { watermark: 1_000, nextRunAt: 61_000, lastFireAt: 1_000, lastOutcome: 'enqueued', lastTaskId: 'task-1', buffered: null, ...overrides };
}

/** The schedule's updatedAt as a leader would have read it (0 when there is none). */
async function stamp(backend: Backend, id: string): Promise<number> {
  return (await backend.getSchedule(id))?.updatedAt ?? 0;
}

export function scheduleConformance(openStore: OpenStore): void {
  describe('schedules: create, update, upsert, delete', () => {
    const store = useStore(openStore);

    it('creates a schedule at generation 1 whose watermark is the store clock at creation', async () => {
      const { backend } = store;
      const before = await backend.now();
      const def = definition('nightly', { cron: '0 3 * * *', timezone: 'Europe/London', overlap: 'bufferOne', jitter: '5s', catchUp: { policy: 'all', window: '2h' } });
      const created = await backend.createSchedule(def);
      const after = await backend.now();
      expect(created).toMatchObject({ ...def, generation: 1 });
      expect(created.createdAt).toBeGreaterThanOrEqual(before);
      expect(created.createdAt).toBeLessThanOrEqual(after);
      expect(created.updatedAt).toBe(created.createdAt);
      expect(created.state).toEqual({ watermark: created.createdAt, nextRunAt: null, lastFireAt: null, lastOutcome: null, lastTaskId: null, buffered: null });
      expect(await backend.getSchedule('nightly')).toEqual(created);
    });

    it('uses the store clock of the backend that writes', async () => {
      const later = (await store.later(HOUR));
      const before = await later.now();
      const created = await later.createSchedule(definition('s'));
      expect(created.createdAt).toBeGreaterThanOrEqual(before);
      expect(created.state.watermark).toBe(created.createdAt);
    });

    it('refuses to create an id that exists (TL_SCHEDULE_CONFLICT) and keeps the stored one', async () => {
      const { backend } = store;
      const first = await backend.createSchedule(definition('s', { cron: '*/5 * * * *' }));
      await expectCode(backend.createSchedule(definition('s', { cron: '0 * * * *' })), 'TL_SCHEDULE_CONFLICT');
      expect(await backend.getSchedule('s')).toEqual(first);
    });

    it('updates a definition: same generation, the watermark moves to now, nextRunAt is cleared', async () => {
      const { backend } = store;
      const created = await backend.createSchedule(definition('s'));
      expect(await backend.advanceSchedules('leader', (await backend.acquireLeadership('leader', TTL))!, [
        { id: 's', generation: 1, updatedAt: await stamp(store.backend, 's'), state: runState({ watermark: created.createdAt, nextRunAt: created.createdAt + 60_000, lastTaskId: 'x' }) },
      ])).toBe(true);
      const later = (await store.later(HOUR));
      const before = await later.now();
      const updated = await later.updateSchedule(definition('s', { cron: '0 * * * *', task: { type: 'other', queue: 'q2' } }));
      expect(updated).toMatchObject({ cron: '0 * * * *', task: { type: 'other', queue: 'q2' }, generation: 1, createdAt: created.createdAt });
      expect(updated.updatedAt).toBeGreaterThanOrEqual(before);
      expect(updated.state.watermark).toBe(updated.updatedAt);
      expect(updated.state).toMatchObject({ nextRunAt: null, lastTaskId: 'x' });
    });

    it('an update never moves the watermark back', async () => {
      const { backend } = store;
      await backend.createSchedule(definition('s'));
      const future = (await backend.now()) + 10 * HOUR;
      const epoch = (await backend.acquireLeadership('leader', TTL))!;
      await backend.advanceSchedules('leader', epoch, [{ id: 's', generation: 1, updatedAt: await stamp(store.backend, 's'), state: runState({ watermark: future }) }]);
      expect((await backend.updateSchedule(definition('s', { cron: '0 * * * *' }))).state.watermark).toBe(future);
    });

    it('update of a missing schedule fails with TL_SCHEDULE_NOT_FOUND and stores nothing', async () => {
      const { backend } = store;
      await expectCode(backend.updateSchedule(definition('ghost')), 'TL_SCHEDULE_NOT_FOUND');
      expect(await backend.getSchedule('ghost')).toBeNull();
      expect(await backend.listSchedules()).toEqual([]);
    });

    it('update applies the definition’s pause state', async () => {
      const { backend } = store;
      await backend.createSchedule(definition('s'));
      await backend.pauseSchedule('s', { note: 'maintenance' });
      expect(await backend.updateSchedule(definition('s'))).toMatchObject({ paused: false, pauseNote: null, pausedUntil: null });
      expect(await backend.updateSchedule(definition('s', { paused: true, pauseNote: 'from the definition' }))).toMatchObject({
        paused: true, pauseNote: 'from the definition',
      });
    });

    it('upsert creates a missing schedule, and updates an existing one keeping its generation', async () => {
      const { backend } = store;
      const created = await backend.upsertSchedule(definition('s', { paused: true, pauseNote: 'not yet' }));
      expect(created).toMatchObject({ generation: 1, paused: true, pauseNote: 'not yet', cron: '* * * * *' });
      const updated = await (await store.later(HOUR)).upsertSchedule(definition('s', { cron: '0 * * * *' }));
      expect(updated).toMatchObject({ generation: 1, cron: '0 * * * *', createdAt: created.createdAt });
      expect(updated.state.watermark).toBe(updated.updatedAt);
    });

    it('upsert keeps an operator’s pause unless the definition itself is paused', async () => {
      const { backend } = store;
      await backend.createSchedule(definition('s'));
      const until = (await backend.now()) + HOUR;
      await backend.pauseSchedule('s', { note: 'incident 42', until });
      const kept = await backend.upsertSchedule(definition('s', { cron: '0 * * * *' }));
      expect(kept).toMatchObject({ cron: '0 * * * *', paused: true, pauseNote: 'incident 42', pausedUntil: until });
      const repaused = await backend.upsertSchedule(definition('s', { paused: true, pauseNote: 'config says so' }));
      expect(repaused).toMatchObject({ paused: true, pauseNote: 'config says so', pausedUntil: null });
    });

    it('keeps the source of the definition', async () => {
      const { backend } = store;
      await backend.upsertSchedule({ ...definition('from-config'), source: 'config' });
      expect((await backend.getSchedule('from-config'))!.source).toBe('config');
    });

    it('delete returns whether there was a schedule; created again it gets generation 2 and a new watermark', async () => {
      const { backend } = store;
      await backend.createSchedule(definition('s'));
      expect(await backend.deleteSchedule('s')).toBe(true);
      expect(await backend.deleteSchedule('s')).toBe(false);
      expect(await backend.getSchedule('s')).toBeNull();
      expect(await backend.listSchedules()).toEqual([]);
      const later = (await store.later(HOUR));
      const before = await later.now();
      const again = await later.createSchedule(definition('s'));
      expect(again.generation).toBe(2);
      expect(again.state.watermark).toBeGreaterThanOrEqual(before);
      expect(await later.deleteSchedule('s')).toBe(true);
      expect((await later.upsertSchedule(definition('s'))).generation).toBe(3);
    });

    it('delete of a schedule that never existed returns false', async () => {
      expect(await store.backend.deleteSchedule('never')).toBe(false);
    });

    it('get returns null for an unknown id; list returns every schedule by id, to every backend on the store', async () => {
      const { backend } = store;
      expect(await backend.getSchedule('nope')).toBeNull();
      for (const id of ['b-report', 'a-cleanup', 'c-sync']) await backend.createSchedule(definition(id));
      const other = (await store.reopen());
      const listed = await other.listSchedules();
      expect(listed.map((s) => s.id)).toEqual(['a-cleanup', 'b-report', 'c-sync']);
      expect(listed[1]).toEqual(await backend.getSchedule('b-report'));
    });
  });

  describe('schedules: pause and resume', () => {
    const store = useStore(openStore);

    it('pauses with a note and an until time, and resumes', async () => {
      const { backend } = store;
      const created = await backend.createSchedule(definition('s'));
      const until = created.createdAt + HOUR;
      const paused = await backend.pauseSchedule('s', { note: 'vendor API down', until });
      expect(paused).toMatchObject({ paused: true, pauseNote: 'vendor API down', pausedUntil: until, generation: 1 });
      expect(await (await store.reopen()).getSchedule('s')).toMatchObject({ paused: true, pauseNote: 'vendor API down', pausedUntil: until });
      const resumed = await backend.resumeSchedule('s');
      expect(resumed).toMatchObject({ paused: false, pauseNote: null, pausedUntil: null });
      expect(resumed.state.watermark).toBe(created.state.watermark);
    });

    it('pauses without a note or until time', async () => {
      const { backend } = store;
      await backend.createSchedule(definition('s'));
      expect(await backend.pauseSchedule('s')).toMatchObject({ paused: true, pauseNote: null, pausedUntil: null });
      expect(await backend.pauseSchedule('s', { note: null, until: null })).toMatchObject({ paused: true, pauseNote: null, pausedUntil: null });
    });

    it('a schedule created paused keeps its note', async () => {
      const { backend } = store;
      expect(await backend.createSchedule(definition('s', { paused: true, pauseNote: 'waiting for launch' }))).toMatchObject({
        paused: true, pauseNote: 'waiting for launch', pausedUntil: null,
      });
    });

    it('pause and resume of a missing schedule fail with TL_SCHEDULE_NOT_FOUND', async () => {
      const { backend } = store;
      await expectCode(backend.pauseSchedule('ghost', { note: 'x' }), 'TL_SCHEDULE_NOT_FOUND');
      await expectCode(backend.resumeSchedule('ghost'), 'TL_SCHEDULE_NOT_FOUND');
      expect(await backend.getSchedule('ghost')).toBeNull();
    });
  });

  describe('scheduler leader lease', () => {
    const store = useStore(openStore);

    it('the first holder gets epoch 1 and renewing keeps the epoch', async () => {
      const { backend } = store;
      expect(await backend.acquireLeadership('a', TTL)).toBe(1);
      expect(await backend.acquireLeadership('a', TTL)).toBe(1);
      expect(await (await store.later(TTL / 2)).acquireLeadership('a', TTL)).toBe(1);
    });

    it('refuses another holder while the lease is valid, on any backend', async () => {
      const { backend } = store;
      expect(await backend.acquireLeadership('a', TTL)).toBe(1);
      expect(await backend.acquireLeadership('b', TTL)).toBeNull();
      expect(await (await store.reopen()).acquireLeadership('b', TTL)).toBeNull();
      expect(await (await store.later(TTL - 1000)).acquireLeadership('b', TTL)).toBeNull();
    });

    it('after the lease expires another holder takes it with the next epoch; the old holder is refused', async () => {
      const { backend } = store;
      expect(await backend.acquireLeadership('a', TTL)).toBe(1);
      const later = (await store.later(TTL + 1000));
      expect(await later.acquireLeadership('b', TTL)).toBe(2);
      expect(await later.acquireLeadership('a', TTL)).toBeNull();
      const muchLater = (await store.later(3 * TTL));
      expect(await muchLater.acquireLeadership('a', TTL)).toBe(3);
    });

    it('a holder that comes back after its own lease expired gets a new epoch', async () => {
      const { backend } = store;
      expect(await backend.acquireLeadership('a', TTL)).toBe(1);
      expect(await (await store.later(TTL + 1000)).acquireLeadership('a', TTL)).toBe(2);
    });

    it('release frees the lease for another holder at once; a non-holder’s release does nothing', async () => {
      const { backend } = store;
      expect(await backend.acquireLeadership('a', TTL)).toBe(1);
      await backend.releaseLeadership('b');
      expect(await backend.acquireLeadership('b', TTL)).toBeNull();
      await backend.releaseLeadership('a');
      expect(await backend.acquireLeadership('b', TTL)).toBe(2);
      await backend.releaseLeadership('nobody');
      expect(await backend.acquireLeadership('a', TTL)).toBeNull();
    });
  });

  describe('advanceSchedules (fenced run state)', () => {
    const store = useStore(openStore);

    it('writes run state while the caller leads with the current epoch', async () => {
      const { backend } = store;
      await backend.createSchedule(definition('a'));
      await backend.createSchedule(definition('b'));
      const epoch = (await backend.acquireLeadership('leader', TTL))!;
      const state = runState({ buffered: { fireId: 'schedule:a:1:120000', nominalAt: 120_000 } });
      expect(await backend.advanceSchedules('leader', epoch, [{ id: 'a', generation: 1, updatedAt: await stamp(backend, 'a'), state }])).toBe(true);
      expect((await backend.getSchedule('a'))!.state).toEqual(state);
      expect((await backend.getSchedule('b'))!.state.lastTaskId).toBeNull();
      expect(await backend.advanceSchedules('leader', epoch, [])).toBe(true);
    });

    it('refuses a caller that does not lead, or leads with another epoch, and changes nothing', async () => {
      const { backend } = store;
      const created = await backend.createSchedule(definition('s'));
      expect(await backend.advanceSchedules('leader', 1, [{ id: 's', generation: 1, updatedAt: await stamp(store.backend, 's'), state: runState() }])).toBe(false);
      const epoch = (await backend.acquireLeadership('leader', TTL))!;
      expect(await backend.advanceSchedules('other', epoch, [{ id: 's', generation: 1, updatedAt: await stamp(store.backend, 's'), state: runState() }])).toBe(false);
      expect(await backend.advanceSchedules('leader', epoch + 1, [{ id: 's', generation: 1, updatedAt: await stamp(store.backend, 's'), state: runState() }])).toBe(false);
      expect((await backend.getSchedule('s'))!.state).toEqual(created.state);
    });

    it('a deposed leader’s late write returns false and changes nothing', async () => {
      const { backend } = store;
      const created = await backend.createSchedule(definition('s'));
      const oldEpoch = (await backend.acquireLeadership('old', TTL))!;
      const later = (await store.later(TTL + 1000));
      const newEpoch = (await later.acquireLeadership('new', TTL))!;
      expect(newEpoch).toBe(oldEpoch + 1);
      expect(await later.advanceSchedules('old', oldEpoch, [{ id: 's', generation: 1, updatedAt: await stamp(store.backend, 's'), state: runState({ lastTaskId: 'stale' }) }])).toBe(false);
      expect((await later.getSchedule('s'))!.state).toEqual(created.state);
      expect(await later.advanceSchedules('new', newEpoch, [{ id: 's', generation: 1, updatedAt: await stamp(store.backend, 's'), state: runState({ lastTaskId: 'fresh' }) }])).toBe(true);
      expect((await later.getSchedule('s'))!.state.lastTaskId).toBe('fresh');
    });

    it('a leader whose lease has expired (not yet taken) is refused', async () => {
      const { backend } = store;
      await backend.createSchedule(definition('s'));
      const epoch = (await backend.acquireLeadership('leader', TTL))!;
      const later = (await store.later(TTL + 1000));
      expect(await later.advanceSchedules('leader', epoch, [{ id: 's', generation: 1, updatedAt: await stamp(store.backend, 's'), state: runState() }])).toBe(false);
    });

    it('ignores updates for a stale generation or a missing schedule, and writes the rest', async () => {
      const { backend } = store;
      await backend.createSchedule(definition('recreated'));
      await backend.deleteSchedule('recreated');
      const fresh = await backend.createSchedule(definition('recreated'));
      await backend.createSchedule(definition('kept'));
      const epoch = (await backend.acquireLeadership('leader', TTL))!;
      expect(await backend.advanceSchedules('leader', epoch, [
        { id: 'recreated', generation: 1, updatedAt: await stamp(store.backend, 'recreated'), state: runState({ lastTaskId: 'old-generation' }) },
        { id: 'gone', generation: 1, updatedAt: await stamp(store.backend, 'gone'), state: runState() },
        { id: 'kept', generation: 1, updatedAt: await stamp(store.backend, 'kept'), state: runState({ lastTaskId: 'written' }) },
      ])).toBe(true);
      expect((await backend.getSchedule('recreated'))!.state).toEqual(fresh.state);
      expect(await backend.getSchedule('gone')).toBeNull();
      expect((await backend.getSchedule('kept'))!.state.lastTaskId).toBe('written');
    });
  });
}
