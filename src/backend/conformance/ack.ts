/** Conformance: ending attempts (ack) with a lease token check. */
import { describe, expect, it } from 'vitest';
import type { ClaimedTask } from '../contract.js';
import {
  ackOk, attemptOf, cancelledAck, claimOne, claimTask, completeAck, deadAck, enqueueOne, HOUR, LEASE_MS, newTask, requeueAck, retryAck,
  useStore, WORKER, type OpenStore,
} from './harness.js';

export function ackConformance(openStore: OpenStore): void {
  describe('ack', () => {
    const store = useStore(openStore);

    it('completes a task with its result and records the attempt', async () => {
      const { backend } = store;
      const id = await enqueueOne(backend, 'sum', { a: 1 });
      const claimed = await claimTask(backend, id);
      await ackOk(backend, completeAck(claimed, { total: 3, list: ['x'] }));
      const record = (await backend.getTask(id))!;
      // The task finished when its completing attempt did.
      expect(record).toMatchObject({
        state: 'completed', result: { total: 3, list: ['x'] }, attempt: 1, lastError: null, nextRunAt: null,
        attempts: [attemptOf(claimed, 'completed')], finishedAt: attemptOf(claimed, 'completed').finishedAt,
      });
      expect(await backend.getQueue('default')).toMatchObject({ counts: { running: 0, completed: 1 }, processed: 1, failed: 0 });
    });

    it('keeps every field through claim and complete, whatever the type and headers hold', async () => {
      // Redis rewrites the common record shapes as text (lua/lib/record-text.lua); these records look
      // almost like them, and must come out the same as any other.
      const { backend } = store;
      const odd = [
        newTask('a"b\\c', { n: 1 }, { headers: { a: '1', '"a":': 'x', t: 'fake', m: '2' } }),
        newTask('quoted', {}, { headers: { h: '"t":"z","m":1' }, retention: 5 * HOUR }),
        newTask('über/type', {}, { links: { parentId: 'p' } }),
        newTask('plain', {}),
      ];
      await backend.enqueue(odd);
      const [claimed] = await backend.claim(WORKER, [{ queue: 'default', count: 10 }], LEASE_MS);
      expect(claimed.tasks.map((t) => [t.id, t.type, t.attempt, t.headers])).toEqual(odd.map((t) => [t.id, t.type, 1, t.headers ?? {}]));
      for (const task of odd) expect(await backend.getTask(task.id)).toMatchObject({ state: 'running', attempt: 1, workerId: WORKER, type: task.type });
      expect(await backend.cancelTask(odd[3].id)).toBe('cancel-requested');
      expect(await backend.ack(claimed.tasks.map((t) => completeAck(t, t.type)))).toEqual(['ok', 'ok', 'ok', 'ok']);
      for (const task of odd) {
        const record = (await backend.getTask(task.id))!;
        expect(record).toMatchObject({
          state: 'completed', attempt: 1, workerId: WORKER, type: task.type, result: task.type, headers: task.headers ?? {},
          cancelRequested: false, retention: task.retention, nextRunAt: null,
        });
        expect(record.finishedAt).toBeGreaterThanOrEqual(record.startedAt!);
      }
      // Their leases ended with the ack.
      expect(await backend.renewLeases(claimed.tasks.map((t) => ({ id: t.id, queue: t.queue, token: t.token })), LEASE_MS)).toMatchObject({
        lost: claimed.tasks.map((t) => t.id),
      });
    });

    it('claims and completes a task forwarded from scheduled with all its options, its record rewritten by the store', async () => {
      // On Redis the forward writes the record with cjson (members in any order); the claim may
      // still take its fast path when the state member comes first.
      const { backend } = store;
      const task = newTask('report:send', { week: 48 }, {
        delay: 1000, uniqueKey: 'weekly', uniqueFor: HOUR, maxRetries: 7, timeout: 90_000, retention: 5 * HOUR,
        backoff: { type: 'fixed', delay: 250 }, headers: { traceparent: 'x', t: '"t":"y","m":1' }, links: { parentId: 'p' },
      });
      await backend.enqueue([task]);
      const later = await store.later(2000);
      const [claimed] = await later.claim(WORKER, [{ queue: 'default', count: 5 }], LEASE_MS);
      expect(claimed.tasks).toHaveLength(1);
      const [got] = claimed.tasks;
      expect(got).toMatchObject({
        id: task.id, type: 'report:send', attempt: 1, maxRetries: 7, timeout: 90_000, headers: task.headers, links: task.links,
        backoff: { type: 'fixed', delay: 250 }, token: expect.any(String),
      });
      expect(JSON.parse(got.payload)).toEqual({ week: 48 });
      expect(got.leaseExpiresAt).toBe(got.startedAt + LEASE_MS);
      expect(await later.getTask(task.id)).toMatchObject({ state: 'running', attempt: 1, workerId: WORKER, uniqueKey: expect.any(String), retention: 5 * HOUR });
      expect(await later.ack([{ ...completeAck(got), result: '' }])).toEqual(['ok']);
      expect(await later.getTask(task.id)).toMatchObject({
        state: 'completed', attempt: 1, result: null, maxRetries: 7, timeout: 90_000, headers: task.headers, links: task.links, retention: 5 * HOUR,
      });
    });

    it('completes a task without a result (empty result text) as result null', async () => {
      const { backend } = store;
      const id = await enqueueOne(backend);
      const claimed = await claimTask(backend, id);
      await ackOk(backend, { ...completeAck(claimed), result: '' });
      expect(await backend.getTask(id)).toMatchObject({ state: 'completed', result: null });
    });

    it('puts a failed attempt to retrying, due after the delay', async () => {
      const { backend } = store;
      const id = await enqueueOne(backend);
      const claimed = await claimTask(backend, id);
      const before = await backend.now();
      await ackOk(backend, retryAck(claimed, 'connection reset', 45_000));
      const after = await backend.now();
      const record = (await backend.getTask(id))!;
      expect(record).toMatchObject({
        state: 'retrying', attempt: 1, lastError: 'connection reset', finishedAt: null,
        attempts: [attemptOf(claimed, 'failed', 'connection reset')],
      });
      expect(record.nextRunAt).toBeGreaterThanOrEqual(before + 45_000);
      expect(record.nextRunAt).toBeLessThanOrEqual(after + 45_000);
      expect(await backend.getQueue('default')).toMatchObject({ counts: { running: 0, retrying: 1 }, processed: 1, failed: 1 });
    });

    it('gives the attempt back on a retry that is not a failure (consumed: false)', async () => {
      const { backend } = store;
      const id = await enqueueOne(backend, 't', {}, { maxRetries: 0 });
      const claimed = await claimTask(backend, id);
      await ackOk(backend, retryAck(claimed, 'rate limited', 1000, false));
      expect(await backend.getTask(id)).toMatchObject({ state: 'retrying', attempt: 0, lastError: 'rate limited' });
      expect(await backend.getQueue('default')).toMatchObject({ failed: 0 });
      const again = await claimOne(await store.later(2000));
      expect(again).toMatchObject({ id, attempt: 1 });
    });

    it('hands a task back (no handler in that worker): retrying, attempt, last error and counts as before', async () => {
      const { backend } = store;
      const id = await enqueueOne(backend, 't', {}, { maxRetries: 0 });
      const first = await claimTask(backend, id);
      await ackOk(backend, retryAck(first, 'rate limited', 0, false));
      const before = await backend.getQueue('default');
      const claimed = await claimOne(await store.later(1000));
      const note = 'no handler for task type "t" in worker w-2; handed back for worker w-1, which handles it';
      await ackOk(await store.later(1000), { kind: 'hand-back', id, queue: claimed.queue, token: claimed.token, attempt: attemptOf(claimed, 'interrupted', note), delay: 500 });
      const record = (await backend.getTask(id))!;
      expect(record).toMatchObject({ state: 'retrying', attempt: 0, lastError: 'rate limited' });
      expect(record.attempts.map((a) => [a.outcome, a.error])).toEqual([['failed', 'rate limited']]);
      const after = await backend.getQueue('default');
      expect([after?.processed, after?.failed]).toEqual([before?.processed, before?.failed]);
      // Due after the delay, then claimable as the same attempt.
      const [early] = await (await store.later(1200)).claim(WORKER, [{ queue: 'default', count: 1 }], 30_000);
      expect(early.tasks).toEqual([]);
      expect(await claimOne(await store.later(1600))).toMatchObject({ id, attempt: 1 });
    });

    it('dead-letters a task', async () => {
      const { backend } = store;
      const id = await enqueueOne(backend);
      const claimed = await claimTask(backend, id);
      await ackOk(backend, deadAck(claimed, 'bad input'));
      const record = (await backend.getTask(id))!;
      expect(record).toMatchObject({ state: 'dead', lastError: 'bad input', attempts: [attemptOf(claimed, 'failed', 'bad input')] });
      expect(record.finishedAt).toEqual(expect.any(Number));
      expect(await backend.getQueue('default')).toMatchObject({ counts: { running: 0, dead: 1 }, processed: 1, failed: 1 });
    });

    it('cancels a task whose handler honoured the cancel', async () => {
      const { backend } = store;
      const id = await enqueueOne(backend);
      const claimed = await claimTask(backend, id);
      expect(await backend.cancelTask(id)).toBe('cancel-requested');
      await ackOk(backend, cancelledAck(claimed));
      const record = (await backend.getTask(id))!;
      expect(record).toMatchObject({ state: 'cancelled', lastError: 'cancelled by operator', cancelRequested: false });
      expect(record.finishedAt).toEqual(expect.any(Number));
      expect(await backend.getQueue('default')).toMatchObject({ counts: { running: 0, cancelled: 1 }, failed: 0 });
    });

    it('requeues a task at the front without counting the attempt', async () => {
      const { backend } = store;
      const id = await enqueueOne(backend, 'first');
      const claimed = await claimTask(backend, id);
      const other = await enqueueOne(backend, 'second');
      await ackOk(backend, requeueAck(claimed));
      expect(await backend.getTask(id)).toMatchObject({ state: 'queued', attempt: 0, finishedAt: null });
      expect(await backend.getQueue('default')).toMatchObject({ counts: { running: 0, queued: 2 }, failed: 0 });
      const [result] = await backend.claim(WORKER, [{ queue: 'default', count: 2 }], LEASE_MS);
      expect(result.tasks.map((t) => [t.id, t.attempt])).toEqual([[id, 1], [other, 1]]);
    });

    it('rejects a stale token and changes nothing', async () => {
      const { backend } = store;
      const id = await enqueueOne(backend);
      const claimed = await claimTask(backend, id);
      const forged = { ...claimed, token: `${claimed.token}x` };
      expect(await backend.ack([completeAck(forged, 'late')])).toEqual(['stale']);
      expect(await backend.ack([deadAck(forged, 'late')])).toEqual(['stale']);
      expect(await backend.ack([retryAck(forged, 'late', 0)])).toEqual(['stale']);
      expect(await backend.ack([requeueAck(forged)])).toEqual(['stale']);
      expect(await backend.getTask(id)).toMatchObject({ state: 'running', attempt: 1, result: null, lastError: null, attempts: [] });
      expect(await backend.getQueue('default')).toMatchObject({ processed: 0, failed: 0 });
      await ackOk(backend, completeAck(claimed, 'real'));
      expect(await backend.getTask(id)).toMatchObject({ state: 'completed', result: 'real' });
    });

    it('rejects a second ack with the same token', async () => {
      const { backend } = store;
      const id = await enqueueOne(backend);
      const claimed = await claimTask(backend, id);
      await ackOk(backend, completeAck(claimed, 1));
      expect(await backend.ack([deadAck(claimed, 'again')])).toEqual(['stale']);
      expect(await backend.getTask(id)).toMatchObject({ state: 'completed', result: 1, lastError: null });
      expect((await backend.getTask(id))!.attempts).toHaveLength(1);
    });

    it('rejects the token of an earlier attempt', async () => {
      const { backend } = store;
      const id = await enqueueOne(backend);
      const first = await claimTask(backend, id);
      await ackOk(backend, retryAck(first, 'x', 0));
      const second = await claimTask(backend, id);
      expect(await backend.ack([completeAck(first, 'old')])).toEqual(['stale']);
      expect(await backend.getTask(id)).toMatchObject({ state: 'running', attempt: 2 });
      await ackOk(backend, completeAck(second, 'new'));
      expect(await backend.getTask(id)).toMatchObject({ state: 'completed', result: 'new' });
    });

    it('rejects an ack for a task that does not exist', async () => {
      const { backend } = store;
      const ack = completeAck({ ...fakeClaim(), id: 'no-such-task' });
      expect(await backend.ack([ack])).toEqual(['stale']);
      expect(await backend.getTask('no-such-task')).toBeNull();
    });

    it('applies a batch of acks across queues, each checked on its own, results in order', async () => {
      const { backend } = store;
      const a = await claimTask(backend, await enqueueOne(backend, 't', {}, { queue: 'qa' }), 'qa');
      const b = await claimTask(backend, await enqueueOne(backend, 't', {}, { queue: 'qb' }), 'qb');
      const c = await claimTask(backend, await enqueueOne(backend, 't', {}, { queue: 'qa' }), 'qa');
      const results = await backend.ack([completeAck(a, 'A'), deadAck({ ...b, token: 'stale-token' }, 'x'), retryAck(c, 'again', 1000)]);
      expect(results).toEqual(['ok', 'stale', 'ok']);
      expect((await backend.getTask(a.id))!.state).toBe('completed');
      expect((await backend.getTask(b.id))!.state).toBe('running');
      expect((await backend.getTask(c.id))!.state).toBe('retrying');
      expect(await backend.ack([])).toEqual([]);
    });

    it('mixes completions without a result (of several leases) with other acks, each result in its place', async () => {
      const { backend } = store;
      const ids = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => enqueueOne(backend, 't', { i })));
      // Two claims: two lease tokens.
      const [first] = await backend.claim(WORKER, [{ queue: 'default', count: 3 }], LEASE_MS);
      const [second] = await backend.claim(WORKER, [{ queue: 'default', count: 3 }], LEASE_MS);
      const [a, b, c] = first.tasks;
      const [d, e, f] = second.tasks;
      const bare = (task: ClaimedTask) => ({ ...completeAck(task), result: '' });
      const results = await backend.ack([
        bare(d), // second lease
        completeAck(a, { kept: 'A' }), // a result: sent in full
        bare(b), // first lease
        { ...bare(e), token: 'stale-token' }, // stale
        retryAck(c, 'again', 1000),
        bare(f),
        bare(b), // the same attempt twice: the second is stale
      ]);
      expect(results).toEqual(['ok', 'ok', 'ok', 'stale', 'ok', 'ok', 'stale']);
      expect(await backend.getTask(a.id)).toMatchObject({ state: 'completed', result: { kept: 'A' } });
      for (const task of [b, d, f]) expect(await backend.getTask(task.id)).toMatchObject({ state: 'completed', result: null, attempt: 1 });
      expect((await backend.getTask(c.id))!.state).toBe('retrying');
      expect((await backend.getTask(e.id))!.state).toBe('running');
      expect(new Set([...first.tasks, ...second.tasks].map((t) => t.id))).toEqual(new Set(ids));
      // And riding with a claim: the claim's reply follows the acks' results.
      const fresh = [await enqueueOne(backend, 't', { n: 1 }), await enqueueOne(backend, 't', { n: 2 })];
      const reply = await backend.ackAndClaim([bare(e), { ...bare(a), token: 'stale-token' }], WORKER, [{ queue: 'default', count: 5 }], LEASE_MS);
      expect(reply.acks).toEqual(['ok', 'stale']);
      expect(reply.claims[0].tasks.map((t) => [t.id, t.attempt, JSON.parse(t.payload)])).toEqual([[fresh[0], 1, { n: 1 }], [fresh[1], 1, { n: 2 }]]);
      for (const id of fresh) expect(await backend.getTask(id)).toMatchObject({ state: 'running', attempt: 1 });
      expect(await backend.getTask(e.id)).toMatchObject({ state: 'completed' });
    });

    it('records every attempt through retries into the dead letter', async () => {
      const { backend } = store;
      const id = await enqueueOne(backend, 't', {}, { maxRetries: 2 });
      const attempts = [];
      let clock = 0;
      for (let n = 1; n <= 3; n++) {
        const view = await store.later(clock);
        const claimed = await claimTask(view, id);
        expect(claimed.attempt).toBe(n);
        if (n < 3) {
          await ackOk(view, retryAck(claimed, `failure ${n}`, 1000));
          attempts.push(attemptOf(claimed, 'failed', `failure ${n}`));
        } else {
          await ackOk(view, deadAck(claimed, 'failure 3'));
          attempts.push(attemptOf(claimed, 'failed', 'failure 3'));
        }
        clock += 2000;
      }
      expect(await backend.getTask(id)).toMatchObject({ state: 'dead', attempt: 3, lastError: 'failure 3', attempts });
      expect(await backend.getQueue('default')).toMatchObject({ processed: 3, failed: 3 });
    });

    it('records the failed attempts and then the completing one, in order', async () => {
      const { backend } = store;
      const id = await enqueueOne(backend, 't', {}, { maxRetries: 3 });
      const first = await claimTask(backend, id);
      await ackOk(backend, retryAck(first, 'failure 1', 1000));
      const view = await store.later(2000);
      const second = await claimTask(view, id);
      // Shut down once (not counted), then claimed again and completed.
      await ackOk(view, { kind: 'requeue', id, queue: second.queue, token: second.token, attempt: attemptOf(second, 'interrupted', 'worker shut down') });
      const third = await claimTask(view, id);
      await ackOk(view, completeAck(third, 'done'));
      expect(await backend.getTask(id)).toMatchObject({
        state: 'completed', attempt: 2, result: 'done',
        attempts: [attemptOf(first, 'failed', 'failure 1'), attemptOf(second, 'interrupted', 'worker shut down'), attemptOf(third, 'completed')],
      });
    });
  });

}

/** A claimed task that never existed, for acks against unknown ids. */
function fakeClaim(): ClaimedTask {
  return {
    id: 'x', type: 't', queue: 'default', payload: '{}', attempt: 1, maxRetries: 0, timeout: 1000, deadline: null, createdAt: 0,
    startedAt: 0, headers: {}, links: {}, backoff: null, token: '1', leaseExpiresAt: 0,
  };
}
