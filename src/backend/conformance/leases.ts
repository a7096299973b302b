/**
 * Conformance: what happens while and after tasks run — lease renewal, recovery of expired
 * leases, forwarding due tasks, waiting for work, progress and log lines.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKOFF, JITTER_FRACTION } from '../../core/backoff.js';
import { MAX_LOG_LINES } from '../shared.js';
import {
  ackOk, claimOne, claimTask, completeAck, enqueueOne, HOUR, LEASE_MS, newTask, retryAck, timed, useStore, WORKER, type OpenStore,
} from './harness.js';

const LOST = 'lease expired (worker lost)';

export function leaseConformance(openStore: OpenStore): void {
  describe('renewLeases', () => {
    const store = useStore(openStore);

    it('takes batches larger than one store call: 9,000 tasks enqueued, claimed, renewed and acked in single calls', async () => {
      // Redis's Lua unpacks at most ~8,000 values into one call: the backend must split.
      const { backend } = store;
      const tasks = Array.from({ length: 9_000 }, (_, i) => newTask('big', { i }));
      const outcomes = await backend.enqueue(tasks);
      expect(outcomes.filter((o) => !o.ok)).toEqual([]);
      const claimed = [];
      while (claimed.length < tasks.length) {
        const [result] = await backend.claim(WORKER, [{ queue: 'default', count: 1000 }], LEASE_MS);
        expect(result.tasks.length).toBeGreaterThan(0);
        claimed.push(...result.tasks);
      }
      expect(claimed.map((t) => t.id)).toEqual(tasks.map((t) => t.id));
      expect(await backend.renewLeases(claimed.map((t) => ({ id: t.id, queue: t.queue, token: t.token })), LEASE_MS)).toEqual({ lost: [], cancelRequested: [] });
      const results = await backend.ack(claimed.map((t) => completeAck(t)));
      expect(results.filter((r) => r !== 'ok')).toEqual([]);
      expect((await backend.getQueue('default'))!.counts).toMatchObject({ queued: 0, running: 0, completed: 9_000 });
    }, 60_000);

    it('extends the leases it still holds', async () => {
      const { backend } = store;
      const id = await enqueueOne(backend);
      const claimed = await claimTask(backend, id, 'default', 10_000);
      expect(await backend.renewLeases([{ id, queue: 'default', token: claimed.token }], 60_000)).toEqual({ lost: [], cancelRequested: [] });
      expect(await (await store.later(30_000)).recoverExpired('default', 10)).toBe(0);
      expect((await backend.getTask(id))!.state).toBe('running');
      expect(await (await store.later(61_000)).recoverExpired('default', 10)).toBe(1);
    });

    it('reports leases that are no longer held: stale token, finished task, recovered task', async () => {
      const { backend } = store;
      const stale = await claimTask(backend, await enqueueOne(backend, 't', {}, { queue: 'a' }), 'a');
      const done = await claimTask(backend, await enqueueOne(backend, 't', {}, { queue: 'b' }), 'b');
      await ackOk(backend, completeAck(done));
      const recovered = await claimTask(backend, await enqueueOne(backend, 't', {}, { queue: 'a' }), 'a', 1000);
      expect(await (await store.later(2000)).recoverExpired('a', 10)).toBe(1);
      const held = await claimTask(backend, await enqueueOne(backend, 't', {}, { queue: 'b' }), 'b');
      const result = await backend.renewLeases([
        { id: stale.id, queue: 'a', token: 'not-the-token' },
        { id: done.id, queue: 'b', token: done.token },
        { id: recovered.id, queue: 'a', token: recovered.token },
        { id: held.id, queue: 'b', token: held.token },
        { id: 'never-existed', queue: 'a', token: '1' },
      ], LEASE_MS);
      expect([...result.lost].sort()).toEqual([stale.id, done.id, recovered.id, 'never-existed'].sort());
      expect(result.cancelRequested).toEqual([]);
      expect((await backend.getTask(stale.id))!.state).toBe('running');
    });

    it('reports running tasks an operator asked to cancel', async () => {
      const { backend } = store;
      const a = await claimTask(backend, await enqueueOne(backend));
      const b = await claimTask(backend, await enqueueOne(backend));
      expect(await backend.cancelTask(b.id)).toBe('cancel-requested');
      const leases = [a, b].map((t) => ({ id: t.id, queue: t.queue, token: t.token }));
      expect(await backend.renewLeases(leases, LEASE_MS)).toEqual({ lost: [], cancelRequested: [b.id] });
    });

    it('returns nothing for no leases', async () => {
      expect(await store.backend.renewLeases([], LEASE_MS)).toEqual({ lost: [], cancelRequested: [] });
    });
  });

  describe('recoverExpired', () => {
    const store = useStore(openStore);

    it('leaves leases that have not expired', async () => {
      const { backend } = store;
      await claimTask(backend, await enqueueOne(backend), 'default', 10_000);
      expect(await backend.recoverExpired('default', 10)).toBe(0);
      expect(await (await store.later(9000)).recoverExpired('default', 10)).toBe(0);
      expect((await backend.getQueue('default'))!.counts.running).toBe(1);
    });

    it('fails the attempt of an expired lease and retries the task with backoff', async () => {
      const { backend } = store;
      const id = await enqueueOne(backend);
      const claimed = await claimTask(backend, id, 'default', 10_000);
      const later = await store.later(11_000);
      const before = await later.now();
      expect(await later.recoverExpired('default', 10)).toBe(1);
      const after = await later.now();
      const record = (await backend.getTask(id))!;
      expect(record).toMatchObject({ state: 'retrying', attempt: 1, lastError: LOST, finishedAt: null });
      expect(record.attempts).toEqual([{
        attempt: 1, startedAt: claimed.startedAt, finishedAt: expect.any(Number), outcome: 'failed', error: LOST, stack: null, workerId: WORKER,
      }]);
      expect(record.attempts[0].finishedAt).toBeGreaterThanOrEqual(before);
      expect(record.attempts[0].finishedAt).toBeLessThanOrEqual(after);
      const base = DEFAULT_BACKOFF.type === 'exponential' ? DEFAULT_BACKOFF.base : 0;
      expect(record.nextRunAt).toBeGreaterThanOrEqual(before + base);
      expect(record.nextRunAt).toBeLessThanOrEqual(after + Math.round(base * (1 + JITTER_FRACTION)));
      expect(await backend.getQueue('default')).toMatchObject({ counts: { running: 0, retrying: 1 }, processed: 1, failed: 1 });
    });

    it("uses the task's own backoff", async () => {
      const { backend } = store;
      const id = await enqueueOne(backend, 't', {}, { backoff: { type: 'fixed', delay: 7000 } });
      await claimTask(backend, id, 'default', 1000);
      const later = await store.later(2000);
      const before = await later.now();
      expect(await later.recoverExpired('default', 10)).toBe(1);
      const after = await later.now();
      const { nextRunAt } = (await backend.getTask(id))!;
      expect(nextRunAt).toBeGreaterThanOrEqual(before + 7000);
      expect(nextRunAt).toBeLessThanOrEqual(after + 7000);
    });

    it('rejects the lost worker’s late writes after recovery', async () => {
      const { backend } = store;
      const id = await enqueueOne(backend);
      const claimed = await claimTask(backend, id, 'default', 1000);
      expect(await (await store.later(2000)).recoverExpired('default', 10)).toBe(1);
      expect(await backend.ack([completeAck(claimed, 'late')])).toEqual(['stale']);
      expect(await backend.reportProgress({ id, queue: 'default', token: claimed.token }, { progress: 50 })).toBe('stale');
      expect(await backend.getTask(id)).toMatchObject({ state: 'retrying', result: null, progress: null });
      const next = await claimOne(await store.later(HOUR));
      expect(next).toMatchObject({ id, attempt: 2 });
    });

    it('dead-letters a task with no retries left', async () => {
      const { backend } = store;
      const id = await enqueueOne(backend, 't', {}, { maxRetries: 1 });
      const first = await claimTask(backend, id, 'default', 1000);
      await ackOk(backend, retryAck(first, 'first failure', 0));
      await claimTask(backend, id, 'default', 1000);
      const later = await store.later(2000);
      expect(await later.recoverExpired('default', 10)).toBe(1);
      const record = (await backend.getTask(id))!;
      expect(record).toMatchObject({ state: 'dead', attempt: 2, lastError: LOST, nextRunAt: null });
      expect(record.finishedAt).toEqual(expect.any(Number));
      expect(record.attempts.map((a) => [a.attempt, a.outcome, a.error])).toEqual([[1, 'failed', 'first failure'], [2, 'failed', LOST]]);
      expect((await backend.getQueue('default'))!.counts).toMatchObject({ running: 0, dead: 1 });
    });

    it('dead-letters a task with maxRetries 0 at once', async () => {
      const { backend } = store;
      const id = await enqueueOne(backend, 't', {}, { maxRetries: 0 });
      await claimTask(backend, id, 'default', 1000);
      expect(await (await store.later(2000)).recoverExpired('default', 10)).toBe(1);
      expect(await backend.getTask(id)).toMatchObject({ state: 'dead', lastError: LOST });
    });

    it('dead-letters a task whose deadline has passed', async () => {
      const { backend } = store;
      const id = await enqueueOne(backend, 't', {}, { maxRetries: 5, deadline: (await backend.now()) + 5000 });
      await claimTask(backend, id, 'default', 10_000);
      expect(await (await store.later(11_000)).recoverExpired('default', 10)).toBe(1);
      expect(await backend.getTask(id)).toMatchObject({ state: 'dead', lastError: LOST });
    });

    it('cancels an expired task an operator asked to cancel', async () => {
      const { backend } = store;
      const id = await enqueueOne(backend);
      await claimTask(backend, id, 'default', 1000);
      expect(await backend.cancelTask(id)).toBe('cancel-requested');
      expect(await (await store.later(2000)).recoverExpired('default', 10)).toBe(1);
      expect(await backend.getTask(id)).toMatchObject({ state: 'cancelled', cancelRequested: false });
    });

    it('recovers at most `limit` tasks per call, only of its queue', async () => {
      const { backend } = store;
      await backend.enqueue([newTask('t'), newTask('t'), newTask('t'), newTask('t', {}, { queue: 'other' })]);
      await backend.claim(WORKER, [{ queue: 'default', count: 3 }, { queue: 'other', count: 1 }], 1000);
      const later = await store.later(2000);
      expect(await later.recoverExpired('default', 2)).toBe(2);
      expect(await later.recoverExpired('default', 2)).toBe(1);
      expect(await later.recoverExpired('default', 2)).toBe(0);
      expect((await backend.getQueue('other'))!.counts.running).toBe(1);
    });
  });

  describe('forwardDue', () => {
    const store = useStore(openStore);

    it('moves due scheduled tasks to queued and leaves the others', async () => {
      const { backend } = store;
      const soon = await enqueueOne(backend, 't', {}, { delay: 10_000 });
      const far = await enqueueOne(backend, 't', {}, { delay: HOUR });
      expect(await backend.forwardDue('default', 100)).toBe(0);
      const later = await store.later(11_000);
      const before = await later.now();
      expect(await later.forwardDue('default', 100)).toBe(1);
      const record = (await backend.getTask(soon))!;
      expect(record).toMatchObject({ state: 'queued', nextRunAt: null });
      expect(record.enqueuedAt).toBeGreaterThanOrEqual(before);
      expect((await backend.getTask(far))!.state).toBe('scheduled');
      expect((await backend.getQueue('default'))!.counts).toMatchObject({ queued: 1, scheduled: 1 });
    });

    it('moves due retrying tasks to queued', async () => {
      const { backend } = store;
      const id = await enqueueOne(backend);
      await ackOk(backend, retryAck(await claimTask(backend, id), 'x', 5000));
      expect(await backend.forwardDue('default', 100)).toBe(0);
      expect(await (await store.later(6000)).forwardDue('default', 100)).toBe(1);
      expect(await backend.getTask(id)).toMatchObject({ state: 'queued', attempt: 1, nextRunAt: null, lastError: 'x' });
    });

    it('moves at most `limit` tasks, earliest due first, and queues them in due order', async () => {
      const { backend } = store;
      const c = await enqueueOne(backend, 't', {}, { delay: 3000 });
      const a = await enqueueOne(backend, 't', {}, { delay: 1000 });
      const b = await enqueueOne(backend, 't', {}, { delay: 2000 });
      const later = await store.later(5000);
      expect(await later.forwardDue('default', 2)).toBe(2);
      expect((await backend.getTask(c))!.state).toBe('scheduled');
      expect(await later.forwardDue('default', 2)).toBe(1);
      const [claim] = await later.claim(WORKER, [{ queue: 'default', count: 3 }], LEASE_MS);
      expect(claim.tasks.map((t) => t.id)).toEqual([a, b, c]);
    });
  });

  describe('waitForWork', () => {
    const store = useStore(openStore);

    it('returns promptly when a task is enqueued', async () => {
      const { backend } = store;
      const producer = await store.reopen();
      const controller = new AbortController();
      const elapsed = await timed(async () => {
        const waiting = backend.waitForWork(['other', 'default'], 10_000, controller.signal);
        setTimeout(() => void enqueueOne(producer), 50);
        await waiting;
      });
      expect(elapsed).toBeLessThan(2000);
    });

    it('returns at once when the queue already has work', async () => {
      const { backend } = store;
      await enqueueOne(backend);
      const elapsed = await timed(() => backend.waitForWork(['default'], 10_000, new AbortController().signal));
      expect(elapsed).toBeLessThan(2000);
    });

    it('returns when the timeout passes', async () => {
      const { backend } = store;
      const elapsed = await timed(() => backend.waitForWork(['idle'], 300, new AbortController().signal));
      expect(elapsed).toBeGreaterThanOrEqual(250);
      expect(elapsed).toBeLessThan(2000);
    });

    it('returns when the signal aborts, or at once when it already has', async () => {
      const { backend } = store;
      const controller = new AbortController();
      const elapsed = await timed(async () => {
        const waiting = backend.waitForWork(['idle'], 10_000, controller.signal);
        setTimeout(() => controller.abort(), 50);
        await waiting;
      });
      expect(elapsed).toBeLessThan(2000);
      expect(await timed(() => backend.waitForWork(['idle'], 10_000, controller.signal))).toBeLessThan(500);
    });

    it('still wakes promptly for new work after an aborted wait', async () => {
      const { backend } = store;
      const producer = await store.reopen();
      const first = new AbortController();
      const aborted = backend.waitForWork(['default'], 10_000, first.signal);
      setTimeout(() => first.abort(), 30);
      await aborted;
      const elapsed = await timed(async () => {
        const waiting = backend.waitForWork(['default'], 10_000, new AbortController().signal);
        setTimeout(() => void enqueueOne(producer), 50);
        await waiting;
      });
      expect(elapsed).toBeLessThan(2000);
    });

    it('wakes a waiter when a paused queue is resumed', async () => {
      const { backend } = store;
      const operator = await store.reopen();
      await operator.pauseQueue('default');
      await enqueueOne(operator);
      // Use up any wake-up the enqueue left, so that only the resume can end the next wait early.
      expect((await backend.claim(WORKER, [{ queue: 'default', count: 1 }], LEASE_MS))[0].paused).toBe(true);
      await backend.waitForWork(['default'], 50, new AbortController().signal);
      const elapsed = await timed(async () => {
        const waiting = backend.waitForWork(['default'], 10_000, new AbortController().signal);
        setTimeout(() => void operator.resumeQueue('default'), 50);
        await waiting;
      });
      expect(elapsed).toBeLessThan(2000);
      expect(await claimOne(backend)).toMatchObject({ attempt: 1 });
    });
  });

  describe('reportProgress', () => {
    const store = useStore(openStore);

    it('appends log lines and sets progress of a running task', async () => {
      const { backend } = store;
      const claimed = await claimTask(backend, await enqueueOne(backend));
      const lease = { id: claimed.id, queue: claimed.queue, token: claimed.token };
      expect(await backend.reportProgress(lease, { logs: [{ at: 1, message: 'start' }, { at: 2, message: 'step ✓' }], progress: 10 })).toBe('ok');
      expect(await backend.reportProgress(lease, { logs: [{ at: 3, message: 'more' }] })).toBe('ok');
      expect(await backend.getTask(claimed.id)).toMatchObject({
        progress: 10, logs: [{ at: 1, message: 'start' }, { at: 2, message: 'step ✓' }, { at: 3, message: 'more' }],
      });
      expect(await backend.reportProgress(lease, { progress: { done: 3, of: 7, stage: 'copy' } })).toBe('ok');
      expect(await backend.getTask(claimed.id)).toMatchObject({ progress: { done: 3, of: 7, stage: 'copy' } });
      expect((await backend.getTask(claimed.id))!.logs).toHaveLength(3);
    });

    it('stores progress exactly as reported: any JSON value', async () => {
      const { backend } = store;
      const claimed = await claimTask(backend, await enqueueOne(backend));
      const lease = { id: claimed.id, queue: claimed.queue, token: claimed.token };
      const values: unknown[] = [
        { items: [], nested: { empty: {}, list: [1, [2, []]] }, ratio: 1 / 3, big: Number.MAX_SAFE_INTEGER, tiny: 5e-324 },
        [], 'half way', 0.1 + 0.2, false, null,
      ];
      for (const progress of values) {
        expect(await backend.reportProgress(lease, { progress })).toBe('ok');
        expect((await backend.getTask(claimed.id))!.progress).toEqual(progress);
      }
    });

    it('keeps only the newest log lines past the bound', async () => {
      const { backend } = store;
      const claimed = await claimTask(backend, await enqueueOne(backend));
      const lease = { id: claimed.id, queue: claimed.queue, token: claimed.token };
      const lines = Array.from({ length: MAX_LOG_LINES + 50 }, (_, i) => ({ at: i, message: `line ${i}` }));
      expect(await backend.reportProgress(lease, { logs: lines.slice(0, 100) })).toBe('ok');
      expect(await backend.reportProgress(lease, { logs: lines.slice(100) })).toBe('ok');
      const { logs } = (await backend.getTask(claimed.id))!;
      expect(logs).toHaveLength(MAX_LOG_LINES);
      expect(logs[0]).toEqual({ at: 50, message: 'line 50' });
      expect(logs[MAX_LOG_LINES - 1]).toEqual(lines[lines.length - 1]);
    });

    it('keeps logs and progress once the task finishes', async () => {
      const { backend } = store;
      const claimed = await claimTask(backend, await enqueueOne(backend));
      await backend.reportProgress({ id: claimed.id, queue: claimed.queue, token: claimed.token }, { logs: [{ at: 5, message: 'hi' }], progress: 100 });
      await ackOk(backend, completeAck(claimed, 'r'));
      expect(await backend.getTask(claimed.id)).toMatchObject({ state: 'completed', progress: 100, logs: [{ at: 5, message: 'hi' }] });
    });

    it('keeps a log line or progress holding a lone UTF-16 surrogate (a store may read it back as U+FFFD)', async () => {
      const { backend } = store;
      const claimed = await claimTask(backend, await enqueueOne(backend));
      const lease = { id: claimed.id, queue: claimed.queue, token: claimed.token };
      expect(await backend.reportProgress(lease, { logs: [{ at: 1, message: 'half \ud800 a pair' }], progress: { note: '\udc00' } })).toBe('ok');
      expect(await backend.reportProgress(lease, { logs: [{ at: 2, message: 'next' }] })).toBe('ok');
      await ackOk(backend, completeAck(claimed));
      const record = (await backend.getTask(claimed.id))!;
      expect(record.logs.map((l) => l.message)).toEqual([expect.stringMatching(/^half [\ud800\ufffd] a pair$/), 'next']);
      expect(record.progress).toEqual({ note: expect.stringMatching(/^[\udc00\ufffd]$/) });
    });

    it('rejects a stale token and stores nothing', async () => {
      const { backend } = store;
      const claimed = await claimTask(backend, await enqueueOne(backend));
      const forged = { id: claimed.id, queue: claimed.queue, token: `${claimed.token}0` };
      expect(await backend.reportProgress(forged, { logs: [{ at: 1, message: 'x' }], progress: 1 })).toBe('stale');
      await ackOk(backend, completeAck(claimed));
      const lease = { id: claimed.id, queue: claimed.queue, token: claimed.token };
      expect(await backend.reportProgress(lease, { logs: [{ at: 2, message: 'after' }], progress: 2 })).toBe('stale');
      expect(await backend.getTask(claimed.id)).toMatchObject({ progress: null, logs: [] });
    });
  });
}
