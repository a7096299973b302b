/**
 * Missed fires come only from downtime: every scheduler stopped for 10 s,
 * then one started. The catch-up policy decides what happens to the fires of the gap — `latest`
 * enqueues the newest and records the rest missed, `all` enqueues them all, `skip` none — while
 * fires before and after the gap are enqueued on time.
 */
import { describe, expect, it } from 'vitest';
import { ScheduleService, type FireRecord } from '../../src/index.js';
import { BACKEND_KINDS } from '../cli/helpers.js';
import { useServers } from './servers.js';

const DOWN_MS = 10_000;
const GRACE_MS = 2_000;

describe.each(BACKEND_KINDS)('scheduler downtime on %s', (kind) => {
  const t = useServers(kind);

  it('all schedulers stopped for 10 s, then one started: the policy decides, and only then are fires missed', async () => {
    const { backend, servers } = t;
    const service = new ScheduleService(backend);
    for (const policy of ['latest', 'all', 'skip'] as const) {
      await service.create({ id: policy, cron: '* * * * * *', task: { type: 'tick' }, overlap: 'allow', catchUp: { policy } });
    }
    const [first, second] = await Promise.all([servers.start(), servers.start()]);
    // Fires due before a scheduler was up fall in downtime too (a slow start on a busy box can
    // pass the grace, and `skip` records them missed): the judged ones start after it.
    const upAt = await backend.now();
    await new Promise((r) => setTimeout(r, 3_000));
    // Both gone at once: one killed, one stopped gracefully.
    const killedAt = await backend.now();
    first.process.signal('SIGKILL');
    await servers.stopAll();
    expect(second.process.running).toBe(false);
    const downFrom = await backend.now();
    await new Promise((r) => setTimeout(r, DOWN_MS));
    const downUntil = await backend.now();
    await servers.start();
    await new Promise((r) => setTimeout(r, 4_000));
    await servers.stopAll();

    const fires = async (id: string): Promise<FireRecord[]> => (await service.fires(id, { limit: 100 })).reverse();
    // Once both were up, before the first one went (between the kill and the graceful stop a
    // standby may still be taking over).
    const before = (f: FireRecord) => f.nominalAt > upAt && f.nominalAt < killedAt - 1_000;
    const after = (f: FireRecord) => f.nominalAt > downUntil + 4_000;
    for (const policy of ['latest', 'all', 'skip']) {
      const all = await fires(policy);
      // Before the stop and after the restart every fire was enqueued, within 5 s (a loaded box
      // may pass the grace: the bound is against a fire left for the next tick, not a speed check).
      for (const f of all.filter((f) => before(f) || after(f))) {
        expect(f.outcome, `${policy} ${new Date(f.nominalAt).toISOString()}`).toBe('enqueued');
        expect(f.lagMs!).toBeLessThanOrEqual(5_000);
      }
      // The fires of the gap the store recorded (no check-in for longer than the lease).
      const { downtime } = await backend.listSchedulers();
      const gapOf = downtime!.gaps.find(([start, end]) => start < downUntil && end > downFrom);
      expect(gapOf, 'a recorded gap over the stop').toBeDefined();
      const [gapFrom, gapUntil] = gapOf!;
      const gap = all.filter((f) => f.nominalAt > gapFrom && f.nominalAt <= gapUntil);
      expect(gap.length, `${policy}: fires of the gap`).toBeGreaterThanOrEqual(6);
      const missed = gap.filter((f) => f.outcome === 'missed');
      const late = gap.filter((f) => f.outcome === 'enqueued' && f.lagMs! > GRACE_MS);
      expect(gap.every((f) => f.outcome === 'missed' || f.outcome === 'enqueued')).toBe(true);
      // The missed ones are the oldest: everything after the newest missed fire was enqueued, and
      // before it only fires on time — made by the last leader after its last check-in (where the
      // store dates the gap from) and before it stopped.
      const newestMissed = Math.max(-Infinity, ...missed.map((f) => f.nominalAt));
      expect(gap.filter((f) => f.outcome === 'enqueued' && f.nominalAt < newestMissed && f.lagMs! > GRACE_MS)).toEqual([]);
      const show = JSON.stringify(gap.map((f) => [f.nominalAt - gapFrom, f.outcome, f.lagMs]));
      if (policy === 'latest') {
        // The older fires missed; the first after them caught up, late; the rest were due within the grace when planned.
        expect(missed.length, show).toBeGreaterThanOrEqual(5);
        const caughtUp = gap.find((f) => f.nominalAt > newestMissed)!;
        expect(caughtUp.outcome, show).toBe('enqueued');
        expect(caughtUp.lagMs!, show).toBeGreaterThan(GRACE_MS);
        expect(late.filter((f) => f !== caughtUp && f.lagMs! > GRACE_MS + 500), show).toEqual([]);
      }
      if (policy === 'all') {
        expect(missed, show).toEqual([]);
        expect(late.length, show).toBeGreaterThanOrEqual(5);
      }
      if (policy === 'skip') {
        expect(missed.length, show).toBeGreaterThanOrEqual(5);
        // Nothing more than the grace late when planned was enqueued (the lag adds the time the enqueue took).
        expect(late.filter((f) => f.lagMs! > GRACE_MS + 500), show).toEqual([]);
      }
    }
  }, 60_000);
});
