/**
 * Missed fires come only from downtime (DESIGN §6.2, §6.8): every scheduler stopped for 10 s,
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
    await new Promise((r) => setTimeout(r, 3_000));
    // Both gone at once: one killed, one stopped gracefully.
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
    const before = (f: FireRecord) => f.nominalAt < downFrom - 1_000;
    const after = (f: FireRecord) => f.nominalAt > downUntil + 4_000;
    for (const policy of ['latest', 'all', 'skip']) {
      const all = await fires(policy);
      // Before the stop and after the restart every fire was enqueued on time.
      for (const f of all.filter((f) => before(f) || after(f))) {
        expect(f.outcome, `${policy} ${new Date(f.nominalAt).toISOString()}`).toBe('enqueued');
        expect(f.lagMs!).toBeLessThan(1_000);
      }
      // The fires of the gap: recorded missed, or enqueued late (more than the grace).
      const gap = all.filter((f) => !before(f) && (f.outcome === 'missed' || f.lagMs! > GRACE_MS));
      expect(gap.length, `${policy}: fires of the gap`).toBeGreaterThanOrEqual(6);
      const enqueued = gap.filter((f) => f.outcome === 'enqueued');
      const missed = gap.filter((f) => f.outcome === 'missed');
      expect(enqueued.length + missed.length).toBe(gap.length);
      if (policy === 'latest') {
        // The newest fire of the gap is enqueued (late); every older one is recorded missed.
        expect(enqueued).toHaveLength(1);
        expect(enqueued[0].nominalAt).toBe(Math.max(...gap.map((f) => f.nominalAt)));
      }
      if (policy === 'all') expect(missed).toEqual([]);
      if (policy === 'skip') expect(enqueued).toEqual([]);
    }
  }, 60_000);
});
