import { describe, expect, it } from 'vitest';
import { parseCron, upcoming } from '../../src/scheduler/cron.js';
import { formatLocal, instantsForWall, offsetAt, wallClock } from '../../src/scheduler/timezone.js';

const local = (tz: string) => (t: number) => formatLocal(t, tz);
const after = (iso: string) => Date.parse(iso);

describe('cron expressions', () => {
  it('accepts 5 and 6 fields, L, W, #, descriptors and @every', () => {
    expect(upcoming(parseCron('*/15 * * * *'), after('2026-01-01T00:07:00Z'), 2).map((t) => new Date(t).toISOString())).toEqual([
      '2026-01-01T00:15:00.000Z',
      '2026-01-01T00:30:00.000Z',
    ]);
    expect(new Date(parseCron('30 * * * * *').next(after('2026-01-01T00:00:10Z'))!).toISOString()).toBe('2026-01-01T00:00:30.000Z');
    expect(new Date(parseCron('0 12 L * *').next(after('2026-02-01T00:00:00Z'))!).toISOString()).toBe('2026-02-28T12:00:00.000Z');
    expect(new Date(parseCron('0 9 * * 1#2').next(after('2026-03-01T00:00:00Z'))!).toISOString()).toBe('2026-03-09T09:00:00.000Z');
    expect(new Date(parseCron('0 9 15W * *').next(after('2026-03-01T00:00:00Z'))!).toISOString()).toBe('2026-03-16T09:00:00.000Z');
    expect(new Date(parseCron('@hourly').next(after('2026-01-01T10:20:00Z'))!).toISOString()).toBe('2026-01-01T11:00:00.000Z');
    expect(new Date(parseCron('@daily', 'Asia/Kolkata').next(after('2026-01-01T10:20:00Z'))!).toISOString()).toBe('2026-01-01T18:30:00.000Z');
    expect(upcoming(parseCron('@every 90s'), after('2026-01-01T00:00:00Z'), 2).map((t) => new Date(t).toISOString())).toEqual([
      '2026-01-01T00:01:30.000Z',
      '2026-01-01T00:03:00.000Z',
    ]);
    expect(parseCron('@every 1h30m', 'UTC', { anchor: after('2026-01-01T00:10:00Z') }).next(after('2026-01-01T00:10:00Z'))).toBe(after('2026-01-01T01:40:00Z'));
    // The examples.
    expect(formatLocal(parseCron('0 0 9 * * 1').next(after('2026-11-29T00:00:00Z'))!, 'UTC')).toBe('2026-11-30T09:00:00+00:00');
    expect(parseCron('0 0 */6 * * *').kind).toBe('interval');
    expect(parseCron('0 30 9 * * *').kind).toBe('fixed');
    expect(parseCron('0 0,30 9 * * *').kind).toBe('fixed');
  });

  it.each([
    ['not a cron', /it has 3 fields/],
    ['* * * *', /it has 4 fields/],
    ['* * * * * * *', /it has 7 fields/],
    ['61 * * * *', /invalid cron expression "61 \* \* \* \*"/],
    ['0 0 30 2 *', /never fires/],
    ['@fortnightly', /unknown descriptor/],
    ['@every 0s', /@every needs a duration/],
    ['@every soon', /@every needs a duration/],
    ['', /it is empty/],
  ])('rejects %j with a clear error naming the accepted forms', (expression, message) => {
    expect(() => parseCron(expression)).toThrow(message);
    try {
      parseCron(expression);
    } catch (error) {
      expect(error).toMatchObject({ code: 'TL_INVALID_CRON', message: expect.stringContaining('accepted: 5 fields') });
    }
  });

  it('rejects an unknown time zone', () => {
    expect(() => parseCron('* * * * *', 'Mars/Olympus')).toThrow(expect.objectContaining({ code: 'TL_INVALID_TIMEZONE' }));
    expect(() => parseCron('* * * * *', '')).toThrow(expect.objectContaining({ code: 'TL_INVALID_TIMEZONE' }));
  });
});

