/**
 * A crashed worker's slots under a concurrency or groupConcurrency limit: a live worker claims
 * them when the crashed worker's lease expires (the claim's limitedUntil), not at its next lease
 * recovery (recoverInterval, 15 s here) nor at the end of its idle wait (30 s).
 */
import { describe, expect, it } from 'vitest';
import { Worker } from '../../src/index.js';
import { STORES } from '../helpers/stores.js';
import { useClientStore } from '../helpers/client-store.js';

const LEASE_MS = 2_000;

describe.each(STORES)('a crashed worker’s expired lease frees its slot for a live worker on %s', (_name, openStore) => {
  const t = useClientStore(openStore);

  for (const limit of ['concurrency', 'groupConcurrency'] as const) {
    it(`${limit} 1: the next task starts once the lease expires`, async () => {
      const { backend } = t.store;
      await backend.setQueueLimits('default', { [limit]: 1 });
      const options = limit === 'groupConcurrency' ? { group: 'A' } : {};
      await t.client.enqueue('job', { n: 1 }, options);
      const next = await t.client.enqueue('job', { n: 2 }, options);
      // The crashed worker: a claim never acked nor renewed.
      const [crashed] = await backend.claim('crashed-worker', [{ queue: 'default', count: 1 }], LEASE_MS);
      expect(crashed.tasks).toHaveLength(1);
      const expiresAt = crashed.tasks[0].leaseExpiresAt;
      const started: number[] = [];
      t.worker = new Worker(await t.store.reopen(), { leaseMs: LEASE_MS, recoverInterval: 15_000, heartbeatInterval: 1000 });
      t.worker.handle('job', async () => {
        started.push(Date.now());
        return 'done';
      });
      await t.worker.start();
      expect(await t.client.waitFor(next.id, { timeout: 8_000 })).toBe('done');
      // Not before the lease expired (the limit held), and well before the recovery's 15 s.
      expect(started[0]).toBeGreaterThanOrEqual(expiresAt - 50);
      expect(started[0] - expiresAt).toBeLessThan(3_000);
    }, 15_000);
  }
});
