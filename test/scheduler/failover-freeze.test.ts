/**
 * A frozen leader is deposed: the leading `taskline server` is SIGSTOPped for
 * longer than its lease and then SIGCONTed. Meanwhile the others fire every fire and one takes
 * the lease with a higher epoch; once awake, the old leader stands by, fires nothing twice, and
 * nothing it wrote moved the schedule's run state back.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ScheduleService } from '../../src/index.js';
import { BACKEND_KINDS } from '../cli/helpers.js';
import { eventually } from '../helpers/processes.js';
import { REDIS_URL } from '../helpers/stores.js';
import { CuttableProxy, expectEveryFire, storedFires, useServers } from './servers.js';

const LEASE_MS = 3_000;
const FROZEN_MS = 8_000;

describe.each(BACKEND_KINDS)('scheduler failover on %s: the leader frozen (SIGSTOP)', (kind) => {
  const t = useServers(kind);

  it('past its lease: the others fire meanwhile, one takes over; awake, the old leader writes nothing and fires nothing twice', async () => {
    const { backend, servers } = t;
    await Promise.all([servers.start(), servers.start(), servers.start()]);
    const service = new ScheduleService(backend);
    await service.create({ id: 'every-second', cron: '* * * * * *', task: { type: 'tick' }, overlap: 'allow' });
    await service.create({ id: 'skip-overlap', cron: '* * * * * *', task: { type: 'tick' }, overlap: 'skip' });
    const from = (await backend.now()) + 1_000;
    await new Promise((r) => setTimeout(r, 3_000));
    const { server: frozen, epoch } = await servers.leader();
    servers.freeze(frozen);
    const stoppedAt = Date.now();
    // Another instance takes the lease once the frozen one's has run out.
    const next = await servers.leader({ except: frozen, timeoutMs: LEASE_MS + 5_000 });
    expect(next.epoch).toBeGreaterThan(epoch);
    await new Promise((r) => setTimeout(r, Math.max(0, stoppedAt + FROZEN_MS - Date.now())));
    const before = (await backend.getSchedule('every-second'))!.state.watermark;
    servers.thaw(frozen);
    // Awake, it learns at its first check-in that another leads, and says so.
    await frozen.process.waitFor(/stands by \(another scheduler leads\)/, 10_000);
    await new Promise((r) => setTimeout(r, 3_000));
    const reply = await servers.schedulers(frozen);
    expect(reply.leader).toMatchObject({ id: next.server.id, epoch: next.epoch });
    expect(reply.schedulers.find((s) => s.id === frozen.id)).toMatchObject({ leader: false, epoch: null });
    // Its late writes (if any reached the store) were refused: the run state only moved forward.
    const after = await backend.getSchedule('every-second');
    expect(after!.state.watermark).toBeGreaterThanOrEqual(before);
    const to = (await backend.now()) - 3_500;
    await servers.stopAll();

    const fires = await storedFires(backend);
    expectEveryFire(fires.get('every-second') ?? [], 'every-second', 1_000, from, to, 3_000);
    const history = await service.fires('every-second', { limit: 100 });
    expect(new Set(history.map((f) => f.outcome))).toEqual(new Set(['enqueued']));
    // skip-overlap: the first run stays queued (no worker), so every later fire is skipped, never a second task.
    expect(fires.get('skip-overlap')).toHaveLength(1);
    const skipped = await service.fires('skip-overlap', { limit: 100 });
    expect(skipped.filter((f) => f.outcome === 'enqueued')).toHaveLength(1);
    expect(skipped.every((f) => f.outcome === 'enqueued' || f.outcome === 'skipped:overlap')).toBe(true);
    await eventually(async () => (await backend.listSchedulers()).instances.length === 0, 10_000);
  }, 90_000);
});

describe('scheduler failover on redis: the leader cut off from the store', () => {
  const t = useServers('redis');
  let proxy: CuttableProxy;

  beforeEach(async () => {
    const target = new URL(REDIS_URL);
    proxy = await CuttableProxy.start({ host: target.hostname, port: Number(target.port || 6379) });
  });

  afterEach(async () => {
    await proxy.close();
  });

  it('its connection cut for 8 s: the others take over and fire meanwhile; back, it stands by and fires nothing twice', async () => {
    const { store, backend, servers } = t;
    const service = new ScheduleService(backend);
    await service.create({ id: 'every-second', cron: '* * * * * *', task: { type: 'tick' }, overlap: 'allow' });
    const prefix = store.args[store.args.indexOf('--prefix') + 1];
    // Through the proxy, and first, so that it leads.
    const cutOff = await servers.start({ backendArgs: ['--backend', `redis://127.0.0.1:${proxy.port}`, '--prefix', prefix] });
    expect((await servers.leader()).server).toBe(cutOff);
    await Promise.all([servers.start(), servers.start()]);
    const from = (await backend.now()) + 1_000;
    await new Promise((r) => setTimeout(r, 2_000));
    proxy.sever();
    const next = await servers.leader({ except: cutOff, timeoutMs: LEASE_MS + 5_000 });
    expect(next.server).not.toBe(cutOff);
    await new Promise((r) => setTimeout(r, 6_000));
    proxy.restore();
    await cutOff.process.waitFor(/stands by \(another scheduler leads\)/, 15_000);
    await new Promise((r) => setTimeout(r, 3_000));
    expect((await servers.schedulers(cutOff)).leader).toMatchObject({ id: next.server.id, epoch: next.epoch });
    const to = (await backend.now()) - 3_500;
    await servers.stopAll();
    const fires = await storedFires(backend);
    expectEveryFire(fires.get('every-second') ?? [], 'every-second', 1_000, from, to, 3_000);
    expect(new Set((await service.fires('every-second', { limit: 100 })).map((f) => f.outcome))).toEqual(new Set(['enqueued']));
  }, 90_000);
});
