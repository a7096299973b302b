import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Client, TasklineError } from '../../src/index.js';
import { STORES, type TestStore } from '../helpers/stores.js';

// Enqueues issued in the same tick may be stored together (the Redis backend groups them into
// one script call): each call must still get the outcome it would get if the calls ran one
// after another, in order.
describe.each(STORES)('concurrent enqueues on %s', (_name, openStore) => {
  let store: TestStore;
  let client: Client;

  beforeEach(async () => {
    store = await openStore();
    client = new Client(store.backend);
  });

  afterEach(async () => {
    await client.close();
    await store.cleanup();
  });

  it('each call gets its own outcome: the first of a custom id or unique key wins, the rest conflict', async () => {
    const results = await Promise.allSettled([
      client.enqueue('a', { n: 1 }, { id: 'same-id' }),
      client.enqueue('a', { n: 2 }, { id: 'same-id', queue: 'other' }),
      client.enqueue('b', { n: 3 }, { uniqueKey: 'k', uniqueFor: 60_000 }),
      client.enqueue('b', { n: 4 }, { uniqueKey: 'k', uniqueFor: 60_000 }),
      client.enqueueMany([{ type: 'c', payload: 5 }, { type: 'c', payload: 6, options: { queue: 'other' } }]),
      client.enqueue('d', 7),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    for (const i of [1, 3]) {
      const reason = (results[i] as PromiseRejectedResult).reason as unknown;
      expect(reason).toBeInstanceOf(TasklineError);
      expect((reason as TasklineError).code).toBe('TL_TASK_CONFLICT');
    }
    const many = (results[4] as PromiseFulfilledResult<{ queue: string }[]>).value;
    expect(many.map((t) => t.queue)).toEqual(['default', 'other']);
    expect((await client.getTask('same-id'))?.payload).toEqual({ n: 1 });
  });

  it('a thousand enqueues in one tick are all stored, each with its own id', async () => {
    const infos = await Promise.all(Array.from({ length: 1000 }, (_, i) => client.enqueue('bulk', { i })));
    expect(new Set(infos.map((t) => t.id)).size).toBe(1000);
    const [queue] = await store.backend.listQueues();
    expect(queue.counts.queued).toBe(1000);
  });
});
