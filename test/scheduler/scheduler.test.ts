/** The scheduler in one process on a real store: fires, catch-up, overlap, operations, clock skew. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Client, Scheduler, ScheduleService, Worker, type Backend } from '../../src/index.js';
import type { FireEvent } from '../../src/scheduler/scheduler.js';
import { STORES, type TestStore } from '../helpers/stores.js';
import { eventually } from '../helpers/processes.js';

describe.each(STORES)('scheduler on %s', (_name, openStore) => {
  let store: TestStore;
  let backend: Backend;
  let service: ScheduleService;
  let client: Client;
  const running: { stop(): Promise<void> }[] = [];

  beforeEach(async () => {
    store = await openStore();
    backend = store.backend;
    service = new ScheduleService(backend);
    client = new Client(backend);
  });

  afterEach(async () => {
    for (const r of running.splice(0).reverse()) await r.stop();
    await client.close();
    await store.cleanup();
  });

  function startScheduler(options: ConstructorParameters<typeof Scheduler>[1] = {}, on?: (e: FireEvent) => void): Scheduler {
    const scheduler = new Scheduler(backend, { leaseMs: 2000, ...options });
    if (on) scheduler.on('fire', on);
    scheduler.start();
    running.push(scheduler);
    return scheduler;
  }

  async function tasksOf(scheduleId: string): Promise<{ id: string; nominal: number }[]> {
    const queue = await backend.getQueue('default');
    if (!queue) return [];
    const all = [];
    for (const state of ['queued', 'scheduled', 'running', 'completed', 'cancelled', 'dead', 'retrying'] as const) {
      let cursor: string | undefined;
      do {
        const page = await backend.listTasks('default', state, { limit: 1000, cursor });
        all.push(...page.tasks);
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
    }
    return all
      .filter((t) => t.id.startsWith(`schedule:${scheduleId}:`) && !t.id.endsWith(':manual'))
      .map((t) => ({ id: t.id, nominal: Number(t.id.split(':')[3]) }));
  }

  it('fires a schedule every second, within a second of the nominal time, one task per fire', async () => {
    await service.create({ id: 'tick', cron: '* * * * * *', task: { type: 'tick', payload: { n: 1 } }, overlap: 'allow' });
    const lags: number[] = [];
    startScheduler({}, (e) => lags.push(e.lagMs));
    startScheduler();
    await eventually(async () => (await tasksOf('tick')).length >= 3, 10_000, 50);
    const tasks = await tasksOf('tick');
    const nominals = tasks.map((t) => t.nominal).sort();
    expect(new Set(nominals).size).toBe(nominals.length);
    for (let i = 1; i < nominals.length; i++) expect(nominals[i] - nominals[i - 1]).toBe(1000);
    expect(Math.max(...lags)).toBeLessThan(1000);
    const task = await client.getTask(tasks[0].id);
    expect(task).toMatchObject({ type: 'tick', payload: { n: 1 }, links: { scheduleFireId: tasks[0].id } });
    const fires = await service.fires('tick');
    expect(fires[0]).toMatchObject({ outcome: 'enqueued', taskId: fires[0].fireId });
    expect(fires[0].lagMs).toBeGreaterThanOrEqual(0);
  });

  it('two schedulers whose host clocks differ by 30 s fire each nominal time once, on time', async () => {
    await service.create({ id: 'skew', cron: '* * * * * *', task: { type: 'tick' }, overlap: 'allow' });
    const ahead = { now: () => Date.now() + 30_000 };
    const behind = { now: () => Date.now() - 30_000 };
    const events: FireEvent[] = [];
    startScheduler({ clock: ahead, leaseMs: 1000 }, (e) => events.push(e));
    startScheduler({ clock: behind, leaseMs: 1000 }, (e) => events.push(e));
    await eventually(async () => (await tasksOf('skew')).length >= 4, 10_000, 50);
    const nominals = (await tasksOf('skew')).map((t) => t.nominal);
    expect(new Set(nominals).size).toBe(nominals.length);
    // Fires happen at the store's time: never early, never caught up as late.
    for (const e of events) expect(e.lagMs).toBeGreaterThanOrEqual(0);
    expect(events.every((e) => e.outcome === 'enqueued')).toBe(true);
  });

  it.each(['skip', 'latest', 'all'] as const)('catch-up %s after downtime: missed fires are enqueued or recorded as missed, per the policy', async (policy) => {
    await service.create({ id: 'c', cron: '* * * * * *', task: { type: 't' }, overlap: 'allow', catchUp: { policy, window: 5_500 } });
    // Downtime: the store's clock is 8 s ahead when the scheduler (re)starts.
    const later = (await store.reopen({ clockOffsetMs: 8_000 }));
    const events: FireEvent[] = [];
    const scheduler = new Scheduler(later, { leaseMs: 5000 });
    scheduler.on('fire', (e) => events.push(e));
    scheduler.start();
    running.push(scheduler);
    await eventually(async () => events.length >= 8, 10_000, 25);
    await scheduler.stop();
    // The first plan's fires: everything between the creation and the store's "now".
    const backlog = events.filter((e) => e.lagMs > 2_000);
    const inWindow = backlog.filter((e) => e.lagMs <= 5_500);
    const outside = backlog.filter((e) => e.lagMs > 5_500);
    expect(inWindow.length).toBeGreaterThanOrEqual(3);
    expect(outside.length).toBeGreaterThanOrEqual(1);
    expect(outside.every((e) => e.outcome === 'missed')).toBe(true);
    const enqueued = inWindow.filter((e) => e.outcome === 'enqueued').map((e) => e.nominalAt);
    const latest = Math.max(...inWindow.map((e) => e.nominalAt));
    if (policy === 'skip') expect(enqueued).toEqual([]);
    if (policy === 'latest') expect(enqueued).toEqual([latest]);
    if (policy === 'all') expect(enqueued.length).toBe(inWindow.length);
    // Nothing dropped silently: every backlog fire is in the history, as enqueued or missed.
    const history = await service.fires('c', { limit: 100 });
    for (const e of backlog) expect(history.find((f) => f.fireId === e.fireId)?.outcome).toBe(e.outcome);
  });

  it('overlap skip: no second run while the previous is still running', async () => {
    await service.create({ id: 'slow', cron: '* * * * * *', task: { type: 'slow' }, overlap: 'skip' });
    const worker = new Worker(backend, { concurrency: 5, idleWait: 500, shutdownTimeout: 200 });
    let concurrent = 0;
    let maxConcurrent = 0;
    worker.handle('slow', async () => {
      concurrent += 1;
      maxConcurrent = Math.max(maxConcurrent, concurrent);
      await new Promise((r) => setTimeout(r, 2500));
      concurrent -= 1;
    });
    await worker.start();
    running.push(worker);
    const events: FireEvent[] = [];
    startScheduler({}, (e) => events.push(e));
    await eventually(async () => events.filter((e) => e.outcome === 'skipped:overlap').length >= 2, 10_000, 50);
    expect(maxConcurrent).toBe(1);
  });

  it('overlap bufferOne holds one fire until the previous run finishes; cancelPrevious cancels it', async () => {
    await service.create({ id: 'buf', cron: '* * * * * *', task: { type: 'slow' }, overlap: 'bufferOne' });
    await service.create({ id: 'cancel', cron: '* * * * * *', task: { type: 'slow-cancel', queue: 'other' }, overlap: 'cancelPrevious' });
    const worker = new Worker(backend, { concurrency: 5, idleWait: 500, shutdownTimeout: 200, queues: ['default', 'other'] });
    const started: string[] = [];
    worker.handle('slow', async (_p, ctx) => {
      started.push(ctx.task.id);
      await new Promise((r) => setTimeout(r, 2200));
    });
    worker.handle('slow-cancel', async (_p, ctx) => {
      await new Promise((resolve, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error)));
    });
    await worker.start();
    running.push(worker);
    startScheduler();
    await eventually(async () => started.length >= 2, 12_000, 50);
    const history = await service.fires('buf', { limit: 50 });
    expect(history.some((f) => f.outcome === 'skipped:overlap')).toBe(true);
    // The buffered fire ran after the first finished, not alongside it.
    const [first, second] = await Promise.all(started.slice(0, 2).map((id) => client.getTask(id)));
    expect(second!.startedAt!).toBeGreaterThanOrEqual(first!.finishedAt!);
    const cancelled = (await backend.listTasks('other', 'cancelled')).tasks;
    expect(cancelled.length).toBeGreaterThanOrEqual(1);
  });

  it('trigger runs now (also while paused) without moving the watermark; backfill fills a past range once', async () => {
    await service.create({ id: 'ops', cron: '0 0 * * * *', task: { type: 'hourly' }, paused: true, pauseNote: 'maintenance' });
    const before = await service.get('ops');
    expect(before).toMatchObject({ paused: true, pauseNote: 'maintenance', generation: 1 });
    const result = await service.trigger('ops');
    expect(result.outcome).toBe('enqueued');
    expect(await client.getTask(result.taskId!)).toMatchObject({ type: 'hourly', state: 'queued' });
    expect((await service.get('ops')).state.watermark).toBe(before.state.watermark);
    const now = await backend.now();
    const from = now - 3 * 3_600_000;
    const filled = await service.backfill('ops', { from, to: now });
    expect(filled.map((f) => f.outcome)).toEqual(['enqueued', 'enqueued', 'enqueued']);
    const again = await service.backfill('ops', { from, to: now });
    expect(again.map((f) => f.outcome)).toEqual(['exists', 'exists', 'exists']);
    await expect(service.backfill('ops', { from: now, to: now + 3_600_000 })).rejects.toMatchObject({ code: 'TL_INVALID_SCHEDULE' });
    const resumed = await service.resume('ops');
    expect(resumed).toMatchObject({ paused: false, pauseNote: null });
  });

  it('an update first handles the old definition\'s due fires, so none is dropped silently', async () => {
    const created = await service.create({ id: 'upd', cron: '* * * * * *', task: { type: 'old' }, overlap: 'allow', catchUp: { policy: 'skip' } });
    // No scheduler ran; 4 s later (store clock) the schedule is changed.
    const later = await store.reopen({ clockOffsetMs: 4_000 });
    const laterService = new ScheduleService(later);
    await laterService.update('upd', { cron: '0 0 * * * *', task: { type: 'new' } });
    const history = await laterService.fires('upd', { limit: 50 });
    const nominals = history.map((f) => f.nominalAt).sort((a, b) => a - b);
    // Every second between the creation and the update has a record (enqueued or missed).
    expect(nominals.length).toBeGreaterThanOrEqual(3);
    expect(nominals[nominals.length - 1] - nominals[0]).toBe((nominals.length - 1) * 1000);
    expect(nominals[0] - created.state.watermark).toBeLessThanOrEqual(1000);
    expect(history.some((f) => f.outcome === 'missed')).toBe(true);
    expect(history.some((f) => f.outcome === 'enqueued')).toBe(true);
    const after = await laterService.get('upd');
    expect(after).toMatchObject({ cron: '0 0 * * * *', task: { type: 'new' }, generation: 1 });
  });

  it('pause until a time that is not in the future, or not a time, is refused and changes nothing', async () => {
    await service.create({ id: 'p', cron: '0 0 * * * *', task: { type: 't' } });
    const now = await backend.now();
    await expect(service.pause('p', { until: now - 60_000 })).rejects.toMatchObject({ code: 'TL_INVALID_SCHEDULE', message: expect.stringMatching(/must be in the future/) });
    await expect(service.pause('p', { until: '2001-01-01T00:00:00Z' })).rejects.toMatchObject({ code: 'TL_INVALID_SCHEDULE' });
    await expect(service.pause('p', { until: 1e300 })).rejects.toMatchObject({ code: 'TL_INVALID_SCHEDULE', message: expect.stringMatching(/^pause until must be a time .* from \d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d, got 1e\+300$/) });
    await expect(service.pause('p', { until: now + 60_000, note: 'x\ud800' })).rejects.toMatchObject({ code: 'TL_INVALID_SCHEDULE', message: expect.stringMatching(/^pause note must be/) });
    expect((await service.get('p')).paused).toBe(false);
    expect((await service.pause('p', { until: now + 60_000 })).pausedUntil).toBe(now + 60_000);
  });

  it('preview lists the next fires in local time and UTC', async () => {
    const times = await service.preview({ cron: '0 30 2 * * *', timezone: 'America/New_York', count: 2, from: Date.parse('2026-03-07T12:00:00Z') });
    expect(times.map((t) => [t.local, t.utc])).toEqual([
      ['2026-03-08T03:30:00-04:00', '2026-03-08T07:30:00.000Z'],
      ['2026-03-09T02:30:00-04:00', '2026-03-09T06:30:00.000Z'],
    ]);
  });

  it('delete and re-create bumps the generation, so fire ids never collide', async () => {
    await service.create({ id: 'gen', cron: '* * * * * *', task: { type: 't' } });
    await service.delete('gen');
    const again = await service.create({ id: 'gen', cron: '* * * * * *', task: { type: 't' } });
    expect(again.generation).toBe(2);
    await expect(service.delete('nope')).rejects.toMatchObject({ code: 'TL_SCHEDULE_NOT_FOUND' });
    await expect(service.create({ id: 'gen', cron: '* * * * *', task: { type: 't' } })).rejects.toMatchObject({ code: 'TL_SCHEDULE_CONFLICT' });
  });

  it.each([
    [{ id: 'x', cron: 'nope', task: { type: 't' } }, 'TL_INVALID_CRON'],
    [{ id: 'x', cron: 'constructor', task: { type: 't' } }, 'TL_INVALID_CRON'],
    [{ id: 'x', cron: '__proto__', task: { type: 't' } }, 'TL_INVALID_CRON'],
    [{ id: 'x', cron: '@every 999999999h', task: { type: 't' } }, 'TL_INVALID_CRON'],
    [{ id: 'x', cron: '0 0 30 2 *', task: { type: 't' } }, 'TL_INVALID_CRON'],
    [{ id: 'x', cron: '* * * * *', timezone: 'Moon/Base', task: { type: 't' } }, 'TL_INVALID_TIMEZONE'],
    [{ id: 'x', cron: '* * * * *', task: { type: 't' }, startAt: '2026-02-01T00:00:00Z', endAt: '2026-01-01T00:00:00Z' }, 'TL_INVALID_SCHEDULE'],
    [{ id: 'bad id!', cron: '* * * * *', task: { type: 't' } }, 'TL_INVALID_SCHEDULE'],
    [{ id: 'x', cron: '* * * * *', task: {} }, 'TL_INVALID_ARGUMENT'],
    [{ id: 'x', cron: '* * * * *', task: { type: 't', queue: 'no spaces' } }, 'TL_INVALID_ARGUMENT'],
    [{ id: 'x', cron: '* * * * *', task: { type: 't' }, overlap: 'sometimes' }, 'TL_INVALID_SCHEDULE'],
    [{ id: 'x', cron: '* * * * *', task: { type: 't' }, catchUp: { policy: 'most' } }, 'TL_INVALID_SCHEDULE'],
    [{ id: 'x', cron: '* * * * *', task: { type: 't' }, color: 'red' }, 'TL_INVALID_SCHEDULE'],
    [{ id: 'x', cron: '* * * * *', task: { type: 't', payload: { f: Number.NaN } } }, 'TL_PAYLOAD_NOT_JSON'],
    // Values that could be stored but not read back (findings 1 and 3).
    [{ id: 'x', cron: '* * * * *', task: { type: 't' }, endAt: 1e300 }, 'TL_INVALID_SCHEDULE'],
    [{ id: 'x', cron: '* * * * *', task: { type: 't' }, startAt: 1e300 }, 'TL_INVALID_SCHEDULE'],
    [{ id: 'x', cron: '* * * * *', task: { type: 't' }, startAt: -1 }, 'TL_INVALID_SCHEDULE'],
    [{ id: 'x', cron: '* * * * *', task: { type: 't' }, endAt: '+275760-09-13T00:00:00.000Z' }, 'TL_INVALID_SCHEDULE'],
    [{ id: 'x', cron: '* * * * *', task: { type: 't' }, jitter: 1e300 }, 'TL_INVALID_SCHEDULE'],
    [{ id: 'x', cron: '* * * * *', task: { type: 't' }, catchUp: { window: 8640000000000001 } }, 'TL_INVALID_SCHEDULE'],
    [{ id: 'x', cron: '* * * * *\ud800', task: { type: 't' } }, 'TL_INVALID_CRON'],
    [{ id: 'x', cron: `* * * * * ${'1'.repeat(600)}`, task: { type: 't' } }, 'TL_INVALID_CRON'],
    [{ id: 'x', cron: '* * * * *', timezone: '\ud800', task: { type: 't' } }, 'TL_INVALID_TIMEZONE'],
    [{ id: 'x', cron: '* * * * *', task: { type: 't\udc00' } }, 'TL_INVALID_ARGUMENT'],
    [{ id: 'x', cron: '* * * * *', task: { type: 't', headers: { h: '\ud800' } } }, 'TL_INVALID_OPTION'],
    [{ id: 'x', cron: '* * * * *', task: { type: 't' }, paused: true, pauseNote: '\ud800' }, 'TL_INVALID_SCHEDULE'],
  ])('rejects %j with %s and stores nothing', async (input, code) => {
    await expect(service.create(input as never)).rejects.toMatchObject({ code });
    expect(await service.list()).toEqual([]);
  });
});
