import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Backend, ClaimedTask } from '../../src/backend/contract.js';
import type { NewTask } from '../../src/core/task.js';
import { uuidv7 } from '../../src/core/ids.js';
import { sqliteStore, type SqliteTestStore } from '../helpers/sqlite-store.js';

function newTask(i: number): NewTask {
  return {
    id: uuidv7(), type: 'work', payload: JSON.stringify({ i }), queue: 'default', maxRetries: 3, timeout: 60_000, deadline: null,
    delay: null, runAt: null, uniqueKey: null, uniqueFor: null, retention: null, backoff: null, headers: null, links: null,
  };
}

/** Claims until the queue is empty, acking each batch as completed. */
async function drain(backend: Backend, worker: string, seen: ClaimedTask[]): Promise<void> {
  for (;;) {
    const [result] = await backend.claim(worker, [{ queue: 'default', count: 7 }], 30_000);
    if (result.tasks.length === 0) return;
    seen.push(...result.tasks);
    const attempt = { attempt: 1, startedAt: result.now, finishedAt: result.now, outcome: 'completed' as const, error: null, stack: null, workerId: worker };
    const acks = await backend.ack(result.tasks.map((t) => ({ kind: 'complete' as const, id: t.id, queue: t.queue, token: t.token, attempt, result: 'null' })));
    expect(acks.every((a) => a === 'ok')).toBe(true);
    // Let the other backend's claim interleave with ours.
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('SQLite: several backends on one file', () => {
  let store: SqliteTestStore;

  beforeEach(async () => {
    store = await sqliteStore();
  });

  afterEach(async () => {
    await store.cleanup();
  });

  it('hands each task to exactly one of several backends claiming at once', async () => {
    const total = 1500;
    const tasks = Array.from({ length: total }, (_, i) => newTask(i));
    for (let i = 0; i < total; i += 500) await store.backend.enqueue(tasks.slice(i, i + 500));
    const others = await Promise.all([store.reopen(), store.reopen(), store.reopen()]);
    const claimed: ClaimedTask[][] = others.map(() => []);
    await Promise.all(others.map((b, i) => drain(b, `w${i}`, claimed[i])));
    const ids = claimed.flat().map((t) => t.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual(tasks.map((t) => t.id).sort());
    expect(claimed.every((c) => c.length > 0)).toBe(true);
    const queue = await store.backend.getQueue('default');
    expect(queue).toMatchObject({ processed: total, failed: 0, counts: { completed: total, queued: 0, running: 0 } });
  });

  it('lets only the holder of the current lease write: a recovered task refuses its old worker', async () => {
    const [task] = tasks(1);
    await store.backend.enqueue([task]);
    const [first] = (await store.backend.claim('w1', [{ queue: 'default', count: 1 }], 1000))[0].tasks;
    const later = await store.reopen({ clockOffsetMs: 60_000 });
    expect(await later.recoverExpired('default', 10)).toBe(1);
    expect(await later.forwardDue('default', 10)).toBe(0);
    const laterStill = await store.reopen({ clockOffsetMs: 2 * 3_600_000 });
    const [second] = (await laterStill.claim('w2', [{ queue: 'default', count: 1 }], 30_000))[0].tasks;
    expect(second.id).toBe(first.id);
    expect(second.token).not.toBe(first.token);
    const attempt = { attempt: 1, startedAt: 0, finishedAt: 0, outcome: 'completed' as const, error: null, stack: null, workerId: 'w1' };
    expect(await store.backend.ack([{ kind: 'complete', id: first.id, queue: 'default', token: first.token, attempt, result: '1' }])).toEqual(['stale']);
    expect(await laterStill.ack([{ kind: 'complete', id: second.id, queue: 'default', token: second.token, attempt: { ...attempt, attempt: 2, workerId: 'w2' }, result: '2' }])).toEqual(['ok']);
    const record = await store.backend.getTask(first.id);
    expect(record).toMatchObject({ state: 'completed', result: 2, attempt: 2 });
    expect(record!.attempts.map((a) => a.outcome)).toEqual(['failed', 'completed']);
  });

  it('wakes a waiting backend within milliseconds of a commit by another', async () => {
    const producer = await store.reopen();
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      const waiting = store.backend.waitForWork(['default'], 5000, new AbortController().signal);
      setTimeout(() => void producer.enqueue([newTask(i)]), 20);
      await waiting;
      waits.push(performance.now() - started - 20);
      await store.backend.claim('w', [{ queue: 'default', count: 10 }], 30_000);
    }
    waits.sort((a, b) => a - b);
    // The median wake-up; the file watch makes it a few ms, the safety poll bounds it at 100 ms.
    expect(waits[2]).toBeLessThan(50);
  });
});

function tasks(n: number): NewTask[] {
  return Array.from({ length: n }, (_, i) => newTask(i));
}
