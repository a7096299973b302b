/** Redis going away: clear errors for producers, and workers that reconnect by themselves. */
import { afterEach, describe, expect, it } from 'vitest';
import { Client, connect, Worker, type Backend } from '../../src/index.js';
import { RedisServer, freePort } from '../helpers/redis-server.js';
import { eventually } from '../helpers/processes.js';

describe('redis outages', () => {
  let server: RedisServer | null = null;
  const cleanups: (() => Promise<void>)[] = [];

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await server?.destroy();
    server = null;
  });

  it('connect() to a Redis that is not there fails with TL_STORE_UNAVAILABLE', async () => {
    const port = await freePort();
    const started = Date.now();
    await expect(connect(`redis://127.0.0.1:${port}`, { commandTimeout: 1000 })).rejects.toMatchObject({
      code: 'TL_STORE_UNAVAILABLE',
      message: expect.stringContaining(`cannot reach Redis at redis://127.0.0.1:${port}`),
    });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('enqueue while Redis is down fails clearly within the command timeout', async () => {
    server = await RedisServer.start();
    const backend = await connect(server.url, { commandTimeout: 1000 });
    cleanups.push(() => backend.close());
    const client = new Client(backend);
    await client.enqueue('before', {});
    await server.stop();
    const started = Date.now();
    await expect(client.enqueue('during', {})).rejects.toMatchObject({ code: 'TL_STORE_UNAVAILABLE', message: expect.stringMatching(/^Redis: /) });
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('a worker survives a Redis restart (AOF on): it reconnects and every acknowledged task completes', async () => {
    server = await RedisServer.start({ appendOnly: true });
    const backend: Backend = await connect(server.url, { commandTimeout: 1000 });
    const client = new Client(backend);
    const completed = new Set<string>();
    const worker = new Worker(backend, { concurrency: 4, idleWait: 500, recoverInterval: 500, leaseMs: 3000 });
    worker.on('error', () => undefined);
    worker.handle('work', async (_p, ctx) => {
      await new Promise((r) => setTimeout(r, 5));
      completed.add(ctx.task.id);
    });
    cleanups.push(async () => {
      await worker.stop({ timeout: 1000 });
      await client.close();
      await backend.close();
    });
    await worker.start();
    const first = await client.enqueueMany(Array.from({ length: 300 }, (_, i) => ({ type: 'work', payload: { i }, options: { backoff: { type: 'fixed' as const, delay: 0 } } })));
    await eventually(async () => completed.size >= 20);
    await server.restart();
    const second = await eventually(async () => client.enqueueMany([{ type: 'work', payload: { after: true } }]), 10_000, 100);
    const ids = [...first, ...second].map((t) => t.id);
    await eventually(async () => {
      const queue = await backend.getQueue('default');
      return queue && queue.counts.completed === ids.length ? queue : null;
    }, 30_000, 100);
    for (const id of ids) expect((await client.getTask(id))?.state).toBe('completed');
  }, 60_000);
});
