/**
 * Conformance: queue controls (setQueueLimits) — stored with the queue, refused when bad, and
 * applied by the store itself: maxLength in every enqueue, concurrency and rate in every claim.
 */
import { describe, expect, it } from 'vitest';
import { noLimits, type Backend, type EnqueueOutcome } from '../contract.js';
import { ackOk, completeAck, enqueueOne, expectCode, LEASE_MS, newTask, retryAck, useStore, WORKER, type OpenStore } from './harness.js';

/** Enqueues `n` tasks in one call (one batch) and returns the outcomes. */
async function enqueueBatch(backend: Backend, n: number, queue = 'default', options: { delay?: number } = {}): Promise<EnqueueOutcome[]> {
  return backend.enqueue(Array.from({ length: n }, (_, i) => newTask('t', { i }, { queue, ...options })));
}

async function claimCount(backend: Backend, count: number, queue = 'default', leaseMs = LEASE_MS) {
  const [result] = await backend.claim(WORKER, [{ queue, count }], leaseMs);
  return result;
}

export function limitsConformance(openStore: OpenStore): void {
  describe('queue limits: settings', () => {
    const store = useStore(openStore);

    it('are unset by default, set in part, changed and removed with null or "none", and shown with the queue', async () => {
      const { backend } = store;
      await enqueueOne(backend, 't');
      expect((await backend.getQueue('default'))!.limits).toEqual(noLimits());
      expect(await backend.setQueueLimits('default', { rate: { limit: 50, intervalMs: 1000 }, concurrency: 5 })).toEqual({
        rate: { limit: 50, intervalMs: 1000 }, concurrency: 5, groupConcurrency: null, maxLength: null,
      });
      expect(await backend.setQueueLimits('default', { maxLength: 100, groupConcurrency: 2, concurrency: undefined })).toEqual({
        rate: { limit: 50, intervalMs: 1000 }, concurrency: 5, groupConcurrency: 2, maxLength: 100,
      });
      expect(await backend.setQueueLimits('default', { rate: 'none', concurrency: null })).toEqual({
        rate: null, concurrency: null, groupConcurrency: 2, maxLength: 100,
      });
      expect(await backend.setQueueLimits('default', {})).toEqual({ rate: null, concurrency: null, groupConcurrency: 2, maxLength: 100 });
      expect((await backend.getQueue('default'))!.limits).toEqual({ rate: null, concurrency: null, groupConcurrency: 2, maxLength: 100 });
      expect((await backend.listQueues()).find((q) => q.name === 'default')!.limits).toEqual({ rate: null, concurrency: null, groupConcurrency: 2, maxLength: 100 });
    });

    it('register a queue not used yet, and belong to their queue only', async () => {
      const { backend } = store;
      expect((await backend.setQueueLimits('fresh', { concurrency: 3 })).concurrency).toBe(3);
      expect((await backend.listQueues()).map((q) => q.name)).toContain('fresh');
      await enqueueOne(backend, 't', {}, { queue: 'other' });
      expect((await backend.getQueue('other'))!.limits).toEqual(noLimits());
    });

    it('refuses bad limits with TL_INVALID_ARGUMENT and stores none of the call', async () => {
      const { backend } = store;
      await backend.setQueueLimits('default', { concurrency: 4 });
      const bad: unknown[] = [
        { concurrency: -1 }, { concurrency: 0 }, { concurrency: 2.5 }, { concurrency: '3' }, { maxLength: 0 }, { groupConcurrency: Number.NaN },
        { rate: { limit: 10, intervalMs: 0 } }, { rate: { limit: 0, intervalMs: 1000 } }, { rate: { limit: 10 } }, { rate: { limit: 10, intervalMs: 1000, burst: 2 } },
        { rate: 10 }, { speed: 1 }, { concurrency: 2, speed: 1 }, { maxLength: 5, concurrency: -1 }, null, [], 'fast',
      ];
      for (const limits of bad) await expectCode(backend.setQueueLimits('default', limits as never), 'TL_INVALID_ARGUMENT');
      expect((await backend.getQueue('default'))!.limits).toEqual({ ...noLimits(), concurrency: 4 });
    });
  });

  describe('queue limits: maxLength', () => {
    const store = useStore(openStore);

    it('refuses the enqueue that would take the waiting tasks past it, naming the queue and bound', async () => {
      const { backend } = store;
      await backend.setQueueLimits('default', { maxLength: 3 });
      expect((await enqueueBatch(backend, 3)).every((o) => o.ok)).toBe(true);
      const [refused] = await enqueueBatch(backend, 1);
      expect(refused).toMatchObject({ ok: false, reason: 'queue-full', queue: 'default', limit: 3, waiting: 3 });
      expect((await backend.getQueue('default'))!.counts.queued).toBe(3);
      // Running tasks are not waiting: a claim makes room.
      await claimCount(backend, 1);
      expect((await enqueueBatch(backend, 1))[0].ok).toBe(true);
      expect((await enqueueBatch(backend, 1))[0]).toMatchObject({ ok: false, reason: 'queue-full' });
    });

    it('refuses a batch that would cross it whole, and takes one that fits exactly', async () => {
      const { backend } = store;
      await backend.setQueueLimits('default', { maxLength: 5 });
      expect((await enqueueBatch(backend, 3)).every((o) => o.ok)).toBe(true);
      const outcomes = await enqueueBatch(backend, 3);
      expect(outcomes.map((o) => (o.ok ? 'ok' : o.reason))).toEqual(['queue-full', 'queue-full', 'queue-full']);
      expect((await backend.getQueue('default'))!.counts.queued).toBe(3);
      // The queue counts what it refused (the task center's metric and alert read it).
      expect((await backend.getQueue('default'))!.refused).toBe(3);
      expect((await enqueueBatch(backend, 2)).every((o) => o.ok)).toBe(true);
      expect((await backend.getQueue('default'))!.counts.queued).toBe(5);
    });

    it('refuses a large batch whole (larger than one store call takes)', async () => {
      const { backend } = store;
      await backend.setQueueLimits('default', { maxLength: 1500 });
      expect((await enqueueBatch(backend, 1000)).every((o) => o.ok)).toBe(true);
      const outcomes = await enqueueBatch(backend, 501);
      expect(outcomes.every((o) => !o.ok && o.reason === 'queue-full')).toBe(true);
      expect((await backend.getQueue('default'))!.counts.queued).toBe(1000);
      expect((await enqueueBatch(backend, 500)).every((o) => o.ok)).toBe(true);
    });

    it('counts scheduled and retrying tasks as waiting', async () => {
      const { backend } = store;
      await backend.setQueueLimits('default', { maxLength: 2 });
      expect((await enqueueBatch(backend, 1, 'default', { delay: 60_000 }))[0].ok).toBe(true);
      expect((await enqueueBatch(backend, 1))[0].ok).toBe(true);
      const task = (await claimCount(backend, 1)).tasks[0];
      await ackOk(backend, retryAck(task, 'again', 60_000));
      expect((await backend.getQueue('default'))!.counts).toMatchObject({ scheduled: 1, retrying: 1, queued: 0 });
      expect((await enqueueBatch(backend, 1))[0]).toMatchObject({ ok: false, reason: 'queue-full', waiting: 2 });
    });

    it('answers a duplicate (unique key or id) with a conflict, not a refusal, and counts only new tasks', async () => {
      const { backend } = store;
      await backend.setQueueLimits('default', { maxLength: 2 });
      const holder = await enqueueOne(backend, 't', {}, { uniqueKey: 'u1', uniqueFor: 60_000 });
      await enqueueOne(backend, 't');
      const [again] = await backend.enqueue([newTask('t', {}, { uniqueKey: 'u1', uniqueFor: 60_000 })]);
      expect(again).toMatchObject({ ok: false, reason: 'unique-conflict', holder });
      const [sameId] = await backend.enqueue([newTask('t', {}, { id: holder })]);
      expect(sameId).toMatchObject({ ok: false, reason: 'id-conflict' });
      expect((await backend.getQueue('default'))!.refused).toBe(0);
      // Room for one: a batch of a duplicate and a new task takes the new one.
      await backend.setQueueLimits('default', { maxLength: 3 });
      const [dup, fresh] = await backend.enqueue([newTask('t', {}, { uniqueKey: 'u1', uniqueFor: 60_000 }), newTask('t')]);
      expect(dup).toMatchObject({ ok: false, reason: 'unique-conflict', holder });
      expect(fresh.ok).toBe(true);
      expect((await enqueueBatch(backend, 1))[0]).toMatchObject({ ok: false, reason: 'queue-full', waiting: 3 });
      expect((await backend.getQueue('default'))!.refused).toBe(1);
    });

    it('binds its own queue only, and is lifted with "none"', async () => {
      const { backend } = store;
      await backend.setQueueLimits('small', { maxLength: 1 });
      expect((await enqueueBatch(backend, 1, 'small'))[0].ok).toBe(true);
      expect((await enqueueBatch(backend, 5, 'default')).every((o) => o.ok)).toBe(true);
      expect((await enqueueBatch(backend, 1, 'small'))[0].ok).toBe(false);
      await backend.setQueueLimits('small', { maxLength: 'none' });
      expect((await enqueueBatch(backend, 3, 'small')).every((o) => o.ok)).toBe(true);
    });
  });

  describe('queue limits: concurrency', () => {
    const store = useStore(openStore);

    it('claims no more than the limit running across claims, and frees a slot when a task ends', async () => {
      const { backend } = store;
      await backend.setQueueLimits('default', { concurrency: 3 });
      await enqueueBatch(backend, 10);
      const first = await claimCount(backend, 2);
      expect(first.tasks).toHaveLength(2);
      const second = await claimCount(backend, 5);
      expect(second.tasks).toHaveLength(1);
      expect(second.limited).toBe('concurrency');
      const third = await claimCount(backend, 5);
      expect(third.tasks).toHaveLength(0);
      expect(third).toMatchObject({ limited: 'concurrency', more: true });
      await ackOk(backend, completeAck(first.tasks[0]));
      expect((await claimCount(backend, 5)).tasks).toHaveLength(1);
      expect((await backend.getQueue('default'))!.counts).toMatchObject({ running: 3, queued: 6, completed: 1 });
    });

    it('gives an expired lease’s slot back (a crashed worker)', async () => {
      const { backend } = store;
      await backend.setQueueLimits('default', { concurrency: 1 });
      await enqueueBatch(backend, 3);
      expect((await claimCount(backend, 1, 'default', 1_000)).tasks).toHaveLength(1);
      expect((await claimCount(backend, 1)).tasks).toHaveLength(0);
      // 2 s later the lease has expired: its slot is free again, before any recovery ran.
      const later = await store.later(2_000);
      expect((await claimCount(later, 1)).tasks).toHaveLength(1);
    });

    it('says when the earliest live lease expires (a crashed worker’s): the claim’s limitedUntil', async () => {
      const { backend } = store;
      await backend.setQueueLimits('default', { concurrency: 2 });
      await enqueueBatch(backend, 5);
      const crashed = (await claimCount(backend, 1, 'default', 2_000)).tasks[0];
      const held = await claimCount(backend, 5);
      expect(held.tasks).toHaveLength(1);
      expect(held).toMatchObject({ limited: 'concurrency', limitedUntil: crashed.leaseExpiresAt });
      expect(await claimCount(backend, 5)).toMatchObject({ tasks: [], limited: 'concurrency', limitedUntil: crashed.leaseExpiresAt });
      const later = await store.later(2_500);
      const next = await claimCount(later, 5);
      expect(next.tasks).toHaveLength(1);
      // Now the earliest live lease is the second claim's.
      expect(next).toMatchObject({ limited: 'concurrency', limitedUntil: held.tasks[0].leaseExpiresAt });
    });

    it('is unlimited again once removed', async () => {
      const { backend } = store;
      await backend.setQueueLimits('default', { concurrency: 1 });
      await enqueueBatch(backend, 4);
      expect((await claimCount(backend, 4)).tasks).toHaveLength(1);
      await backend.setQueueLimits('default', { concurrency: null });
      const after = await claimCount(backend, 4);
      expect(after.tasks).toHaveLength(3);
      expect(after.limited).toBeNull();
    });
  });

  describe('queue limits: rate', () => {
    const store = useStore(openStore);

    it('starts at most `limit` in any interval, and says when the next start is allowed', async () => {
      const { backend } = store;
      await backend.setQueueLimits('default', { rate: { limit: 3, intervalMs: 1000 } });
      await enqueueBatch(backend, 10);
      const first = await claimCount(backend, 2);
      expect(first.tasks).toHaveLength(2);
      expect(first.limited).toBeNull();
      const second = await claimCount(backend, 5);
      expect(second.tasks).toHaveLength(1);
      expect(second.limited).toBe('rate');
      const third = await claimCount(backend, 5);
      expect(third.tasks).toHaveLength(0);
      expect(third.limited).toBe('rate');
      // The window slides from the first starts: they leave it 1 s after they were made.
      expect(third.limitedUntil).toBeGreaterThan(third.now);
      expect(third.limitedUntil! - first.now).toBeGreaterThanOrEqual(1000);
      expect(third.limitedUntil! - first.now).toBeLessThanOrEqual(1001);
      // Ending tasks gives no budget back: the rate counts starts.
      for (const task of first.tasks) await ackOk(backend, completeAck(task));
      expect((await claimCount(backend, 5)).tasks).toHaveLength(0);
      const later = await store.later(1_100);
      const next = await claimCount(later, 5);
      expect(next.tasks).toHaveLength(3);
      expect(next.limited).toBe('rate');
    });

    it('shows in the queue which limit holds its tasks back now, and a waiting task says so', async () => {
      const { backend } = store;
      await backend.setQueueLimits('default', { rate: { limit: 2, intervalMs: 60_000 } });
      await backend.setQueueLimits('busy', { concurrency: 1 });
      await enqueueBatch(backend, 3);
      await enqueueBatch(backend, 2, 'busy');
      expect((await backend.getQueue('default'))!.held).toBeNull();
      const first = await claimCount(backend, 3);
      expect((await backend.getQueue('default'))!.held).toEqual({ limit: 'rate', until: first.now + 60_000 });
      expect((await backend.getQueue('busy'))!.held).toBeNull();
      await claimCount(backend, 2, 'busy');
      expect((await backend.getQueue('busy'))!.held).toEqual({ limit: 'concurrency', until: null });
      const later = await store.later(61_000);
      expect((await later.getQueue('default'))!.held).toBeNull();
    });

    it('binds its own queue only, and is lifted with null', async () => {
      const { backend } = store;
      await backend.setQueueLimits('slow', { rate: { limit: 1, intervalMs: 60_000 } });
      await enqueueBatch(backend, 3, 'slow');
      await enqueueBatch(backend, 3, 'default');
      expect((await claimCount(backend, 3, 'slow')).tasks).toHaveLength(1);
      expect((await claimCount(backend, 3, 'default')).tasks).toHaveLength(3);
      await backend.setQueueLimits('slow', { rate: null });
      expect((await claimCount(backend, 3, 'slow')).tasks).toHaveLength(2);
    });

    it('holds together with a concurrency limit: the tighter one binds', async () => {
      const { backend } = store;
      await backend.setQueueLimits('default', { rate: { limit: 2, intervalMs: 60_000 }, concurrency: 5 });
      await enqueueBatch(backend, 6);
      const claimed = await claimCount(backend, 6);
      expect(claimed.tasks).toHaveLength(2);
      expect(claimed.limited).toBe('rate');
    });
  });
}
