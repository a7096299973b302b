import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Client, TasklineError } from '../../src/index.js';
import { STORES, type TestStore } from '../helpers/stores.js';

describe.each(STORES)('client enqueue on %s', (_name, openStore) => {
  let store: TestStore;
  let client: Client;

  beforeEach(async () => {
    store = await openStore();
    client = new Client(store.backend, { maxPayloadBytes: 1024 });
  });

  afterEach(async () => {
    await client.close();
    await store.cleanup();
  });

  async function nothingStored(): Promise<void> {
    const queues = await store.backend.listQueues();
    const total = queues.reduce((sum, q) => sum + Object.values(q.counts).reduce((a, b) => a + b, 0), 0);
    expect(total).toBe(0);
  }

  it('stores a task with its options and returns its info', async () => {
    const info = await client.enqueue('report:generate', { week: 48 }, { queue: 'critical', maxRetries: 5, timeout: 60_000, headers: { traceparent: 'x' } });
    expect(info).toMatchObject({ type: 'report:generate', queue: 'critical', state: 'queued' });
    expect(info.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const task = await client.getTask(info.id);
    expect(task).toMatchObject({ payload: { week: 48 }, maxRetries: 5, timeout: 60_000, headers: { traceparent: 'x' }, attempt: 0 });
  });

  it('rejects a duplicate id with a conflict error, in any state and any queue', async () => {
    await client.enqueue('a', {}, { id: 'order-42' });
    await expect(client.enqueue('a', {}, { id: 'order-42' })).rejects.toMatchObject({ code: 'TL_TASK_CONFLICT', message: expect.stringContaining('order-42') });
    await expect(client.enqueue('a', {}, { id: 'order-42', queue: 'other' })).rejects.toMatchObject({ code: 'TL_TASK_CONFLICT' });
    await store.backend.cancelTask('order-42');
    await expect(client.enqueue('a', {}, { id: 'order-42' })).rejects.toMatchObject({ code: 'TL_TASK_CONFLICT' });
    expect((await store.backend.getQueue('other'))?.counts.queued ?? 0).toBe(0);
  });

  it('uniqueFor rejects a second task with the same type, queue and payload until the first finishes', async () => {
    const first = await client.enqueue('sync', { account: 1, a: [1, 2] }, { uniqueFor: 60_000 });
    // Same payload with keys in another order is the same payload.
    await expect(client.enqueue('sync', { a: [1, 2], account: 1 }, { uniqueFor: 60_000 })).rejects.toMatchObject({ code: 'TL_TASK_CONFLICT' });
    // Another payload, type or queue is another task.
    await client.enqueue('sync', { account: 2, a: [1, 2] }, { uniqueFor: 60_000 });
    await client.enqueue('sync', { account: 1, a: [1, 2] }, { uniqueFor: 60_000, queue: 'q2' });
    await client.enqueue('sync:other', { account: 1, a: [1, 2] }, { uniqueFor: 60_000 });
    // Once the first is finished (here: cancelled), the key is free again.
    await store.backend.cancelTask(first.id);
    await client.enqueue('sync', { account: 1, a: [1, 2] }, { uniqueFor: 60_000 });
  });

  it('uniqueFor expires after its TTL; uniqueKey replaces the payload', async () => {
    await client.enqueue('ping', { n: 1 }, { uniqueFor: 150, uniqueKey: 'host-a' });
    await expect(client.enqueue('ping', { n: 2 }, { uniqueFor: 150, uniqueKey: 'host-a' })).rejects.toMatchObject({ code: 'TL_TASK_CONFLICT' });
    await new Promise((r) => setTimeout(r, 200));
    await client.enqueue('ping', { n: 3 }, { uniqueFor: 150, uniqueKey: 'host-a' });
  });

  it('stores a payload as JSON would write it: Dates as text, undefined members dropped', async () => {
    const at = new Date(Date.UTC(2030, 0, 2));
    const payload = { at, list: [null, 1.5, 'x', { deep: [true] }], gone: undefined };
    const info = await client.enqueue('shape', payload);
    expect((await client.getTask(info.id))!.payload).toEqual({ at: at.toISOString(), list: [null, 1.5, 'x', { deep: [true] }] });
  });

  const BAD_INPUT: [string, () => Promise<unknown>, string, RegExp][] = [
    ['payload too large', () => client.enqueue('t', { blob: 'x'.repeat(2000) }), 'TL_PAYLOAD_TOO_LARGE', /payload is \d+ bytes; the maximum is 1024 bytes/],
    ['a function in the payload', () => client.enqueue('t', { f: () => 1 }), 'TL_PAYLOAD_NOT_JSON', /function/],
    ['a bigint in the payload', () => client.enqueue('t', { n: 10n }), 'TL_PAYLOAD_NOT_JSON', /bigint/],
    ['NaN in the payload', () => client.enqueue('t', { n: NaN }), 'TL_PAYLOAD_NOT_JSON', /NaN/],
    ['Infinity deep in the payload', () => client.enqueue('t', { a: [1, { b: Infinity }] }), 'TL_PAYLOAD_NOT_JSON', /Infinity at "b"/],
    ['a function inside an array', () => client.enqueue('t', [1, 2, () => 3]), 'TL_PAYLOAD_NOT_JSON', /function at "2"/],
    ['a symbol as the payload', () => client.enqueue('t', Symbol('s')), 'TL_PAYLOAD_NOT_JSON', /symbol at the top level/],
    ['a bigint deep in the payload', () => client.enqueue('t', { a: { b: [10n] } }), 'TL_PAYLOAD_NOT_JSON', /bigint at "0"/],
    ['a cyclic payload', () => {
      const a: Record<string, unknown> = {};
      a.self = a;
      return client.enqueue('t', a);
    }, 'TL_PAYLOAD_NOT_JSON', /not JSON-serialisable: .*circular/i],
    ['a negative delay', () => client.enqueue('t', {}, { delay: -5 }), 'TL_INVALID_OPTION', /delay must be a whole number of milliseconds from 0 to 3155760000000, got -5$/],
    ['delay and runAt together', () => client.enqueue('t', {}, { delay: 5, runAt: Date.now() }), 'TL_INVALID_OPTION', /delay and runAt/],
    ['an invalid queue name', () => client.enqueue('t', {}, { queue: 'no spaces!' }), 'TL_INVALID_ARGUMENT', /queue name is 1–100 characters/],
    ['a queue name with a hash tag', () => client.enqueue('t', {}, { queue: '{x}' }), 'TL_INVALID_ARGUMENT', /queue name/],
    ['an unknown option', () => client.enqueue('t', {}, { retries: 3 } as never), 'TL_INVALID_OPTION', /unknown enqueue option "retries"; accepted: queue, id, maxRetries/],
    ['an empty type', () => client.enqueue('', {}), 'TL_INVALID_ARGUMENT', /invalid task type/],
    ['a type that is not a string', () => client.enqueue(42 as never, {}), 'TL_INVALID_ARGUMENT', /invalid task type/],
    ['an invalid id', () => client.enqueue('t', {}, { id: 'has space' }), 'TL_INVALID_ARGUMENT', /invalid task id/],
    // A URL resolves "." and ".." segments away: such a task could never be addressed by id.
    ['the id ".."', () => client.enqueue('t', {}, { id: '..' }), 'TL_INVALID_ARGUMENT', /without a "\." or "\.\." between slashes/],
    ['the id "."', () => client.enqueue('t', {}, { id: '.' }), 'TL_INVALID_ARGUMENT', /invalid task id "\."/],
    ['an id with a ".." segment', () => client.enqueue('t', {}, { id: 'a/../b' }), 'TL_INVALID_ARGUMENT', /invalid task id/],
    ['negative maxRetries', () => client.enqueue('t', {}, { maxRetries: -1 }), 'TL_INVALID_OPTION', /maxRetries/],
    ['a zero timeout', () => client.enqueue('t', {}, { timeout: 0 }), 'TL_INVALID_OPTION', /timeout must be a whole number of milliseconds from 1 to/],
    ['uniqueKey without uniqueFor', () => client.enqueue('t', {}, { uniqueKey: 'k' }), 'TL_INVALID_OPTION', /uniqueKey needs uniqueFor/],
    ['a bad backoff', () => client.enqueue('t', {}, { backoff: { type: 'linear' } as never }), 'TL_INVALID_OPTION', /backoff must be/],
    ['a non-string header', () => client.enqueue('t', {}, { headers: { a: 1 } as never }), 'TL_INVALID_OPTION', /headers.a must be a string/],
    ['options that are not an object', () => client.enqueue('t', {}, 'fast' as never), 'TL_INVALID_OPTION', /options must be an object/],
    ['a bad runAt', () => client.enqueue('t', {}, { runAt: 'tomorrow' as never }), 'TL_INVALID_OPTION', /runAt must be a time \(epoch ms, a Date or an ISO-8601 text\) from \d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d, got "tomorrow"/],
    // The range named is the one enforced: never before 1970.
    ['a runAt before 1970', () => client.enqueue('t', {}, { runAt: '1950-01-01T00:00:00Z' }), 'TL_INVALID_OPTION', /^runAt must be a time .* from 1970-01-01 to \d{4}-\d\d-\d\d, got "1950-01-01T00:00:00Z"$/],
    ['a maxRetries of Infinity', () => client.enqueue('t', {}, { maxRetries: Infinity }), 'TL_INVALID_OPTION', /maxRetries must be a whole number from 0 to 1000, got Infinity$/],
    // Times and durations beyond what can be read back (finding 1): ±100 years, never past Date's range.
    ['a runAt past Date', () => client.enqueue('t', {}, { runAt: Number.MAX_SAFE_INTEGER }), 'TL_INVALID_OPTION', /runAt must be a time .*, got 9007199254740991$/],
    ['a runAt 101 years ahead', () => client.enqueue('t', {}, { runAt: Date.now() + 101 * 365.25 * 86_400_000 }), 'TL_INVALID_OPTION', /runAt must be a time/],
    ['an invalid Date', () => client.enqueue('t', {}, { runAt: new Date(Number.NaN) }), 'TL_INVALID_OPTION', /runAt must be a time .*, got an invalid Date/],
    ['a delay past Date', () => client.enqueue('t', {}, { delay: 8640000000000001 }), 'TL_INVALID_OPTION', /delay must be a whole number of milliseconds from 0 to/],
    ['a deadline of 1e300', () => client.enqueue('t', {}, { deadline: 1e300 }), 'TL_INVALID_OPTION', /deadline must be a time/],
    ['a retention of 1e300', () => client.enqueue('t', {}, { retention: 1e300 }), 'TL_INVALID_OPTION', /retention must be a whole number/],
    // Strings must be well-formed Unicode (finding 3).
    ['a lone surrogate in the type', () => client.enqueue('a\ud800', {}), 'TL_INVALID_ARGUMENT', /invalid task type "a\\ud800"/],
    ['a lone surrogate in a header', () => client.enqueue('t', {}, { headers: { h: '\udc00' } }), 'TL_INVALID_OPTION', /headers.h must be a string of at most 8,192 characters/],
    ['a lone surrogate in a header name', () => client.enqueue('t', {}, { headers: { '\ud800': 'v' } }), 'TL_INVALID_OPTION', /headers name must be/],
    ['a lone surrogate in the payload', () => client.enqueue('t', { a: ['ok', 'x\ud800'] }), 'TL_PAYLOAD_NOT_JSON', /lone UTF-16 surrogate at "1"/],
    ['a lone surrogate in a payload key', () => client.enqueue('t', { '\udfff': 1 }), 'TL_PAYLOAD_NOT_JSON', /key with a lone UTF-16 surrogate/],
    ['a lone surrogate in uniqueKey', () => client.enqueue('t', {}, { uniqueFor: 1000, uniqueKey: '\ud800' }), 'TL_INVALID_OPTION', /uniqueKey must be/],
    // An error quotes at most ~100 characters of the bad value (finding 7).
    ['a 1 MB type', () => client.enqueue('x'.repeat(1_000_000), {}), 'TL_INVALID_ARGUMENT', /^invalid task type "x{100}"… \(1000000 characters\): a type is/],
  ];

  it.each(BAD_INPUT)('rejects %s with a clear error and stores nothing', async (_label, attempt, code, message) => {
    const error = await attempt().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TasklineError);
    expect((error as TasklineError).code).toBe(code);
    expect((error as TasklineError).message).toMatch(message);
    expect((error as TasklineError).message.length).toBeLessThan(400);
    await nothingStored();
  });

  it('takes runAt and deadline as ISO-8601 text too (as the HTTP API and config files give them)', async () => {
    const at = new Date(Date.now() + 3_600_000);
    const info = await client.enqueue('t', {}, { runAt: at.toISOString(), deadline: new Date(at.getTime() + 60_000).toISOString() });
    expect(info.state).toBe('scheduled');
    expect(await client.getTask(info.id)).toMatchObject({ nextRunAt: at.getTime(), deadline: at.getTime() + 60_000 });
  });

  it('enqueueMany stores a batch, and stores nothing when any item is invalid', async () => {
    await expect(
      client.enqueueMany([
        { type: 'a', payload: 1 },
        { type: 'b', payload: 2, options: { delay: -1 } },
      ]),
    ).rejects.toMatchObject({ code: 'TL_INVALID_OPTION', message: expect.stringMatching(/^item 1: /) });
    await nothingStored();
    const infos = await client.enqueueMany([
      { type: 'a', payload: 1 },
      { type: 'b', payload: 2, options: { queue: 'other', delay: 60_000 } },
    ]);
    expect(infos.map((i) => [i.type, i.queue, i.state])).toEqual([
      ['a', 'default', 'queued'],
      ['b', 'other', 'scheduled'],
    ]);
  });

  it('enqueueMany reports duplicates and stores the rest', async () => {
    await client.enqueue('a', {}, { id: 'taken' });
    const error = await client.enqueueMany([
      { type: 'a', payload: 1, options: { id: 'fresh-1' } },
      { type: 'a', payload: 2, options: { id: 'taken' } },
      { type: 'a', payload: 3, options: { id: 'fresh-2' } },
    ]).catch((e: unknown) => e as TasklineError);
    expect(error).toMatchObject({ code: 'TL_TASK_CONFLICT', message: expect.stringContaining('1 of 3 tasks were rejected') });
    expect(await client.getTask('fresh-1')).not.toBeNull();
    expect(await client.getTask('fresh-2')).not.toBeNull();
  });

  it('waitFor rejects for an unknown task and times out clearly', async () => {
    await expect(client.waitFor('does-not-exist', { timeout: 1000 })).rejects.toMatchObject({ code: 'TL_TASK_NOT_FOUND' });
    const info = await client.enqueue('nobody', {});
    await expect(client.waitFor(info.id, { timeout: 100 })).rejects.toMatchObject({ code: 'TL_TIMEOUT' });
  });

  it('waitFor says why a task its queue keeps none of is gone once it finished', async () => {
    const { backend } = store;
    await backend.setQueueKeep('default', { completed: 0, dead: 0 });
    const ok = await client.enqueue('a', {});
    const bad = await client.enqueue('a', {}, { maxRetries: 0 });
    // The client's subscription is made first (a first wait): events published before it are
    // heard by nobody. The waits' first reads may then come before or after the acks below; a read
    // that finds no task before the finished event arrives waits a moment for it (GONE_GRACE_MS).
    await client.waitFor(ok.id, { timeout: 1 }).catch(() => undefined);
    const waits = [client.waitFor(ok.id, { timeout: 5000 }).catch((e: unknown) => e), client.waitFor(bad.id, { timeout: 5000 }).catch((e: unknown) => e)];
    const [claimed] = await backend.claim('w', [{ queue: 'default', count: 2 }], 30_000);
    const attempt = (t: (typeof claimed.tasks)[number]) => ({ attempt: 1, startedAt: t.startedAt, finishedAt: Date.now(), outcome: 'completed' as const, error: null, stack: null, workerId: 'w' });
    const [first, second] = claimed.tasks;
    expect(await backend.ack([
      { kind: 'complete', id: first.id, queue: 'default', token: first.token, result: '{"n":1}', attempt: attempt(first) },
      { kind: 'dead', id: second.id, queue: 'default', token: second.token, error: 'boom', attempt: { ...attempt(second), outcome: 'failed', error: 'boom' } },
    ])).toEqual(['ok', 'ok']);
    const [completed, dead] = await Promise.all(waits);
    expect(completed).toMatchObject({ code: 'TL_TASK_NOT_FOUND', message: expect.stringContaining(`task ${ok.id} finished (completed), but its record is gone`) });
    expect(dead).toMatchObject({ code: 'TL_TASK_FAILED', state: 'dead', taskId: bad.id });
  });
});

describe('defineTask types', () => {
  it('producers pass zod input types (defaulted fields optional); handlers get the parsed output', async () => {
    const { z } = await import('zod');
    const { defineTask } = await import('../../src/index.js');
    const report = defineTask('report', { schema: z.object({ week: z.number(), format: z.enum(['csv', 'pdf']).default('csv') }) });
    // Compiled, never run: the type check of the tests fails if these signatures regress.
    const typeCheck = (client: Client, worker: import('../../src/index.js').Worker) => {
      void client.enqueue(report, { week: 1 });
      worker.handle(report, async (payload) => payload.format.toUpperCase());
    };
    expect(typeof typeCheck).toBe('function');
    expect(report.schema!.safeParse({ week: 1 })).toMatchObject({ success: true, data: { week: 1, format: 'csv' } });
  });
});
