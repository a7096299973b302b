import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisBackend } from '../../src/backend/redis/redis-backend.js';
import { Client, Worker } from '../../src/index.js';
import { splitLanes } from '../../src/worker/processor.js';
import { RedisServer } from '../helpers/redis-server.js';

describe('lanes', () => {
  it('split the slots as evenly as possible, none empty', () => {
    const capacities = (concurrency: number, lanes: number) => splitLanes(concurrency, lanes).map((l) => l.capacity);
    expect(capacities(50, 2)).toEqual([25, 25]);
    expect(capacities(5, 2)).toEqual([3, 2]);
    expect(capacities(1, 2)).toEqual([1]);
    expect(capacities(7, 1)).toEqual([7]);
    expect(capacities(9_000, 2)).toEqual([4_500, 4_500]);
  });
});

// On a remote store the worker's slots are split into two lanes with claims of their own
// (processor.ts, Lane): every slot is still used, and an idle worker still makes one wait.
describe('a Redis worker with lanes', () => {
  let server: RedisServer | null = null;
  const closers: (() => Promise<unknown>)[] = [];

  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    await server?.stop();
    server = null;
  });

  async function open(): Promise<{ backend: RedisBackend; client: Client; admin: Redis }> {
    server ??= await RedisServer.start();
    const backend = await RedisBackend.connect(server.url, { prefix: 'lanes' });
    const client = new Client(backend);
    const admin = new Redis(server.url);
    closers.push(() => backend.close(), () => client.close(), async () => admin.disconnect());
    return { backend, client, admin };
  }

  it('runs as many tasks at once as its concurrency, across both lanes', async () => {
    const { backend, client } = await open();
    const concurrency = 5;
    let started = 0;
    let release!: () => void;
    const allStarted = new Promise<void>((resolve) => (release = resolve));
    const worker = new Worker(backend, { concurrency, idleWait: 200 });
    closers.push(() => worker.stop({ timeout: 1000 }));
    worker.handle('wait', async () => {
      if (++started === concurrency) release();
      // Each task ends only once all of them run at the same time.
      await allStarted;
    });
    const ids = (await client.enqueueMany(Array.from({ length: concurrency }, (_, i) => ({ type: 'wait', payload: { i } })))).map((t) => t.id);
    await worker.start();
    for (const id of ids) await client.waitFor(id, { timeout: 5000 });
    expect(started).toBe(concurrency);
  });

  it('waits for work with one blocking call at a time while idle, not one per lane', async () => {
    const { backend, admin } = await open();
    const worker = new Worker(backend, { concurrency: 10, idleWait: 200 });
    closers.push(() => worker.stop({ timeout: 1000 }));
    worker.handle('noop', () => undefined);
    await worker.start();
    await new Promise((r) => setTimeout(r, 300));
    await admin.config('RESETSTAT');
    await new Promise((r) => setTimeout(r, 1000));
    const stats = await admin.info('commandstats');
    const calls = (command: string) => Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
    // 1,000 ms of 200 ms waits: about 5 (one lane's worth), not 10; and one claim after each.
    expect(calls('bzpopmin')).toBeGreaterThanOrEqual(3);
    expect(calls('bzpopmin')).toBeLessThanOrEqual(7);
    expect(calls('evalsha')).toBeLessThanOrEqual(calls('bzpopmin') + 1);
    // And it still wakes for new work.
    const client = new Client(backend);
    closers.push(() => client.close());
    const info = await client.enqueue('noop', {});
    await client.waitFor(info.id, { timeout: 5000 });
  });
});
