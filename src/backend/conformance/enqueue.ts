/** Conformance: storing tasks — single and batch, ids, conflicts, uniqueness, delay and runAt. */
import { describe, expect, it } from 'vitest';
import { isTasklineError } from '../../core/errors.js';
import type { NewTask, TaskRecord } from '../../core/task.js';
import {
  ackOk, claimTask, completeAck, deadAck, enqueueOne, HOUR, newTask, retryAck, useStore, type OpenStore,
} from './harness.js';

export function enqueueConformance(openStore: OpenStore): void {
  describe('enqueue', () => {
    const store = useStore(openStore);

    it('stores a task as queued with its full record', async () => {
      const { backend } = store;
      const before = await backend.now();
      const task = newTask('email:deliver', { to: 'a@example.com', n: [1, 2] }, {
        queue: 'mail', id: 'task-1', maxRetries: 5, timeout: 60_000, deadline: before + HOUR, retention: 1000,
        backoff: { type: 'fixed', delay: 250 }, headers: { traceparent: '00-abc-def-01' }, links: { workflowId: 'wf-1' }, group: 'tenant-1',
      });
      const outcomes = await backend.enqueue([task]);
      const after = await backend.now();
      expect(outcomes).toEqual([{ ok: true, info: { id: 'task-1', type: 'email:deliver', queue: 'mail', state: 'queued' } }]);
      const record = (await backend.getTask('task-1'))!;
      expect(record).toEqual<TaskRecord>({
        id: 'task-1', type: 'email:deliver', payload: { to: 'a@example.com', n: [1, 2] }, queue: 'mail', state: 'queued',
        attempt: 0, maxRetries: 5, timeout: 60_000, deadline: before + HOUR, lastError: null, result: null,
        createdAt: record.createdAt, enqueuedAt: record.createdAt, startedAt: null, finishedAt: null, nextRunAt: null,
        workerId: null, uniqueKey: null, retention: 1000, backoff: { type: 'fixed', delay: 250 },
        headers: { traceparent: '00-abc-def-01' }, links: { workflowId: 'wf-1' }, group: 'tenant-1', progress: null, cancelRequested: false,
        attempts: [], logs: [],
      });
      expect(record.createdAt).toBeGreaterThanOrEqual(before);
      expect(record.createdAt).toBeLessThanOrEqual(after);
    });

    it('applies the defaults to a task without options', async () => {
      const { backend } = store;
      const task = newTask('plain');
      expect(await backend.enqueue([task])).toEqual([{ ok: true, info: { id: task.id, type: 'plain', queue: 'default', state: 'queued' } }]);
      expect(await backend.getTask(task.id)).toMatchObject({
        queue: 'default', payload: {}, maxRetries: 3, timeout: 30 * 60_000, deadline: null, retention: null, backoff: null,
        headers: {}, links: {}, uniqueKey: null, group: null,
      });
    });

    it('keeps the payload text exactly as given', async () => {
      const { backend } = store;
      const payload = { unicode: 'zażółć ✓ 日本', nested: { a: [null, true, 1.5] }, empty: {}, list: [] };
      const id = await enqueueOne(backend, 'json', payload);
      const claimed = await claimTask(backend, id);
      expect(claimed.payload).toBe(JSON.stringify(payload));
      expect((await backend.getTask(id))!.payload).toEqual(payload);
    });

    it('refuses a lone UTF-16 surrogate in the type, a header or the unique key, naming the field, and stores nothing', async () => {
      const { backend } = store;
      const bad: [string, (task: NewTask) => void][] = [
        ['type', (t) => (t.type = 'bad\ud800')],
        ['headers.trace', (t) => (t.headers = { trace: '\udc00' })],
        ['headers', (t) => (t.headers = { ['\ud83d']: 'x' })],
        ['uniqueKey', (t) => ((t.uniqueKey = 'k\ud800'), (t.uniqueFor = 60_000))],
      ];
      for (const [field, spoil] of bad) {
        const good = newTask('t', { field });
        const task = newTask('t', { field });
        spoil(task);
        const error = await backend.enqueue([good, task]).catch((e: unknown) => e);
        expect(isTasklineError(error, 'TL_INVALID_ARGUMENT'), String(error)).toBe(true);
        expect((error as Error).message).toContain(field);
        expect(await backend.getTask(good.id)).toBeNull();
      }
      // A well-formed pair (an emoji) is fine.
      const id = await enqueueOne(backend, 'emoji:\ud83d\ude00', {}, { headers: { face: '\ud83d\ude00' } });
      expect(await backend.getTask(id)).toMatchObject({ type: 'emoji:😀', headers: { face: '😀' } });
      expect(await backend.listQueues()).toHaveLength(1);
    });

    it('returns an empty list for an empty batch', async () => {
      expect(await store.backend.enqueue([])).toEqual([]);
    });

    it('stores a batch across queues and reports each outcome in input order', async () => {
      const { backend } = store;
      const tasks = [
        newTask('a', { i: 0 }, { queue: 'q1' }),
        newTask('b', { i: 1 }, { queue: 'q2' }),
        newTask('c', { i: 2 }, { queue: 'q1', delay: 60_000 }),
        newTask('d', { i: 3 }, { queue: 'q2' }),
      ];
      const outcomes = await backend.enqueue(tasks);
      expect(outcomes).toEqual([
        { ok: true, info: { id: tasks[0].id, type: 'a', queue: 'q1', state: 'queued' } },
        { ok: true, info: { id: tasks[1].id, type: 'b', queue: 'q2', state: 'queued' } },
        { ok: true, info: { id: tasks[2].id, type: 'c', queue: 'q1', state: 'scheduled' } },
        { ok: true, info: { id: tasks[3].id, type: 'd', queue: 'q2', state: 'queued' } },
      ]);
      expect((await backend.getQueue('q1'))!.counts).toMatchObject({ queued: 1, scheduled: 1 });
      expect((await backend.getQueue('q2'))!.counts).toMatchObject({ queued: 2, scheduled: 0 });
    });

    it('stores a large batch', async () => {
      const { backend } = store;
      const tasks = Array.from({ length: 1500 }, (_, i) => newTask('bulk', { i }, { queue: 'bulk' }));
      const outcomes = await backend.enqueue(tasks);
      expect(outcomes.filter((o) => o.ok)).toHaveLength(1500);
      expect((await backend.getQueue('bulk'))!.counts.queued).toBe(1500);
    });

    describe('ids', () => {
      it('rejects an id that exists, leaving the first task untouched', async () => {
        const { backend } = store;
        await enqueueOne(backend, 'first', { v: 1 }, { id: 'dup' });
        const outcomes = await backend.enqueue([newTask('second', { v: 2 }, { id: 'dup' })]);
        expect(outcomes).toEqual([{ ok: false, id: 'dup', reason: 'id-conflict' }]);
        expect(await backend.getTask('dup')).toMatchObject({ type: 'first', payload: { v: 1 }, state: 'queued' });
        expect((await backend.getQueue('default'))!.counts.queued).toBe(1);
      });

      it('rejects an id that exists in another queue', async () => {
        const { backend } = store;
        await enqueueOne(backend, 'first', { v: 1 }, { id: 'shared-id', queue: 'one' });
        const outcomes = await backend.enqueue([newTask('second', { v: 2 }, { id: 'shared-id', queue: 'two' })]);
        expect(outcomes).toEqual([{ ok: false, id: 'shared-id', reason: 'id-conflict' }]);
        expect(await backend.getTask('shared-id')).toMatchObject({ queue: 'one', type: 'first' });
        expect((await backend.getQueue('two'))?.counts.queued ?? 0).toBe(0);
        expect((await backend.listTasks('two', 'queued')).tasks).toEqual([]);
      });

      it('rejects a given id shaped like a generated one (UUIDv7) that exists in another queue', async () => {
        const { backend } = store;
        const id = '01a2295d-57ef-7002-b539-33f7adf46626';
        await enqueueOne(backend, 'first', {}, { id, queue: 'one' });
        expect(await backend.enqueue([newTask('second', {}, { id, queue: 'two' })])).toEqual([{ ok: false, id, reason: 'id-conflict' }]);
        expect(await backend.getTask(id)).toMatchObject({ queue: 'one', type: 'first' });
      });

      it('rejects an id in any state, finished ones included', async () => {
        const { backend } = store;
        const id = await enqueueOne(backend, 't', {}, { id: 'done-once' });
        await ackOk(backend, completeAck(await claimTask(backend, id), 1));
        expect(await backend.enqueue([newTask('t', {}, { id: 'done-once' })])).toEqual([{ ok: false, id: 'done-once', reason: 'id-conflict' }]);
        expect((await backend.getTask(id))!.state).toBe('completed');
      });

      it('rejects the repeat of an id within one batch, in the same queue and across queues', async () => {
        const { backend } = store;
        const outcomes = await backend.enqueue([
          newTask('a', { n: 1 }, { id: 'twice' }),
          newTask('b', { n: 2 }, { id: 'twice' }),
          newTask('c', { n: 3 }, { id: 'thrice', queue: 'x' }),
          newTask('d', { n: 4 }, { id: 'thrice', queue: 'y' }),
          newTask('e', { n: 5 }, { id: 'ok-one', queue: 'y' }),
        ]);
        expect(outcomes).toEqual([
          { ok: true, info: { id: 'twice', type: 'a', queue: 'default', state: 'queued' } },
          { ok: false, id: 'twice', reason: 'id-conflict' },
          { ok: true, info: { id: 'thrice', type: 'c', queue: 'x', state: 'queued' } },
          { ok: false, id: 'thrice', reason: 'id-conflict' },
          { ok: true, info: { id: 'ok-one', type: 'e', queue: 'y', state: 'queued' } },
        ]);
        expect(await backend.getTask('twice')).toMatchObject({ type: 'a' });
        expect(await backend.getTask('thrice')).toMatchObject({ type: 'c', queue: 'x' });
        expect((await backend.listTasks('y', 'queued')).tasks.map((t) => t.id)).toEqual(['ok-one']);
      });

      it('stores the others of a batch when one conflicts', async () => {
        const { backend } = store;
        await enqueueOne(backend, 't', {}, { id: 'taken' });
        const fresh = newTask('t', { n: 2 });
        const outcomes = await backend.enqueue([newTask('t', { n: 1 }, { id: 'taken' }), fresh]);
        expect(outcomes.map((o) => o.ok)).toEqual([false, true]);
        expect((await backend.getTask(fresh.id))!.state).toBe('queued');
      });

      it('accepts an id again once its task was deleted', async () => {
        const { backend } = store;
        await enqueueOne(backend, 'old', {}, { id: 'reused' });
        await backend.deleteTask('reused');
        expect(await backend.enqueue([newTask('new', {}, { id: 'reused' })])).toMatchObject([{ ok: true }]);
        expect(await backend.getTask('reused')).toMatchObject({ type: 'new', state: 'queued' });
      });
    });

    describe('uniqueness', () => {
      it('rejects a task with the same type, queue and payload while the first is pending', async () => {
        const { backend } = store;
        const first = await enqueueOne(backend, 'report', { week: 1 }, { uniqueFor: HOUR });
        const outcomes = await backend.enqueue([newTask('report', { week: 1 }, { uniqueFor: HOUR })]);
        expect(outcomes).toEqual([{ ok: false, id: expect.any(String), reason: 'unique-conflict', holder: first }]);
        expect((await backend.getQueue('default'))!.counts.queued).toBe(1);
      });

      it('judges the payload canonically (key order does not matter)', async () => {
        const { backend } = store;
        const first = await enqueueOne(backend, 'report', { a: 1, b: 2 }, { uniqueFor: HOUR });
        const [outcome] = await backend.enqueue([newTask('report', { b: 2, a: 1 }, { uniqueFor: HOUR })]);
        expect(outcome).toMatchObject({ ok: false, reason: 'unique-conflict', holder: first });
      });

      it('accepts a different payload, type or queue', async () => {
        const { backend } = store;
        await enqueueOne(backend, 'report', { week: 1 }, { uniqueFor: HOUR });
        const outcomes = await backend.enqueue([
          newTask('report', { week: 2 }, { uniqueFor: HOUR }),
          newTask('other', { week: 1 }, { uniqueFor: HOUR }),
          newTask('report', { week: 1 }, { uniqueFor: HOUR, queue: 'elsewhere' }),
          newTask('report', { week: 1 }),
        ]);
        expect(outcomes.map((o) => o.ok)).toEqual([true, true, true, true]);
      });

      it('judges an explicit uniqueKey instead of the payload', async () => {
        const { backend } = store;
        const first = await enqueueOne(backend, 'sync', { page: 1 }, { uniqueFor: HOUR, uniqueKey: 'account-7' });
        const outcomes = await backend.enqueue([
          newTask('sync', { page: 2 }, { uniqueFor: HOUR, uniqueKey: 'account-7' }),
          newTask('sync', { page: 1 }, { uniqueFor: HOUR, uniqueKey: 'account-8' }),
        ]);
        expect(outcomes[0]).toMatchObject({ ok: false, reason: 'unique-conflict', holder: first });
        expect(outcomes[1]).toMatchObject({ ok: true });
        expect((await backend.getTask(first))!.uniqueKey).toEqual(expect.any(String));
      });

      it('rejects the second of two equal tasks in one batch', async () => {
        const { backend } = store;
        const a = newTask('report', { week: 9 }, { uniqueFor: HOUR });
        const b = newTask('report', { week: 9 }, { uniqueFor: HOUR });
        expect(await backend.enqueue([a, b])).toEqual([
          { ok: true, info: { id: a.id, type: 'report', queue: 'default', state: 'queued' } },
          { ok: false, id: b.id, reason: 'unique-conflict', holder: a.id },
        ]);
      });

      it('holds while the first task is scheduled, running or retrying', async () => {
        const { backend } = store;
        const first = await enqueueOne(backend, 'u', { k: 1 }, { uniqueFor: HOUR, delay: 60_000 });
        const again = () => backend.enqueue([newTask('u', { k: 1 }, { uniqueFor: HOUR })]);
        expect(await again()).toMatchObject([{ ok: false, reason: 'unique-conflict', holder: first }]);
        await backend.runTask(first);
        const claimed = await claimTask(backend, first);
        expect(await again()).toMatchObject([{ ok: false, reason: 'unique-conflict', holder: first }]);
        await ackOk(backend, retryAck(claimed, 'x', 60_000));
        expect(await again()).toMatchObject([{ ok: false, reason: 'unique-conflict', holder: first }]);
      });

      it('releases the key when the holder completes', async () => {
        const { backend } = store;
        const first = await enqueueOne(backend, 'u', { k: 1 }, { uniqueFor: HOUR });
        await ackOk(backend, completeAck(await claimTask(backend, first)));
        const [outcome] = await backend.enqueue([newTask('u', { k: 1 }, { uniqueFor: HOUR })]);
        expect(outcome).toMatchObject({ ok: true, info: { state: 'queued' } });
      });

      it('releases the key when the holder dies, is cancelled or is deleted', async () => {
        const { backend } = store;
        const dies = await enqueueOne(backend, 'u', { k: 'dead' }, { uniqueFor: HOUR });
        await ackOk(backend, deadAck(await claimTask(backend, dies), 'fatal'));
        const cancelled = await enqueueOne(backend, 'u', { k: 'cancelled' }, { uniqueFor: HOUR });
        await backend.cancelTask(cancelled);
        const deleted = await enqueueOne(backend, 'u', { k: 'deleted' }, { uniqueFor: HOUR });
        await backend.deleteTask(deleted);
        const outcomes = await backend.enqueue(['dead', 'cancelled', 'deleted'].map((k) => newTask('u', { k }, { uniqueFor: HOUR })));
        expect(outcomes.map((o) => o.ok)).toEqual([true, true, true]);
      });

      it('releases the key when the TTL ends, even if the holder is still pending', async () => {
        const { backend } = store;
        const first = await enqueueOne(backend, 'u', { k: 1 }, { uniqueFor: 60_000 });
        const before = await (await store.later(59_000)).enqueue([newTask('u', { k: 1 }, { uniqueFor: 60_000 })]);
        expect(before).toMatchObject([{ ok: false, reason: 'unique-conflict', holder: first }]);
        const after = await (await store.later(61_000)).enqueue([newTask('u', { k: 1 }, { uniqueFor: 60_000 })]);
        expect(after).toMatchObject([{ ok: true, info: { state: 'queued' } }]);
        expect((await backend.getTask(first))!.state).toBe('queued');
        expect((await backend.getQueue('default'))!.counts.queued).toBe(2);
      });
    });

    describe('delay and runAt', () => {
      it('schedules a task with a delay, due at createdAt + delay', async () => {
        const { backend } = store;
        const task = newTask('later', {}, { delay: 90_000 });
        expect(await backend.enqueue([task])).toEqual([{ ok: true, info: { id: task.id, type: 'later', queue: 'default', state: 'scheduled' } }]);
        const record = (await backend.getTask(task.id))!;
        expect(record).toMatchObject({ state: 'scheduled', enqueuedAt: null, attempt: 0 });
        expect(record.nextRunAt).toBe(record.createdAt + 90_000);
        const [claim] = await backend.claim('w', [{ queue: 'default', count: 10 }], 1000);
        expect(claim.tasks).toEqual([]);
      });

      it('schedules a task with a future runAt, due exactly then', async () => {
        const { backend } = store;
        const runAt = (await backend.now()) + 2 * HOUR;
        const task = newTask('at', {}, { runAt });
        expect(await backend.enqueue([task])).toMatchObject([{ ok: true, info: { state: 'scheduled' } }]);
        expect(await backend.getTask(task.id)).toMatchObject({ state: 'scheduled', nextRunAt: runAt });
      });

      it('queues at once a task with runAt in the past or a zero delay', async () => {
        const { backend } = store;
        const past = newTask('past', {}, { runAt: (await backend.now()) - 1000 });
        const zero = newTask('zero', {}, { delay: 0 });
        expect(await backend.enqueue([past, zero])).toMatchObject([{ ok: true, info: { state: 'queued' } }, { ok: true, info: { state: 'queued' } }]);
        expect(await backend.getTask(past.id)).toMatchObject({ state: 'queued', nextRunAt: null });
        const [claim] = await backend.claim('w', [{ queue: 'default', count: 10 }], 1000);
        expect(claim.tasks.map((t) => t.id)).toEqual([past.id, zero.id]);
      });
    });
  });
}
