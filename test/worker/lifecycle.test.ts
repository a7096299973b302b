import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Client, defineTask, PermanentError, RetryableError, TaskFailedError, Worker, type TaskContext } from '../../src/index.js';
import { STORES, type TestStore } from '../helpers/stores.js';

describe.each(STORES)('task lifecycle on %s', (_name, openStore) => {
  let store: TestStore;
  let client: Client;
  const workers: Worker[] = [];

  function startWorker(options: ConstructorParameters<typeof Worker>[1] = {}, setup: (w: Worker) => void = () => undefined): Worker {
    const worker = new Worker(store.backend, { idleWait: 1000, ...options });
    setup(worker);
    workers.push(worker);
    void worker.start();
    return worker;
  }

  beforeEach(async () => {
    store = await openStore();
    client = new Client(store.backend);
  });

  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop({ timeout: 1000 })));
    await client.close();
    await store.cleanup();
  });

  it('runs a task to completed and stores its result', async () => {
    startWorker({}, (w) => w.handle('math:add', async (p: { a: number; b: number }) => p.a + p.b));
    const info = await client.enqueue('math:add', { a: 2, b: 3 });
    expect(info.state).toBe('queued');
    expect(await client.waitFor(info.id, { timeout: 5000 })).toBe(5);
    const task = await client.getTask(info.id);
    expect(task).toMatchObject({ state: 'completed', attempt: 1, result: 5, lastError: null });
    expect(task!.attempts).toHaveLength(1);
    expect(task!.attempts[0]).toMatchObject({ attempt: 1, outcome: 'completed', error: null });
    expect(task!.startedAt).not.toBeNull();
    expect(task!.finishedAt).toBeGreaterThanOrEqual(task!.startedAt!);
  });

  it("keeps only as many finished tasks as the queue's bounds allow, with events and counts intact", async () => {
    await store.backend.setQueueKeep('default', { completed: 0, dead: 2 });
    const completed: string[] = [];
    const failed: string[] = [];
    startWorker({ concurrency: 8 }, (w) => {
      w.handle('ok', async (p: { i: number }) => ({ doubled: p.i * 2 }));
      w.handle('bad', async () => {
        throw new PermanentError('no');
      });
      w.on('completed', (task) => completed.push(task.id));
      w.on('failed', (task) => failed.push(task.id));
    });
    const ok = await client.enqueueMany(Array.from({ length: 40 }, (_, i) => ({ type: 'ok', payload: { i } })));
    const bad = await client.enqueueMany(Array.from({ length: 5 }, () => ({ type: 'bad', payload: {} })));
    await expect.poll(() => completed.length + failed.length, { timeout: 10_000 }).toBe(45);
    expect(new Set(completed)).toEqual(new Set(ok.map((t) => t.id)));
    for (const task of ok) expect(await client.getTask(task.id)).toBeNull();
    const queue = await store.backend.getQueue('default');
    expect(queue).toMatchObject({ counts: { completed: 0, dead: 2, running: 0, queued: 0 }, processed: 45, failed: 5 });
    const kept = (await store.backend.listTasks('default', 'dead')).tasks.map((t) => t.id);
    expect(kept.every((id) => bad.some((t) => t.id === id))).toBe(true);
  });

  it('retries with backoff, records every attempt, and dies when retries run out', async () => {
    startWorker({ backoff: { type: 'fixed', delay: 20 } }, (w) =>
      w.handle('flaky', async (_p, ctx) => {
        throw new Error(`boom ${ctx.task.attempt}`);
      }),
    );
    const info = await client.enqueue('flaky', {}, { maxRetries: 2 });
    await expect(client.waitFor(info.id, { timeout: 5000 })).rejects.toBeInstanceOf(TaskFailedError);
    const task = await client.getTask(info.id);
    expect(task).toMatchObject({ state: 'dead', attempt: 3, lastError: 'boom 3' });
    expect(task!.attempts.map((a) => [a.attempt, a.outcome, a.error])).toEqual([
      [1, 'failed', 'boom 1'],
      [2, 'failed', 'boom 2'],
      [3, 'failed', 'boom 3'],
    ]);
    expect(task!.attempts[0].stack).toContain('boom 1');
    const queue = await store.backend.getQueue('default');
    expect(queue).toMatchObject({ processed: 3, failed: 3 });
    expect(queue!.counts.dead).toBe(1);
  });

  it('succeeds on a retry after failures', async () => {
    startWorker({ backoff: { type: 'fixed', delay: 10 } }, (w) =>
      w.handle('eventually', async (_p, ctx) => {
        if (ctx.task.attempt < 3) throw new Error('not yet');
        return 'ok';
      }),
    );
    const info = await client.enqueue('eventually', null);
    expect(await client.waitFor(info.id, { timeout: 5000 })).toBe('ok');
    const task = await client.getTask(info.id);
    expect(task!.attempts.map((a) => a.outcome)).toEqual(['failed', 'failed', 'completed']);
  });

  it('PermanentError goes straight to dead without retrying', async () => {
    let calls = 0;
    startWorker({}, (w) =>
      w.handle('bad', async () => {
        calls += 1;
        throw new PermanentError('invalid account');
      }),
    );
    const info = await client.enqueue('bad', {}, { maxRetries: 5 });
    await expect(client.waitFor(info.id, { timeout: 5000 })).rejects.toThrow(/dead: invalid account/);
    expect(calls).toBe(1);
    expect(await client.getTask(info.id)).toMatchObject({ state: 'dead', attempt: 1 });
  });

  it('RetryableError retries after exactly retryIn ms', async () => {
    startWorker({}, (w) =>
      w.handle('rate-limited', async (_p, ctx) => {
        if (ctx.task.attempt === 1) throw new RetryableError('429', { retryIn: 700 });
        return 'done';
      }),
    );
    const info = await client.enqueue('rate-limited', {});
    const retrying = await waitForState(client, info.id, 'retrying');
    expect(retrying.nextRunAt! - retrying.attempts[0].finishedAt!).toBeGreaterThanOrEqual(690);
    expect(retrying.nextRunAt! - retrying.attempts[0].finishedAt!).toBeLessThanOrEqual(760);
    expect(await client.waitFor(info.id, { timeout: 5000 })).toBe('done');
    const task = await client.getTask(info.id);
    expect(task!.startedAt! - retrying.attempts[0].finishedAt!).toBeGreaterThanOrEqual(690);
  });

  it('a timeout aborts the handler signal and counts as a failure', async () => {
    let reason: unknown;
    startWorker({}, (w) =>
      w.handle('slow', async (_p, ctx: TaskContext) => {
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
        reason = ctx.signal.reason;
      }),
    );
    const info = await client.enqueue('slow', {}, { timeout: 100, maxRetries: 0 });
    await expect(client.waitFor(info.id, { timeout: 5000 })).rejects.toThrow(/timeout after 100 ms/);
    expect((reason as Error).message).toBe('timeout after 100 ms');
    expect(await client.getTask(info.id)).toMatchObject({ state: 'dead', lastError: 'timeout after 100 ms' });
  });

  it('a worker with concurrency 9,000 claims in bounded batches and runs every task', async () => {
    const total = 9_500;
    for (let i = 0; i < total; i += 1000) {
      await client.enqueueMany(Array.from({ length: Math.min(1000, total - i) }, (_, j) => ({ type: 'many', payload: { n: i + j } })));
    }
    const seen = new Set<number>();
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    const worker = startWorker({ concurrency: 9_000 }, (w) =>
      w.handle('many', (payload: { n: number }) => {
        seen.add(payload.n);
      }),
    );
    let completed = 0;
    worker.on('completed', () => {
      if (++completed === total) finish();
    });
    await done;
    expect(seen.size).toBe(total);
    expect((await store.backend.getQueue('default'))!.counts).toMatchObject({ queued: 0, running: 0, completed: total });
  }, 60_000);

  it('a deadline aborts the handler and dies without retry', async () => {
    let aborted = false;
    startWorker({}, (w) =>
      w.handle('deadline', async (_p, ctx) => {
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
        aborted = true;
      }),
    );
    const info = await client.enqueue('deadline', {}, { deadline: Date.now() + 1000, maxRetries: 3 });
    await expect(client.waitFor(info.id, { timeout: 5000 })).rejects.toThrow(/deadline exceeded/);
    expect(aborted).toBe(true);
    expect(await client.getTask(info.id)).toMatchObject({ state: 'dead', attempt: 1 });
  });

  it('a task whose deadline passed before it started dies without running', async () => {
    let ran = false;
    startWorker({}, (w) => w.handle('late', async () => void (ran = true)));
    const info = await client.enqueue('late', {}, { deadline: Date.now() - 1000 });
    await expect(client.waitFor(info.id, { timeout: 5000 })).rejects.toThrow(/deadline exceeded/);
    expect(ran).toBe(false);
  });

  it('a task without a handler fails with a clear error and is retried', async () => {
    startWorker({ backoff: { type: 'fixed', delay: 10 } });
    const info = await client.enqueue('nobody:handles', {}, { maxRetries: 1 });
    await expect(client.waitFor(info.id, { timeout: 5000 })).rejects.toThrow(/no handler for task type "nobody:handles" in worker .*; no live worker serving queue default handles it/);
    expect(await client.getTask(info.id)).toMatchObject({ state: 'dead', attempt: 2 });
  });

  it('matches handler patterns, the most specific first', async () => {
    const seen: string[] = [];
    startWorker({}, (w) => {
      w.handle('email:*', async (_p, ctx) => void seen.push(`email:* ${ctx.task.type}`));
      w.handle('email:deliver:*', async (_p, ctx) => void seen.push(`email:deliver:* ${ctx.task.type}`));
      w.handle('email:welcome', async (_p, ctx) => void seen.push(`exact ${ctx.task.type}`));
    });
    for (const type of ['email:welcome', 'email:deliver:bulk', 'email:other']) {
      await client.waitFor((await client.enqueue(type, {})).id, { timeout: 5000 });
    }
    expect(seen).toEqual(['exact email:welcome', 'email:deliver:* email:deliver:bulk', 'email:* email:other']);
  });

  it('runs middleware in registration order around the handler', async () => {
    const order: string[] = [];
    startWorker({}, (w) => {
      w.use(async (ctx, next) => {
        order.push('a-in');
        const result = await next();
        order.push('a-out');
        return { wrapped: result, type: ctx.task.type };
      });
      w.use(async (_ctx, next) => {
        order.push('b-in');
        const result = await next();
        order.push('b-out');
        return result;
      });
      w.handle('mw', async () => {
        order.push('handler');
        return 1;
      });
    });
    const info = await client.enqueue('mw', {});
    expect(await client.waitFor(info.id, { timeout: 5000 })).toEqual({ wrapped: 1, type: 'mw' });
    expect(order).toEqual(['a-in', 'b-in', 'handler', 'b-out', 'a-out']);
  });

  it('isFailure=false retries without using an attempt', async () => {
    let calls = 0;
    startWorker({ backoff: { type: 'fixed', delay: 10 }, isFailure: (e) => !(e instanceof Error && e.message === 'busy') }, (w) =>
      w.handle('busy', async () => {
        calls += 1;
        if (calls <= 3) throw new Error('busy');
        return calls;
      }),
    );
    const info = await client.enqueue('busy', {}, { maxRetries: 0 });
    expect(await client.waitFor(info.id, { timeout: 5000 })).toBe(4);
    const task = await client.getTask(info.id);
    expect(task!.attempt).toBe(1);
    expect(task!.attempts).toHaveLength(4);
  });

  it('uses a custom backoff function', async () => {
    const calls: number[] = [];
    startWorker(
      {
        backoff: (attempt) => {
          calls.push(attempt);
          return 30;
        },
      },
      (w) => w.handle('fn-backoff', async () => {
        throw new Error('x');
      }),
    );
    const info = await client.enqueue('fn-backoff', {}, { maxRetries: 2 });
    await expect(client.waitFor(info.id, { timeout: 5000 })).rejects.toThrow();
    expect(calls).toEqual([1, 2]);
  });

  it('stores log lines and progress with the task', async () => {
    startWorker({}, (w) =>
      w.handle('chatty', async (_p, ctx) => {
        ctx.log('step', 1, { of: 2 });
        ctx.progress(50);
        ctx.log('step 2');
        ctx.progress({ done: 2, total: 2 });
        return 'ok';
      }),
    );
    const info = await client.enqueue('chatty', {});
    await client.waitFor(info.id, { timeout: 5000 });
    const task = await client.getTask(info.id);
    expect(task!.logs.map((l) => l.message)).toEqual(['step 1 {"of":2}', 'step 2']);
    expect(task!.progress).toEqual({ done: 2, total: 2 });
  });

  it('gives a context whose parts work when destructured', async () => {
    const seen: unknown[] = [];
    startWorker({}, (w) =>
      w.handle('destructured', async (_p, { task, log, progress, signal, extendLease }) => {
        log('from', task.type);
        progress(1);
        await extendLease();
        seen.push(task.id, task.attempt, signal.aborted);
        return 'ok';
      }),
    );
    const info = await client.enqueue('destructured', {});
    expect(await client.waitFor(info.id, { timeout: 5000 })).toBe('ok');
    expect(seen).toEqual([info.id, 1, false]);
    const task = await client.getTask(info.id);
    expect(task!.logs.map((l) => l.message)).toEqual(['from destructured']);
    expect(task!.progress).toBe(1);
  });

  it('lets middleware replace context parts, and serialises a context as its task and payload', async () => {
    const logged: string[] = [];
    let json = '';
    startWorker({}, (w) => {
      w.use(async (ctx, next) => {
        const log = ctx.log;
        ctx.log = (...parts: unknown[]) => log('[mw]', ...parts);
        json = JSON.stringify(ctx);
        return next();
      });
      w.handle('wrapped', async (_p, ctx) => {
        ctx.log('hello');
        logged.push('ran');
        return 1;
      });
    });
    const info = await client.enqueue('wrapped', { n: 1 });
    expect(await client.waitFor(info.id, { timeout: 5000 })).toBe(1);
    expect(logged).toEqual(['ran']);
    expect(JSON.parse(json)).toMatchObject({ task: { id: info.id, type: 'wrapped' }, payload: { n: 1 } });
    expect((await client.getTask(info.id))!.logs.map((l) => l.message)).toEqual(['[mw] hello']);
  });

  it('survives handlers that end with values nothing can describe', async () => {
    const unprintable = Object.create(null) as Record<string, unknown>;
    unprintable.self = unprintable; // neither JSON nor String() can print it
    startWorker({}, (w) => {
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- the point: a thrown non-Error
      w.handle('bad-result', () => ({ toJSON: () => { throw null; } }));
      w.handle('bad-throw', () => {
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- the point: a thrown non-Error
        throw unprintable;
      });
      w.handle('bad-then', () => ({
        get then() {
          throw new Error('no then for you');
        },
      }));
    });
    const result = await client.enqueue('bad-result', {});
    const thrown = await client.enqueue('bad-throw', {}, { maxRetries: 0 });
    const then = await client.enqueue('bad-then', {}, { maxRetries: 0 });
    await expect(client.waitFor(result.id, { timeout: 5000 })).rejects.toThrow(/not JSON-serialisable/);
    await expect(client.waitFor(thrown.id, { timeout: 5000 })).rejects.toThrow(/dead/);
    await expect(client.waitFor(then.id, { timeout: 5000 })).rejects.toThrow(/no then for you/);
    // The worker goes on.
    const ok = await client.enqueue('bad-result', {});
    await expect(client.waitFor(ok.id, { timeout: 5000 })).rejects.toThrow(/not JSON-serialisable/);
  });

  /** Cancels a running task: the request is taken, and the task ends cancelled with its attempt. */
  async function expectCancelledWhileRunning(id: string): Promise<void> {
    expect(await client.cancel(id)).toBe('cancel-requested');
    await expect(client.waitFor(id, { timeout: 5000 })).rejects.toThrow(/cancelled/);
    const task = await client.getTask(id);
    expect(task).toMatchObject({ state: 'cancelled' });
    expect(task!.attempts[0].outcome).toBe('cancelled');
  }

  it('cancels a running task whose handler honours the signal', async () => {
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    startWorker({}, (w) =>
      w.handle('long', async (_p, ctx) => {
        started();
        await new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error)));
      }),
    );
    const info = await client.enqueue('long', {});
    await running;
    await expectCancelledWhileRunning(info.id);
  });

  it('a cancel the handler ignores still ends the attempt, as cancelled, when its timeout passes', async () => {
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    startWorker({}, (w) =>
      w.handle('stubborn', async () => {
        started();
        await new Promise(() => undefined); // never looks at its signal, never ends
      }),
    );
    const info = await client.enqueue('stubborn', {}, { timeout: 600 });
    await running;
    await expectCancelledWhileRunning(info.id);
  });

  it('cancels a queued task at once', async () => {
    const info = await client.enqueue('never-run', {}, { delay: 60_000 });
    expect(info.state).toBe('scheduled');
    expect(await client.cancel(info.id)).toBe('cancelled');
    expect(await client.getTask(info.id)).toMatchObject({ state: 'cancelled' });
    await expect(client.cancel(info.id)).rejects.toMatchObject({ code: 'TL_INVALID_STATE' });
  });

  it('runs a delayed task when it is due', async () => {
    startWorker({}, (w) => w.handle('later', async () => Date.now()));
    const before = Date.now();
    const info = await client.enqueue('later', {}, { delay: 300 });
    expect(info.state).toBe('scheduled');
    const ranAt = await client.waitFor<number>(info.id, { timeout: 5000 });
    expect(ranAt - before).toBeGreaterThanOrEqual(290);
  });

  it('validates payloads of defined tasks at enqueue and before the handler', async () => {
    const sendEmail = defineTask('email:send', { schema: z.object({ to: z.string().email(), subject: z.string() }) });
    const handled: unknown[] = [];
    startWorker({}, (w) => w.handle(sendEmail, async (payload) => void handled.push(payload)));
    await expect(client.enqueue(sendEmail, { to: 'not-an-email', subject: 'x' })).rejects.toMatchObject({ code: 'TL_VALIDATION_FAILED' });
    expect((await store.backend.getQueue('default'))?.counts.queued ?? 0).toBe(0);
    const ok = await client.enqueue(sendEmail, { to: 'a@example.com', subject: 'hi' });
    await client.waitFor(ok.id, { timeout: 5000 });
    expect(handled).toEqual([{ to: 'a@example.com', subject: 'hi' }]);
    // A payload that bypassed the client's validation is dead-lettered at once, never retried.
    const raw = await client.enqueue('email:send', { to: 'bad' }, { maxRetries: 5 });
    await expect(client.waitFor(raw.id, { timeout: 5000 })).rejects.toThrow(/does not match its schema/);
    expect(await client.getTask(raw.id)).toMatchObject({ state: 'dead', attempt: 1 });
  });
});

async function waitForState(client: Client, id: string, state: string) {
  const deadline = Date.now() + 5000;
  for (;;) {
    const task = await client.getTask(id);
    if (task?.state === state) return task;
    if (Date.now() > deadline) throw new Error(`task ${id} never reached ${state} (is ${task?.state})`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
