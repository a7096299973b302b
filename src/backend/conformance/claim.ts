/** Conformance: claiming tasks with a lease, and a worker's acks and claim in one call (ackAndClaim). */
import { describe, expect, it } from 'vitest';
import {
  ackOk, claimTask, completeAck, enqueueOne, HOUR, LEASE_MS, newTask, requeueAck, retryAck, useStore, WORKER, type OpenStore,
} from './harness.js';

export function claimConformance(openStore: OpenStore): void {
  describe('claim', () => {
    const store = useStore(openStore);

    it('hands out a queued task with a lease and marks it running', async () => {
      const { backend } = store;
      const task = newTask('work', { n: 1 }, {
        queue: 'jobs', maxRetries: 2, timeout: 5000, deadline: Date.UTC(2100, 0, 1), backoff: { type: 'exponential', base: 100, max: 1000 },
        headers: { h: 'v' }, links: { parentId: 'p-1' },
      });
      await backend.enqueue([task]);
      const before = await backend.now();
      const [result] = await backend.claim(WORKER, [{ queue: 'jobs', count: 5 }], 10_000);
      const after = await backend.now();
      expect(result).toMatchObject({ queue: 'jobs', paused: false, more: false, nextDueAt: null });
      expect(result.now).toBeGreaterThanOrEqual(before);
      expect(result.now).toBeLessThanOrEqual(after);
      expect(result.tasks).toEqual([{
        id: task.id, type: 'work', queue: 'jobs', payload: '{"n":1}', attempt: 1, maxRetries: 2, timeout: 5000,
        deadline: Date.UTC(2100, 0, 1), createdAt: expect.any(Number), startedAt: result.now, headers: { h: 'v' },
        links: { parentId: 'p-1' }, backoff: { type: 'exponential', base: 100, max: 1000 }, token: expect.any(String),
        leaseExpiresAt: result.now + 10_000,
      }]);
      expect(result.tasks[0].token.length).toBeGreaterThan(0);
      expect(await backend.getTask(task.id)).toMatchObject({ state: 'running', attempt: 1, workerId: WORKER, startedAt: result.now });
      expect((await backend.getQueue('jobs'))!.counts).toMatchObject({ queued: 0, running: 1 });
    });

    it('claims at most `count`, oldest first, and says whether more are left', async () => {
      const { backend } = store;
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push(await enqueueOne(backend, 'fifo', { i }));
      const [first] = await backend.claim(WORKER, [{ queue: 'default', count: 3 }], LEASE_MS);
      expect(first.tasks.map((t) => t.id)).toEqual(ids.slice(0, 3));
      expect(first.more).toBe(true);
      const [second] = await backend.claim(WORKER, [{ queue: 'default', count: 3 }], LEASE_MS);
      expect(second.tasks.map((t) => t.id)).toEqual(ids.slice(3));
      expect(second.more).toBe(false);
      const [third] = await backend.claim(WORKER, [{ queue: 'default', count: 3 }], LEASE_MS);
      expect(third).toMatchObject({ tasks: [], more: false, paused: false });
    });

    it('gives every lease a token no earlier lease of the task had', async () => {
      // A lease is named by (id, token): tasks claimed together may share a token (Redis gives
      // one per claim), but a task's next attempt never reuses the token of an earlier one.
      const { backend } = store;
      await backend.enqueue(Array.from({ length: 10 }, (_, i) => newTask('t', { i }, { maxRetries: 1 })));
      const [first] = await backend.claim(WORKER, [{ queue: 'default', count: 10 }], LEASE_MS);
      expect(first.tasks).toHaveLength(10);
      for (const task of first.tasks) expect(task.token).not.toBe('');
      await backend.ack(first.tasks.map((t) => retryAck(t, 'again', 0)));
      const [second] = await backend.claim(WORKER, [{ queue: 'default', count: 10 }], LEASE_MS);
      expect(second.tasks).toHaveLength(10);
      const before = new Map(first.tasks.map((t) => [t.id, t.token]));
      for (const task of second.tasks) expect(task.token).not.toBe(before.get(task.id));
    });

    it('claims from several queues in one call, one result per request in order', async () => {
      const { backend } = store;
      const a = await enqueueOne(backend, 't', {}, { queue: 'a' });
      const b1 = await enqueueOne(backend, 't', {}, { queue: 'b' });
      const b2 = await enqueueOne(backend, 't', {}, { queue: 'b' });
      const results = await backend.claim(WORKER, [{ queue: 'b', count: 1 }, { queue: 'empty', count: 4 }, { queue: 'a', count: 4 }], LEASE_MS);
      expect(results.map((r) => r.queue)).toEqual(['b', 'empty', 'a']);
      expect(results.map((r) => r.tasks.map((t) => t.id))).toEqual([[b1], [], [a]]);
      expect(results.map((r) => r.more)).toEqual([true, false, false]);
      expect((await backend.getTask(b2))!.state).toBe('queued');
    });

    it('returns nothing for an empty request list', async () => {
      expect(await store.backend.claim(WORKER, [], LEASE_MS)).toEqual([]);
    });

    it('claims nothing from a paused queue, and again after resume', async () => {
      const { backend } = store;
      const id = await enqueueOne(backend);
      await backend.pauseQueue('default');
      const [paused] = await backend.claim(WORKER, [{ queue: 'default', count: 5 }], LEASE_MS);
      expect(paused).toMatchObject({ paused: true, tasks: [] });
      expect((await backend.getTask(id))!.state).toBe('queued');
      await backend.resumeQueue('default');
      const [resumed] = await backend.claim(WORKER, [{ queue: 'default', count: 5 }], LEASE_MS);
      expect(resumed.paused).toBe(false);
      expect(resumed.tasks.map((t) => t.id)).toEqual([id]);
    });

    it('reports when the earliest scheduled or retrying task is due', async () => {
      const { backend } = store;
      const scheduled = newTask('s', {}, { delay: 2 * HOUR });
      await backend.enqueue([scheduled]);
      const [onlyScheduled] = await backend.claim(WORKER, [{ queue: 'default', count: 1 }], LEASE_MS);
      const dueScheduled = (await backend.getTask(scheduled.id))!.nextRunAt;
      expect(onlyScheduled.nextDueAt).toBe(dueScheduled);

      const id = await enqueueOne(backend, 'r');
      const claimed = await claimTask(backend, id);
      await ackOk(backend, retryAck(claimed, 'soon', HOUR));
      const dueRetry = (await backend.getTask(id))!.nextRunAt!;
      const [both] = await backend.claim(WORKER, [{ queue: 'default', count: 1 }], LEASE_MS);
      expect(both.nextDueAt).toBe(dueRetry);
      expect(dueRetry).toBeLessThan(dueScheduled!);
    });

    it('moves due scheduled tasks to queued and claims them', async () => {
      const { backend } = store;
      const id = await enqueueOne(backend, 'due', {}, { delay: 60_000 });
      const [early] = await backend.claim(WORKER, [{ queue: 'default', count: 1 }], LEASE_MS);
      expect(early.tasks).toEqual([]);
      const later = await store.later(61_000);
      const [result] = await later.claim(WORKER, [{ queue: 'default', count: 1 }], LEASE_MS);
      expect(result.tasks.map((t) => [t.id, t.attempt])).toEqual([[id, 1]]);
      expect(result.nextDueAt).toBeNull();
    });

    it('moves due retrying tasks to queued and claims them as the next attempt', async () => {
      const { backend } = store;
      const id = await enqueueOne(backend, 'again');
      const first = await claimTask(backend, id);
      await ackOk(backend, retryAck(first, 'flaky', 30_000));
      const [early] = await backend.claim(WORKER, [{ queue: 'default', count: 1 }], LEASE_MS);
      expect(early.tasks).toEqual([]);
      const [result] = await (await store.later(31_000)).claim(WORKER, [{ queue: 'default', count: 1 }], LEASE_MS);
      expect(result.tasks).toHaveLength(1);
      expect(result.tasks[0]).toMatchObject({ id, attempt: 2 });
      expect(result.tasks[0].token).not.toBe(first.token);
    });

    it('does not claim tasks of other queues', async () => {
      const { backend } = store;
      await enqueueOne(backend, 't', {}, { queue: 'other' });
      const [result] = await backend.claim(WORKER, [{ queue: 'default', count: 10 }], LEASE_MS);
      expect(result.tasks).toEqual([]);
    });
  });


  describe('ackAndClaim', () => {
    const store = useStore(openStore);

    it('acks, then claims, with the results each call alone would give', async () => {
      const { backend } = store;
      await backend.enqueue(Array.from({ length: 6 }, (_, i) => newTask('t', { i }, { maxRetries: 1 })));
      const [first] = await backend.claim(WORKER, [{ queue: 'default', count: 3 }], LEASE_MS);
      const [done, failed, lost] = first.tasks;
      // `lost` was recovered and claimed by someone else meanwhile: its ack is stale.
      const stale = { ...completeAck(lost, 'late'), token: `${lost.token}0` };
      const reply = await backend.ackAndClaim([completeAck(done, 'ok'), retryAck(failed, 'boom', 60_000), stale], WORKER, [{ queue: 'default', count: 2 }], LEASE_MS);
      expect(reply.acks).toEqual(['ok', 'ok', 'stale']);
      expect(reply.claims).toHaveLength(1);
      expect(reply.claims[0]).toMatchObject({ queue: 'default', paused: false, more: true });
      expect(reply.claims[0].tasks.map((t) => t.payload)).toEqual(['{"i":3}', '{"i":4}']);
      expect(await backend.getTask(done.id)).toMatchObject({ state: 'completed', result: 'ok' });
      expect(await backend.getTask(failed.id)).toMatchObject({ state: 'retrying', lastError: 'boom' });
      expect(await backend.getTask(lost.id)).toMatchObject({ state: 'running', attempt: 1 });
      expect(await backend.getQueue('default')).toMatchObject({ counts: { queued: 1, running: 3, retrying: 1, completed: 1 }, processed: 2, failed: 1 });
    });

    it('applies the acks before the claim: a task given back is claimed again at once', async () => {
      const { backend } = store;
      const id = await enqueueOne(backend);
      const claimed = await claimTask(backend, id);
      const reply = await backend.ackAndClaim([requeueAck(claimed)], WORKER, [{ queue: 'default', count: 5 }], LEASE_MS);
      expect(reply.acks).toEqual(['ok']);
      expect(reply.claims[0].tasks.map((t) => [t.id, t.attempt])).toEqual([[id, 1]]);
      expect(reply.claims[0].tasks[0].token).not.toBe(claimed.token);
    });

    it('takes acks of several queues and claims from others, one result per request in order', async () => {
      const { backend } = store;
      await backend.enqueue([newTask('t', { q: 'a' }, { queue: 'a' }), newTask('t', { q: 'b' }, { queue: 'b' }), newTask('t', { q: 'c' }, { queue: 'c' })]);
      const [a] = await backend.claim(WORKER, [{ queue: 'a', count: 1 }], LEASE_MS);
      const [b] = await backend.claim(WORKER, [{ queue: 'b', count: 1 }], LEASE_MS);
      const reply = await backend.ackAndClaim(
        [completeAck(a.tasks[0]), completeAck(b.tasks[0])], WORKER, [{ queue: 'c', count: 1 }, { queue: 'a', count: 1 }], LEASE_MS,
      );
      expect(reply.acks).toEqual(['ok', 'ok']);
      expect(reply.claims.map((c) => [c.queue, c.tasks.map((t) => t.payload)])).toEqual([['c', ['{"q":"c"}']], ['a', []]]);
      expect(await backend.getTask(a.tasks[0].id)).toMatchObject({ state: 'completed' });
      expect(await backend.getTask(b.tasks[0].id)).toMatchObject({ state: 'completed' });
    });

    it('acks even when the queue it claims from is paused', async () => {
      const { backend } = store;
      const ids = [await enqueueOne(backend), await enqueueOne(backend)];
      const claimed = await claimTask(backend, ids[0]);
      await backend.pauseQueue('default');
      const reply = await backend.ackAndClaim([completeAck(claimed)], WORKER, [{ queue: 'default', count: 5 }], LEASE_MS);
      expect(reply).toMatchObject({ acks: ['ok'], claims: [{ queue: 'default', paused: true, tasks: [] }] });
      expect(await backend.getTask(ids[0])).toMatchObject({ state: 'completed' });
      expect(await backend.getTask(ids[1])).toMatchObject({ state: 'queued' });
    });

    it('does nothing for no acks and no requests, and each alone as ack or claim', async () => {
      const { backend } = store;
      expect(await backend.ackAndClaim([], WORKER, [], LEASE_MS)).toEqual({ acks: [], claims: [] });
      const id = await enqueueOne(backend);
      const only = await backend.ackAndClaim([], WORKER, [{ queue: 'default', count: 1 }], LEASE_MS);
      expect(only.acks).toEqual([]);
      expect(only.claims[0].tasks.map((t) => t.id)).toEqual([id]);
      expect(await backend.ackAndClaim([completeAck(only.claims[0].tasks[0])], WORKER, [], LEASE_MS)).toEqual({ acks: ['ok'], claims: [] });
      expect(await backend.getTask(id)).toMatchObject({ state: 'completed' });
    });
  });
}
