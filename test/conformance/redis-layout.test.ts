import { Redis } from 'ioredis';
import { beforeEach, describe, expect, it } from 'vitest';
import type { RedisBackend } from '../../src/backend/redis/redis-backend.js';
import { Client } from '../../src/client/client.js';
import { group, task } from '../../src/core/workflow.js';
import { ackOk, claimTask, retryAck } from '../../src/backend/conformance/harness.js';
import { newWorkflow, taskIds } from '../../src/backend/conformance/workflow-harness.js';
import { connect } from '../../src/backend/connect.js';
import { RedisServer } from '../helpers/redis-server.js';
import { useRawRedis } from '../helpers/raw-redis.js';

// Redis-only facts about how the scripts lay data out, which the conformance suite cannot see:
// they matter for speed (docs/performance.md), not for behaviour.
describe('Redis layout', () => {
  const raw = useRawRedis();
  let backend: RedisBackend;
  let redis: Redis;
  beforeEach(() => ({ backend, redis } = raw));

  it('the running set is a skiplist from its first claim, holds only the claimed ids, and is removed when it empties', async () => {
    const running = backend.keys.queueKey('q', 'running');
    await enqueueTasks(backend, 30);
    const [first] = await backend.claim('w1', [{ queue: 'q', count: 3 }], 30_000);
    expect(await redis.object('ENCODING', running)).toBe('skiplist');
    expect((await redis.zrange(running, 0, -1)).sort()).toEqual(first.tasks.map((t) => t.id).sort());

    // Later claims add to the same set; it stays a skiplist while it has members.
    const [second] = await backend.claim('w1', [{ queue: 'q', count: 5 }], 30_000);
    expect(await redis.zcard(running)).toBe(8);
    await backend.ack(first.tasks.map((t) => complete(t)));
    expect(await redis.object('ENCODING', running)).toBe('skiplist');
    expect((await redis.zrange(running, 0, -1)).sort()).toEqual(second.tasks.map((t) => t.id).sort());

    await backend.ack(second.tasks.map((t) => complete(t)));
    expect(await redis.exists(running)).toBe(0);
    await backend.claim('w1', [{ queue: 'q', count: 2 }], 30_000);
    expect(await redis.object('ENCODING', running)).toBe('skiplist');
    expect(await redis.zcard(running)).toBe(2);
    expect((await backend.getQueue('q'))?.counts.running).toBe(2);
  });

  it('the payload hash is a hashtable from its first task, holds only task ids, and is removed when it empties', async () => {
    const payloads = backend.keys.queueKey('q', 'payload');
    await enqueueTasks(backend, 3);
    expect(await redis.object('ENCODING', payloads)).toBe('hashtable');
    expect(await redis.hlen(payloads)).toBe(3);
    const [claimed] = await backend.claim('w1', [{ queue: 'q', count: 3 }], 30_000);
    expect(claimed.tasks.map((t) => t.payload).sort()).toEqual(['{"i":0}', '{"i":1}', '{"i":2}']);
    await backend.setQueueKeep('q', { completed: 0 });
    await backend.ack(claimed.tasks.map((t) => complete(t)));
    expect(await redis.exists(payloads)).toBe(0);

    // A workflow's roots are the first tasks of their queue: their start makes the hash.
    const client = new Client(backend);
    await client.enqueueWorkflow(group(task('noop', { n: 1 }, { queue: 'q' }), task('noop', null, { queue: 'q' })));
    await client.close();
    expect(await redis.object('ENCODING', payloads)).toBe('hashtable');
    expect((await redis.hvals(payloads)).sort()).toEqual(['null', '{"n":1}']);
  });

  it('a workflow root retried by its handler is handed its (empty) inputs on every attempt', async () => {
    const wf = newWorkflow([{ id: 'a', maxRetries: 3 }, { id: 'b', dependsOn: ['a'] }]);
    await backend.createWorkflow(wf);
    const first = await claimTask(backend, taskIds(wf).a);
    expect(first.inputs).toEqual({ parents: [] });
    await ackOk(backend, retryAck(first, 'again', 0));
    // The retry re-encodes the record, and cjson writes its empty list as {}.
    expect(await redis.hget(backend.keys.queueKey('default', 'meta'), taskIds(wf).a)).toContain('"wi":{}');
    const second = await claimTask(backend, taskIds(wf).a);
    expect(second.attempt).toBe(2);
    expect(second.inputs).toEqual({ parents: [] });
  });

  it('builds and publishes event lines only while someone listens on their channel', async () => {
    // On a private server: MONITOR sees every client's commands, and ioredis fails ("command
    // queue state error") when a line arrives before it has switched the connection over, which
    // the other test files' traffic on the shared server can make happen.
    const server = await RedisServer.start();
    const backend = (await connect(server.url, { prefix: 'layout' })) as RedisBackend;
    const redis = new Redis(server.url);
    const published: string[] = [];
    const monitor = await redis.monitor();
    const channels = new Set([backend.keys.events, backend.keys.lifecycle]);
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (String(args[0]).toUpperCase() === 'PUBLISH' && channels.has(args[1])) published.push(args[1]);
    });
    const cycle = async () => {
      await enqueueTasks(backend, 3);
      const [claimed] = await backend.claim('w1', [{ queue: 'q', count: 3 }], 30_000);
      await backend.ack(claimed.tasks.map((t) => complete(t)));
      // MONITOR lines arrive on their own connection: a PING round trip on it flushes them.
      await redis.ping();
    };
    try {
      // Nobody listens (a worker joins the cancel channel only): no lines are published.
      const cancels = await backend.subscribe(() => undefined, { cancelsOnly: true });
      await cycle();
      expect(published).toEqual([]);
      await cancels();

      // The task center listens to both channels: enqueued, started and finished lines.
      const events: string[] = [];
      const unsubscribe = await backend.subscribe((event) => events.push(event.kind), { lifecycle: true });
      await cycle();
      await expect.poll(() => new Set(published), { timeout: 10_000 }).toEqual(channels);
      await expect.poll(() => events.filter((kind) => kind === 'finished').length, { timeout: 10_000 }).toBe(3);
      await unsubscribe();
    } finally {
      monitor.disconnect();
      redis.disconnect();
      await backend.close();
      await server.stop();
    }
  });
});

async function enqueueTasks(backend: RedisBackend, n: number): Promise<void> {
  const client = new Client(backend);
  await client.enqueueMany(Array.from({ length: n }, (_, i) => ({ type: 'noop', payload: { i }, options: { queue: 'q' } })));
  await client.close();
}

function complete(task: { id: string; queue: string; token: string; attempt: number; startedAt: number }) {
  const now = Date.now();
  return {
    kind: 'complete' as const,
    id: task.id,
    queue: task.queue,
    token: task.token,
    result: '',
    attempt: { attempt: task.attempt, startedAt: task.startedAt, finishedAt: now, outcome: 'completed' as const, error: null, stack: null, workerId: 'w1' },
  };
}