describe('DST rules, explicit cases', () => {
  it('America/New_York: 02:30 daily fires at 03:30 on the spring-forward day, once on the fall-back day', () => {
    const tz = 'America/New_York';
    const spring = upcoming(parseCron('0 30 2 * * *', tz), after('2026-03-07T12:00:00Z'), 3).map(local(tz));
    expect(spring).toEqual(['2026-03-08T03:30:00-04:00', '2026-03-09T02:30:00-04:00', '2026-03-10T02:30:00-04:00']);
    const fall = upcoming(parseCron('0 30 1 * * *', tz), after('2026-10-31T12:00:00Z'), 2).map(local(tz));
    expect(fall).toEqual(['2026-11-01T01:30:00-04:00', '2026-11-02T01:30:00-05:00']);
  });

  it('America/New_York: an hourly expression skips the missing hour and fires in both copies of the repeated one', () => {
    const tz = 'America/New_York';
    expect(upcoming(parseCron('0 30 * * * *', tz), after('2026-03-08T05:00:00Z'), 3).map(local(tz))).toEqual([
      '2026-03-08T00:30:00-05:00',
      '2026-03-08T01:30:00-05:00',
      '2026-03-08T03:30:00-04:00',
    ]);
    expect(upcoming(parseCron('0 30 * * * *', tz), after('2026-11-01T04:00:00Z'), 4).map(local(tz))).toEqual([
      '2026-11-01T00:30:00-04:00',
      '2026-11-01T01:30:00-04:00',
      '2026-11-01T01:30:00-05:00',
      '2026-11-01T02:30:00-05:00',
    ]);
  });

  it('Europe/London: 01:30 daily shifts to 02:30 in spring and fires once in autumn', () => {
    const tz = 'Europe/London';
    expect(upcoming(parseCron('30 1 * * *', tz), after('2026-03-28T12:00:00Z'), 2).map(local(tz))).toEqual([
      '2026-03-29T02:30:00+01:00',
      '2026-03-30T01:30:00+01:00',
    ]);
    expect(upcoming(parseCron('30 1 * * *', tz), after('2026-10-24T12:00:00Z'), 2).map(local(tz))).toEqual([
      '2026-10-25T01:30:00+01:00',
      '2026-10-26T01:30:00+00:00',
    ]);
  });

  it('Australia/Lord_Howe: the 30-minute shift', () => {
    const tz = 'Australia/Lord_Howe';
    // Spring forward on 2026-10-04: 02:00 → 02:30.
    expect(upcoming(parseCron('0 2 * * *', tz), after('2026-10-02T12:00:00Z'), 3).map(local(tz))).toEqual([
      '2026-10-03T02:00:00+10:30',
      '2026-10-04T02:30:00+11:00',
      '2026-10-05T02:00:00+11:00',
    ]);
    // Fall back on 2026-04-05: 02:00 → 01:30; 01:45 happens twice.
    expect(upcoming(parseCron('45 1 * * *', tz), after('2026-04-03T12:00:00Z'), 3).map(local(tz))).toEqual([
      '2026-04-04T01:45:00+11:00',
      '2026-04-05T01:45:00+11:00',
      '2026-04-06T01:45:00+10:30',
    ]);
    expect(upcoming(parseCron('*/15 1 * * *', tz), after('2026-04-04T13:59:00Z'), 6).map(local(tz))).toEqual([
      '2026-04-05T01:00:00+11:00',
      '2026-04-05T01:15:00+11:00',
      '2026-04-05T01:30:00+11:00',
      '2026-04-05T01:45:00+11:00',
      '2026-04-05T01:30:00+10:30',
      '2026-04-05T01:45:00+10:30',
    ]);
  });

  it('America/Sao_Paulo (no DST since 2019) and Asia/Kolkata (none) fire every day at the same local time', () => {
    for (const tz of ['America/Sao_Paulo', 'Asia/Kolkata']) {
      const times = upcoming(parseCron('0 0 * * *', tz), after('2026-01-01T00:00:00Z'), 365);
      expect(new Set(times.map((t) => offsetAt(t, tz))).size).toBe(1);
      expect(times.every((t) => formatLocal(t, tz).slice(11, 19) === '00:00:00')).toBe(true);
    }
    // Sao Paulo's last DST (2018-11-04 00:00 → 01:00): midnight did not exist and fired at 01:00.
    expect(upcoming(parseCron('0 0 * * *', 'America/Sao_Paulo'), after('2018-11-02T12:00:00Z'), 2).map(local('America/Sao_Paulo'))).toEqual([
      '2018-11-03T00:00:00-03:00',
      '2018-11-04T01:00:00-02:00',
    ]);
  });
});

