/**
 * Scheduler failover costs no fires: three `taskline server` processes on one
 * store, a schedule firing every second and 50 every 2 s, the leader SIGKILLed and replaced every
 * ~7 s for ~60 s. Every nominal time gets exactly one task, none is recorded missed, none is
 * early, each is enqueued within 3 s; after each takeover the API and the metric name the real
 * leader. The lag of the fires right after each kill is printed (the benchmark has the p99).
 */
import { describe, expect, it } from 'vitest';
import { ScheduleService } from '../../src/index.js';
import { BACKEND_KINDS } from '../cli/helpers.js';
import { eventually } from '../helpers/processes.js';
import { expectEveryFire, medianMax, storedFires, useServers } from './servers.js';

const RUN_MS = 62_000;
const KILL_EVERY_MS = 7_000;
const EVERY_2S = 50;

describe.each(BACKEND_KINDS)('scheduler failover on %s: the leader SIGKILLed', (kind) => {
  const t = useServers(kind);

  it('every ~7 s for ~60 s: no duplicate, no second without a fire, nothing missed, every fire within 3 s', async () => {
    const { backend, servers } = t;
    await Promise.all([servers.start(), servers.start(), servers.start()]);
    const service = new ScheduleService(backend);
    await service.create({ id: 'every-second', cron: '* * * * * *', task: { type: 'tick' }, overlap: 'allow' });
    for (let i = 0; i < EVERY_2S; i++) {
      await service.create({ id: `two-${i}`, cron: '*/2 * * * * *', task: { type: 'tock', payload: { i } }, overlap: 'allow' });
    }
    const from = (await backend.now()) + 1_000;
    const started = Date.now();
    const kills: number[] = [];
    const replacements: Promise<unknown>[] = [];
    for (let k = 1; k * KILL_EVERY_MS <= RUN_MS - 4_000; k++) {
      await new Promise((r) => setTimeout(r, Math.max(0, started + k * KILL_EVERY_MS - Date.now())));
      const { server, epoch } = await servers.leader();
      // The API of every live server and the metric of another one name the same leader.
      const other = servers.live().find((s) => s !== server)!;
      expect((await servers.schedulers(other)).leader).toMatchObject({ id: server.id, epoch });
      expect(await servers.metricLeader(other)).toEqual([server.id]);
      kills.push(await backend.now());
      server.process.signal('SIGKILL');
      await server.process.exited;
      replacements.push(servers.start()); // three instances again
      // The next leader is another live process with a higher epoch.
      const next = await servers.leader();
      expect(next.server).not.toBe(server);
      expect(next.epoch).toBeGreaterThan(epoch);
    }
    await Promise.all(replacements);
    await new Promise((r) => setTimeout(r, 4_000));
    const to = (await backend.now()) - 3_500;
    await servers.stopAll();
    expect(kills.length).toBeGreaterThanOrEqual(7);

    const fires = await storedFires(backend);
    expectEveryFire(fires.get('every-second') ?? [], 'every-second', 1_000, from, to, 3_000);
    for (let i = 0; i < EVERY_2S; i++) expectEveryFire(fires.get(`two-${i}`) ?? [], `two-${i}`, 2_000, from, to, 3_000);
    const outcomes = new Set<string>();
    for (const id of ['every-second', 'two-0', `two-${EVERY_2S - 1}`]) for (const f of await service.fires(id, { limit: 200 })) outcomes.add(f.outcome);
    expect([...outcomes]).toEqual(['enqueued']);

    // The gap after each kill: the lag of the every-second fires due in the 3 s after it.
    const perKill = kills.map((at) => Math.max(0, ...(fires.get('every-second') ?? []).filter((f) => f.nominalAt > at && f.nominalAt <= at + 3_000).map((f) => f.createdAt - f.nominalAt)));
    const all = [...fires.values()].flat().filter((f) => f.nominalAt >= from && f.nominalAt <= to).map((f) => f.createdAt - f.nominalAt);
    const gap = medianMax(perKill);
    const lag = medianMax(all);
    console.log(`failover on ${kind}: ${kills.length} kills; worst lag after a kill median ${gap.median} ms, max ${gap.max} ms; all ${all.length} fires lag median ${lag.median} ms, max ${lag.max} ms`);
    await eventually(async () => (await backend.listSchedulers()).instances.length === 0, 10_000);
  }, 150_000);
});
