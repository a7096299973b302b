/**
 * Several real processes on one database file: a producer and two workers, one SIGKILLed
 * mid-run; and durability of acknowledged enqueues when every process is SIGKILLed. The children
 * import the built package (dist/): `npm test` builds first.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { TaskRecord } from '../../src/core/task.js';
import { SqliteBackend } from '../../src/backend/sqlite/sqlite-backend.js';
import { ChildWorker, eventually } from '../helpers/processes.js';
import { tempDir } from '../helpers/stores.js';

const WORKER = fileURLToPath(new URL('../fixtures/worker-process.mjs', import.meta.url));
const PRODUCER = fileURLToPath(new URL('../fixtures/sqlite-producer.mjs', import.meta.url));

async function allTasks(backend: SqliteBackend, state: TaskRecord['state']): Promise<TaskRecord[]> {
  const tasks: TaskRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await backend.listTasks('default', state, { limit: 500, cursor });
    tasks.push(...page.tasks);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return tasks;
}

describe('SQLite: several processes on one file', () => {
  const children: ChildWorker[] = [];
  const cleanups: (() => Promise<void> | void)[] = [];

  afterEach(async () => {
    await Promise.all(children.splice(0).map((c) => c.destroy()));
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  function storeFile(): string {
    const dir = tempDir('taskline-mp');
    cleanups.push(() => dir.remove());
    return join(dir.path, 'taskline.db');
  }

  function start(script: string, env: Record<string, string>): ChildWorker {
    const child = ChildWorker.start(script, env);
    children.push(child);
    return child;
  }

  it('a producer and two workers, one SIGKILLed mid-run: every task completes once', async () => {
    const file = storeFile();
    const url = `sqlite:${file}`;
    const count = 300;
    const workerEnv = { BACKEND_URL: url, LEASE_MS: '1500', RECOVER_MS: '200', CONCURRENCY: '8', TASK_MS: '40' };
    // All three open (and migrate) the new file at the same time.
    const victim = start(WORKER, workerEnv);
    const survivor = start(WORKER, workerEnv);
    const producer = start(PRODUCER, { BACKEND_URL: url, COUNT: String(count), DELAY_MS: '2', BACKOFF_MS: '100' });
    await Promise.all([victim.waitForLine((l) => l === 'ready'), survivor.waitForLine((l) => l === 'ready')]);

    // Kill the victim while it is running tasks (a task runs 40 ms; its start line is just out).
    let starts = 0;
    await victim.waitForLine((l) => l.startsWith('start ') && ++starts >= 10);
    victim.kill('SIGKILL');
    expect(await victim.exited).toBeNull();
    await producer.waitForLine((l) => l === 'finished');
    const acked = producer.lines.filter((l) => l.startsWith('ack ')).map((l) => l.slice(4));
    expect(acked).toHaveLength(count);

    const backend = await SqliteBackend.open(file);
    cleanups.push(() => backend.close());
    await eventually(async () => (await backend.getQueue('default'))?.counts.completed === count, 30_000, 100);
    const queue = await backend.getQueue('default');
    expect(queue!.counts).toMatchObject({ completed: count, queued: 0, running: 0, retrying: 0, dead: 0, scheduled: 0 });

    const completed = await allTasks(backend, 'completed');
    expect(completed.map((t) => t.id).sort()).toEqual([...acked].sort());
    for (const task of completed) {
      // Exactly one recorded completion per task, whatever ran twice.
      expect(task.attempts.filter((a) => a.outcome === 'completed')).toHaveLength(1);
    }
    // The victim held tasks when it died: their leases expired and the survivor ran them again.
    const recovered = completed.filter((t) => t.attempts.some((a) => a.error === 'lease expired (worker lost)'));
    expect(recovered.length).toBeGreaterThan(0);
    expect(recovered.every((t) => t.attempt === 2 && t.attempts.length === 2)).toBe(true);
    // Completions recorded = tasks; every attempt counted as processed.
    expect(queue!.processed).toBe(count + recovered.length);
    expect(queue!.failed).toBe(recovered.length);
  }, 60_000);

  it('tasks acknowledged by enqueue survive SIGKILL of every process', async () => {
    const file = storeFile();
    const url = `sqlite:${file}`;
    const worker = start(WORKER, { BACKEND_URL: url, CONCURRENCY: '4', TASK_MS: '5' });
    await worker.waitForLine((l) => l === 'ready');
    const producers = [start(PRODUCER, { BACKEND_URL: url, COUNT: '100000' }), start(PRODUCER, { BACKEND_URL: url, COUNT: '100000' })];
    let acks = 0;
    await producers[0].waitForLine((l) => l.startsWith('ack ') && ++acks >= 300);
    for (const child of [...producers, worker]) child.kill('SIGKILL');
    await Promise.all([...producers, worker].map((c) => c.exited));

    const acked = producers.flatMap((p) => p.lines.filter((l) => l.startsWith('ack ')).map((l) => l.slice(4)));
    expect(acked.length).toBeGreaterThanOrEqual(300);
    const backend = await SqliteBackend.open(file);
    cleanups.push(() => backend.close());
    const missing: string[] = [];
    for (const id of acked) if ((await backend.getTask(id)) === null) missing.push(id);
    expect(missing).toEqual([]);
    // The worker was killed too: what it held is running until its lease expires, nothing is lost.
    const queue = await backend.getQueue('default');
    const stored = Object.values(queue!.counts).reduce((a, b) => a + b, 0);
    expect(stored).toBeGreaterThanOrEqual(acked.length);
  }, 60_000);
});
