/**
 * Worker processes that crash, freeze or shut down, on a real Redis: nothing acknowledged is lost,
 * a late write from a frozen worker is refused, and graceful shutdown requeues without using an
 * attempt.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { Client } from '../../src/index.js';
import { RedisBackend } from '../../src/backend/redis/redis-backend.js';
import { REDIS_URL, deletePrefix, uniquePrefix } from '../helpers/stores.js';
import { ChildWorker, eventually } from '../helpers/processes.js';

const WORKER = fileURLToPath(new URL('../fixtures/worker-process.mjs', import.meta.url));

describe('worker processes on redis', () => {
  let prefix: string;
  let backend: RedisBackend;
  let client: Client;
  const children: ChildWorker[] = [];

  const spawnWorker = (env: Record<string, string>) => {
    const child = ChildWorker.start(WORKER, { BACKEND_URL: REDIS_URL, PREFIX: prefix, ...env });
    children.push(child);
    return child;
  };

  beforeEach(async () => {
    prefix = uniquePrefix('proc');
    backend = await RedisBackend.connect(REDIS_URL, { prefix });
    client = new Client(backend);
  });

  afterEach(async () => {
    await Promise.all(children.splice(0).map((c) => c.destroy()));
    await client.close();
    await backend.close();
    await deletePrefix(REDIS_URL, prefix);
  });

  it('a worker killed with SIGKILL mid-task: the task is recovered after its lease and completed by another worker', async () => {
    const first = spawnWorker({ LEASE_MS: '1000', RECOVER_MS: '200', TASK_MS: '60000' });
    await first.waitForLine((l) => l === 'ready');
    const info = await client.enqueue('work', {}, { maxRetries: 2, backoff: { type: 'fixed', delay: 0 } });
    await first.waitForLine((l) => l.startsWith(`start ${info.id} 1`));
    first.kill('SIGKILL');
    await first.exited;

    const second = spawnWorker({ LEASE_MS: '1000', RECOVER_MS: '200', TASK_MS: '10' });
    const result = await client.waitFor<{ pid: number }>(info.id, { timeout: 15_000 });
    expect(result.pid).toBe(second.child.pid);
    const task = await client.getTask(info.id);
    expect(task!.state).toBe('completed');
    expect(task!.attempt).toBe(2);
    expect(task!.attempts.map((a) => [a.attempt, a.outcome, a.error])).toEqual([
      [1, 'failed', 'lease expired (worker lost)'],
      [2, 'completed', null],
    ]);
  });

  it('a worker frozen with SIGSTOP past its lease: its late completion is refused as stale', async () => {
    const frozen = spawnWorker({ LEASE_MS: '800', RECOVER_MS: '100' });
    await frozen.waitForLine((l) => l === 'ready');
    // The handler is in a synchronous step when frozen, so it completes as soon as it resumes.
    const info = await client.enqueue('work', { busyMs: 500 }, { maxRetries: 3, backoff: { type: 'fixed', delay: 0 } });
    await frozen.waitForLine((l) => l.startsWith(`start ${info.id} 1`));
    frozen.kill('SIGSTOP');

    // Another worker recovers the expired lease and completes the task.
    const rescuer = spawnWorker({ LEASE_MS: '800', RECOVER_MS: '100', TASK_MS: '10' });
    const result = await client.waitFor<{ pid: number }>(info.id, { timeout: 15_000 });
    expect(result.pid).toBe(rescuer.child.pid);
    const before = await client.getTask(info.id);

    frozen.kill('SIGCONT');
    await frozen.waitForLine((l) => l === `stale ${info.id}`);
    const after = await client.getTask(info.id);
    expect(after).toEqual(before);
    expect(after!.result).toEqual({ pid: rescuer.child.pid });
    expect(after!.attempts.filter((a) => a.outcome === 'completed')).toHaveLength(1);
  });

  it('graceful shutdown: running tasks go back to queued with their attempt count unchanged, exit 0', async () => {
    const worker = spawnWorker({ SHUTDOWN_MS: '300', TASK_MS: '60000', CONCURRENCY: '3' });
    await worker.waitForLine((l) => l === 'ready');
    const infos = await client.enqueueMany([1, 2, 3].map(() => ({ type: 'work', payload: {} })));
    for (const info of infos) await worker.waitForLine((l) => l.startsWith(`start ${info.id} 1`));
    worker.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    expect(worker.lines).toContain('stopped');
    for (const info of infos) {
      const task = await client.getTask(info.id);
      expect(task).toMatchObject({ state: 'queued', attempt: 0, workerId: null });
      expect(task!.attempts.map((a) => a.outcome)).toEqual(['interrupted']);
    }
    // Another worker then runs them as their first counted attempt.
    spawnWorker({ TASK_MS: '5' });
    for (const info of infos) await client.waitFor(info.id, { timeout: 10_000 });
    for (const info of infos) expect((await client.getTask(info.id))!.attempt).toBe(1);
  });

  it('graceful shutdown waits for tasks that finish within the timeout', async () => {
    const worker = spawnWorker({ SHUTDOWN_MS: '5000', TASK_MS: '300' });
    await worker.waitForLine((l) => l === 'ready');
    const info = await client.enqueue('work', {});
    await worker.waitForLine((l) => l.startsWith(`start ${info.id}`));
    worker.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    expect(await client.getTask(info.id)).toMatchObject({ state: 'completed', attempt: 1 });
  });

  it('many tasks across two workers, one SIGKILLed: every task completes exactly once', async () => {
    const a = spawnWorker({ LEASE_MS: '1000', RECOVER_MS: '200', TASK_MS: '20', CONCURRENCY: '8' });
    const b = spawnWorker({ LEASE_MS: '1000', RECOVER_MS: '200', TASK_MS: '20', CONCURRENCY: '8' });
    await Promise.all([a.waitForLine((l) => l === 'ready'), b.waitForLine((l) => l === 'ready')]);
    const infos = await client.enqueueMany(Array.from({ length: 300 }, (_, i) => ({ type: 'work', payload: { i }, options: { backoff: { type: 'fixed', delay: 0 } } })));
    await a.waitForLine((l) => l.startsWith('done'));
    a.kill('SIGKILL');
    await eventually(async () => ((await backend.getQueue('default'))!.counts.completed === 300 ? true : null), 30_000, 100);
    const queue = await backend.getQueue('default');
    expect(queue!.counts).toMatchObject({ completed: 300, queued: 0, running: 0, retrying: 0, dead: 0 });
    for (const info of infos.slice(0, 50)) {
      const task = await client.getTask(info.id);
      expect(task!.attempts.filter((x) => x.outcome === 'completed')).toHaveLength(1);
    }
  });
});
