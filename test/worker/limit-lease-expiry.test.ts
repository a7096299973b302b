/**
 * A crashed worker's slots under a concurrency or groupConcurrency limit: a live worker claims
 * them when the crashed worker's lease expires (the claim's limitedUntil), not at its next lease
 * recovery (recoverInterval, 15 s here) nor at the end of its idle wait (30 s).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Client, Worker } from '../../src/index.js';
import { STORES, type TestStore } from '../helpers/stores.js';

const LEASE_MS = 2_000;

describe.each(STORES)('a crashed worker’s expired lease frees its slot for a live worker on %s', (_name, openStore) => {
  let store: TestStore;
  let client: Client;
  let worker: Worker | null = null;

  beforeEach(async () => {
    store = await openStore();
    client = new Client(store.backend);
  });

  afterEach(async () => {
    await worker?.stop({ timeout: 1000 });
    worker = null;
    await client.close();
    await store.cleanup();
  });

  for (const limit of ['concurrency', 'groupConcurrency'] as const) {
    it(`${limit} 1: the next task starts once the lease expires`, async () => {
      const { backend } = store;
      await backend.setQueueLimits('default', { [limit]: 1 });
      const options = limit === 'groupConcurrency' ? { group: 'A' } : {};
      await client.enqueue('job', { n: 1 }, options);
      const next = await client.enqueue('job', { n: 2 }, options);
      // The crashed worker: a claim never acked nor renewed.
      const [crashed] = await backend.claim('crashed-worker', [{ queue: 'default', count: 1 }], LEASE_MS);
      expect(crashed.tasks).toHaveLength(1);
      const expiresAt = crashed.tasks[0].leaseExpiresAt;
      const started: number[] = [];
      worker = new Worker(await store.reopen(), { leaseMs: LEASE_MS, recoverInterval: 15_000, heartbeatInterval: 1000 });
      worker.handle('job', async () => {
        started.push(Date.now());
        return 'done';
      });
      await worker.start();
      expect(await client.waitFor(next.id, { timeout: 8_000 })).toBe('done');
      // Not before the lease expired (the limit held), and well before the recovery's 15 s.
      expect(started[0]).toBeGreaterThanOrEqual(expiresAt - 50);
      expect(started[0] - expiresAt).toBeLessThan(3_000);
    }, 15_000);
  }
});