/** The instants where a zone's offset changes, found day by day over [from, to). */
function transitions(tz: string, from: number, to: number): number[] {
  const found: number[] = [];
  let previous = offsetAt(from, tz);
  for (let t = from + 86_400_000; t < to; t += 86_400_000) {
    const offset = offsetAt(t, tz);
    if (offset !== previous) {
      let lo = t - 86_400_000;
      let hi = t;
      while (hi - lo > 60_000) {
        const mid = Math.floor((lo + hi) / 2);
        if (offsetAt(mid, tz) === previous) lo = mid;
        else hi = mid;
      }
      found.push(hi);
      previous = offset;
    }
  }
  return found;
}

describe('DST property test over every time zone', () => {
  const zones = Intl.supportedValuesOf('timeZone');
  const from = after('2026-01-01T00:00:00Z');
  const to = after('2028-01-01T00:00:00Z');

  it(`covers ${zones.length} zones`, () => {
    expect(zones.length).toBeGreaterThan(300);
  });

  it('a fixed-time daily expression fires once per local calendar day for two years, strictly increasing', () => {
    for (const tz of zones) {
      for (const expression of ['0 30 2 * * *', '0 0 0 * * *', '0 45 1 * * *']) {
        const cron = parseCron(expression, tz);
        const days = new Set<string>();
        let previous = from;
        for (;;) {
          const next = cron.next(previous);
          if (next === null || next >= to) break;
          expect(next).toBeGreaterThan(previous);
          const day = formatLocal(next, tz).slice(0, 10);
          // Once per day: never two fires on one local day.
          if (days.has(day)) throw new Error(`${tz} ${expression}: two fires on ${day}`);
          days.add(day);
          previous = next;
        }
        // Every local calendar day in the range has its fire (a gap shifts it, never drops it).
        const firstDay = Date.parse(formatLocal(cron.next(from)!, tz).slice(0, 10));
        const lastDay = Date.parse(formatLocal(previous, tz).slice(0, 10));
        const expected = Math.round((lastDay - firstDay) / 86_400_000) + 1;
        if (days.size !== expected) throw new Error(`${tz} ${expression}: ${days.size} fires for ${expected} days`);
      }
    }
  }, 120_000);

  it('an interval expression never invents a non-existent local time and fires for every real instant near each transition', () => {
    const cron = (tz: string) => parseCron('0 */15 * * * *', tz);
    let checked = 0;
    for (const tz of zones) {
      const schedule = cron(tz);
      for (const transition of transitions(tz, from, to)) {
        const start = transition - 4 * 3_600_000;
        const end = transition + 4 * 3_600_000;
        const fired: number[] = [];
        let previous = start;
        for (;;) {
          const next = schedule.next(previous)!;
          expect(next).toBeGreaterThan(previous);
          if (next > end) break;
          fired.push(next);
          previous = next;
        }
        // Every fire shows a local time the expression matches, and that local time exists.
        for (const t of fired) {
          const wall = wallClock(t, tz);
          expect(new Date(wall).getUTCMinutes() % 15).toBe(0);
          expect(new Date(wall).getUTCSeconds()).toBe(0);
          const mapping = instantsForWall(wall, tz);
          expect(mapping.kind).toBe('exists');
        }
        // And every real instant in the window whose local time matches is a fire.
        const expected: number[] = [];
        for (let t = Math.ceil((start + 1) / 60_000) * 60_000; t <= end; t += 60_000) {
          const wall = new Date(wallClock(t, tz));
          if (wall.getUTCMinutes() % 15 === 0 && wall.getUTCSeconds() === 0) expected.push(t);
        }
        expect(fired).toEqual(expected);
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(100);
  }, 120_000);
});
