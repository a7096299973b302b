/** Conformance: notifications, the worker registry, the store clock and closing a backend. */
import { describe, expect, it } from 'vitest';
import type { Backend, BackendEvent, WorkerInfo } from '../contract.js';
import {
  ackOk, cancelledAck, claimOne, claimTask, completeAck, deadAck, enqueueOne, expectCode, HOUR, LEASE_MS, newTask, retryAck, subscribeUntil, timed, useStore,
  WORKER, type OpenStore,
} from './harness.js';

function workerInfo(id: string, running: string[] = []): WorkerInfo {
  return { id, host: 'host-1', pid: 4242, queues: ['critical', 'default'], concurrency: 10, running, startedAt: 1_700_000_000_000, version: '0.1.0' };
}

export function eventsAndWorkersConformance(openStore: OpenStore): void {
  describe('subscribe', () => {
    const store = useStore(openStore);

    it('announces finished tasks to subscribers of another backend instance', async () => {
      const { backend } = store;
      const other = await store.reopen();
      const done = await enqueueOne(other, 't', {}, { queue: 'q1' });
      const dead = await enqueueOne(other, 't', {}, { queue: 'q2' });
      const cancelled = await enqueueOne(other);
      const archived = await enqueueOne(other);
      const events = await subscribeUntil(backend, (e) => e.length >= 4, async () => {
        await ackOk(other, completeAck(await claimTask(other, done, 'q1'), 'ok'));
        await ackOk(other, deadAck(await claimTask(other, dead, 'q2'), 'bad'));
        expect(await other.cancelTask(cancelled)).toBe('cancelled');
        await other.archiveTask(archived);
      });
      // In order within a queue; the events of different queues may cross on a Redis Cluster,
      // where each queue's master publishes its own.
      const expected: BackendEvent[] = [
        { kind: 'finished', id: done, queue: 'q1', state: 'completed' },
        { kind: 'finished', id: dead, queue: 'q2', state: 'dead' },
        { kind: 'finished', id: cancelled, queue: 'default', state: 'cancelled' },
        { kind: 'finished', id: archived, queue: 'default', state: 'dead' },
      ];
      const byQueue = (list: BackendEvent[]) => ['q1', 'q2', 'default'].map((q) => list.filter((e) => 'queue' in e && e.queue === q));
      expect(events).toHaveLength(expected.length);
      expect(byQueue(events)).toEqual(byQueue(expected));
    });

    it('announces a cancel request for a running task, then its end', async () => {
      const { backend } = store;
      const other = await store.reopen();
      const claimed = await claimTask(other, await enqueueOne(other));
      const events = await subscribeUntil(backend, (e) => e.length >= 2, async () => {
        expect(await other.cancelTask(claimed.id)).toBe('cancel-requested');
        await ackOk(other, cancelledAck(claimed));
      });
      expect(events).toEqual<BackendEvent[]>([
        { kind: 'cancel-requested', id: claimed.id, queue: 'default' },
        { kind: 'finished', id: claimed.id, queue: 'default', state: 'cancelled' },
      ]);
    });

    it('does not announce a retry, a requeue or a stale ack', async () => {
      const { backend } = store;
      const retried = await claimTask(backend, await enqueueOne(backend));
      const marker = await enqueueOne(backend);
      const events = await subscribeUntil(backend, (e) => e.some((x) => x.kind === 'finished' && x.id === marker), async () => {
        await ackOk(backend, retryAck(retried, 'x', HOUR));
        expect(await backend.ack([completeAck(retried)])).toEqual(['stale']);
        await backend.cancelTask(marker);
      });
      expect(events).toEqual([{ kind: 'finished', id: marker, queue: 'default', state: 'cancelled' }]);
    });

    it('stops calling a listener after unsubscribe, other listeners go on', async () => {
      const { backend } = store;
      const dropped: BackendEvent[] = [];
      const unsubscribe = await backend.subscribe((e) => dropped.push(e));
      await unsubscribe();
      const id = await enqueueOne(backend);
      const events = await subscribeUntil(backend, (e) => e.length >= 1, async () => {
        await backend.cancelTask(id);
      });
      expect(events).toEqual([{ kind: 'finished', id, queue: 'default', state: 'cancelled' }]);
      expect(dropped).toEqual([]);
    });
  });

  describe('lifecycle events', () => {
    const store = useStore(openStore);

    /** Collects lifecycle events of a lifecycle subscriber until `predicate` holds. */
    async function lifecycleUntil(backend: Backend, predicate: (events: BackendEvent[]) => boolean, trigger: () => Promise<void>): Promise<BackendEvent[]> {
      const events: BackendEvent[] = [];
      let reached: () => void = () => undefined;
      const done = new Promise<void>((resolve) => (reached = resolve));
      const unsubscribe = await backend.subscribe((event) => {
        events.push(event);
        if (predicate(events)) reached();
      }, { lifecycle: true });
      let timer: NodeJS.Timeout | undefined;
      try {
        await trigger();
        await Promise.race([done, new Promise<void>((_, reject) => (timer = setTimeout(() => reject(new Error(`lifecycle events missing: ${JSON.stringify(events)}`)), 5000)))]);
      } finally {
        clearTimeout(timer);
        await unsubscribe();
      }
      return events;
    }

    it('announces every task of a batch of acks as finished, each with its type', async () => {
      const { backend } = store;
      const other = await store.reopen();
      await other.enqueue(['a', 'b"q', 'c/d', 'a'].map((type) => newTask(type)));
      const [claimed] = await other.claim(WORKER, [{ queue: 'default', count: 4 }], LEASE_MS);
      const finished = (events: BackendEvent[]) => events.filter((e) => e.kind === 'finished');
      const events = await lifecycleUntil(backend, (e) => finished(e).length === 4, async () => {
        expect(await other.ack(claimed.tasks.map((t) => completeAck(t)))).toEqual(['ok', 'ok', 'ok', 'ok']);
      });
      expect(finished(events).map((e) => [e.id, e.kind === 'finished' ? e.type : null])).toEqual(claimed.tasks.map((t) => [t.id, t.type]));
    });

    it('tells a lifecycle subscriber of another instance enqueued, started, retrying and finished, in order, with the type', async () => {
      const { backend } = store;
      const other = await store.reopen();
      const later = await store.later(2 * HOUR);
      let id = '';
      let scheduled = '';
      const events = await lifecycleUntil(backend, (e) => e.some((x) => x.kind === 'finished' && x.id === id), async () => {
        id = await enqueueOne(other, 'mail:send', { to: 'x' }, { queue: 'life' });
        scheduled = await enqueueOne(other, 'mail:later', {}, { queue: 'life', delay: 10 * HOUR });
        await ackOk(other, retryAck(await claimTask(other, id, 'life'), 'boom', 1000));
        const second = await claimOne(later, 'life');
        expect(second.id).toBe(id);
        await ackOk(later, completeAck(second, 'ok'));
      });
      const mine = events.filter((e) => e.id === id);
      expect(mine.map((e) => e.kind)).toEqual(['enqueued', 'started', 'retrying', 'started', 'finished']);
      expect(mine[0]).toEqual({ kind: 'enqueued', id, queue: 'life', type: 'mail:send', state: 'queued' });
      expect(mine[1]).toEqual({ kind: 'started', id, queue: 'life', type: 'mail:send', attempt: 1 });
      expect(mine[2]).toMatchObject({ kind: 'retrying', id, queue: 'life', type: 'mail:send', attempt: 1 });
      expect((mine[2] as { nextRunAt: number }).nextRunAt).toBeGreaterThan(0);
      expect(mine[3]).toEqual({ kind: 'started', id, queue: 'life', type: 'mail:send', attempt: 2 });
      expect(mine[4]).toEqual({ kind: 'finished', id, queue: 'life', type: 'mail:send', state: 'completed' });
      expect(events.find((e) => e.id === scheduled)).toEqual({ kind: 'enqueued', id: scheduled, queue: 'life', type: 'mail:later', state: 'scheduled' });
    });

    it('announces each event of an ack-and-claim call once: finished, retrying, then started', async () => {
      const { backend } = store;
      const other = await store.reopen();
      await other.enqueue(['done', 'again', 'next'].map((type) => newTask(type, {}, { maxRetries: 1 })));
      const [first] = await other.claim(WORKER, [{ queue: 'default', count: 2 }], LEASE_MS);
      const [done, again] = first.tasks;
      let next = '';
      // By type: the started event may arrive before the reply that names the task.
      const events = await lifecycleUntil(backend, (e) => e.some((x) => x.kind === 'started' && x.type === 'next'), async () => {
        const reply = await other.ackAndClaim([completeAck(done), retryAck(again, 'boom', HOUR)], WORKER, [{ queue: 'default', count: 5 }], LEASE_MS);
        expect(reply.acks).toEqual(['ok', 'ok']);
        next = reply.claims[0].tasks[0].id;
      });
      // Give a duplicate publish time to arrive before counting.
      await new Promise((resolve) => setTimeout(resolve, 100));
      const after = events.filter((e) => e.kind !== 'enqueued' && !(e.kind === 'started' && e.id !== next));
      expect(after.map((e) => [e.kind, e.id])).toEqual([['finished', done.id], ['retrying', again.id], ['started', next]]);
    });

    it('announces a retry after a lost lease to lifecycle subscribers', async () => {
      const { backend } = store;
      const id = await enqueueOne(backend, 'lease:lost');
      await claimTask(backend, id, 'default', 1000);
      const later = await store.later(5000);
      const events = await lifecycleUntil(backend, (e) => e.some((x) => x.kind === 'retrying'), async () => {
        expect(await later.recoverExpired('default', 10)).toBe(1);
      });
      expect(events.find((e) => e.kind === 'retrying')).toMatchObject({ kind: 'retrying', id, type: 'lease:lost', attempt: 1 });
    });

    it('keeps lifecycle events from plain subscribers (workers)', async () => {
      const { backend } = store;
      const other = await store.reopen();
      const marker = await enqueueOne(other);
      const events = await subscribeUntil(backend, (e) => e.some((x) => x.id === marker), async () => {
        const id = await enqueueOne(other, 'plain:task');
        await ackOk(other, completeAck(await claimTask(other, marker), 'ok'));
        await other.cancelTask(id);
      });
      expect(events.every((e) => e.kind === 'finished')).toBe(true);
      expect(events.find((e) => e.id === marker)).toEqual({ kind: 'finished', id: marker, queue: 'default', state: 'completed' });
    });
  });

  describe('worker registry', () => {
    const store = useStore(openStore);

    it('lists workers with their heartbeat', async () => {
      const { backend } = store;
      expect(await backend.listWorkers()).toEqual([]);
      const before = await backend.now();
      await backend.heartbeat(workerInfo('w-1'), 30_000);
      await backend.heartbeat(workerInfo('w-2', ['t-1']), 30_000);
      const after = await backend.now();
      const workers = (await (await store.reopen()).listWorkers()).sort((a, b) => a.id.localeCompare(b.id));
      expect(workers).toEqual([
        { ...workerInfo('w-1'), lastHeartbeatAt: expect.any(Number) },
        { ...workerInfo('w-2', ['t-1']), lastHeartbeatAt: expect.any(Number) },
      ]);
      for (const w of workers) {
        expect(w.lastHeartbeatAt).toBeGreaterThanOrEqual(before);
        expect(w.lastHeartbeatAt).toBeLessThanOrEqual(after);
      }
    });

    it('replaces a worker’s entry on each heartbeat', async () => {
      const { backend } = store;
      await backend.heartbeat(workerInfo('w-1', ['a']), 30_000);
      await backend.heartbeat(workerInfo('w-1', ['b', 'c']), 30_000);
      expect(await backend.listWorkers()).toEqual([{ ...workerInfo('w-1', ['b', 'c']), lastHeartbeatAt: expect.any(Number) }]);
    });

    it('drops a worker whose heartbeats stopped for longer than the TTL', async () => {
      const { backend } = store;
      await backend.heartbeat(workerInfo('w-short'), 10_000);
      await backend.heartbeat(workerInfo('w-long'), 60_000);
      expect((await (await store.later(5000)).listWorkers()).map((w) => w.id).sort()).toEqual(['w-long', 'w-short']);
      expect((await (await store.later(11_000)).listWorkers()).map((w) => w.id)).toEqual(['w-long']);
      expect(await (await store.later(61_000)).listWorkers()).toEqual([]);
    });

    it('removes a worker', async () => {
      const { backend } = store;
      await backend.heartbeat(workerInfo('w-1'), 30_000);
      await backend.heartbeat(workerInfo('w-2'), 30_000);
      await backend.removeWorker('w-1');
      expect((await backend.listWorkers()).map((w) => w.id)).toEqual(['w-2']);
      await backend.removeWorker('never-registered');
      expect(await backend.listWorkers()).toHaveLength(1);
    });

    it('records task types with their schemas; the last record of a type wins', async () => {
      const { backend } = store;
      expect(await backend.listTaskTypes()).toEqual([]);
      await backend.recordTaskTypes([]);
      const schema = { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] };
      await backend.recordTaskTypes([
        { type: 'email:deliver', schema, queues: ['default'] },
        { type: 'image:*', schema: null, queues: ['default', 'low'] },
      ]);
      await (await store.reopen()).recordTaskTypes([{ type: 'email:deliver', schema: null, queues: ['mail'] }]);
      const types = await (await store.reopen()).listTaskTypes();
      expect(types.map(({ recordedAt: _, ...rest }) => rest)).toEqual([
        { type: 'email:deliver', schema: null, queues: ['mail'] },
        { type: 'image:*', schema: null, queues: ['default', 'low'] },
      ]);
      const now = await backend.now();
      for (const t of types) expect(Math.abs((t.recordedAt ?? 0) - now)).toBeLessThan(5_000);
      await backend.recordTaskTypes([{ type: 'email:deliver', schema, queues: ['mail'] }]);
      expect((await backend.listTaskTypes())[0].schema).toEqual(schema);
    });

    it('a worker entry carries the types it handles', async () => {
      const { backend } = store;
      await backend.heartbeat({ ...workerInfo('w-1'), types: ['a', 'email:*'] }, 30_000);
      expect((await backend.listWorkers())[0].types).toEqual(['a', 'email:*']);
    });
  });

  describe('now and close', () => {
    const store = useStore(openStore);

    it("now() is the store's clock in epoch ms, shifted by the clock offset", async () => {
      const { backend } = store;
      const a = await backend.now();
      expect(Number.isInteger(a)).toBe(true);
      expect(Math.abs(a - Date.now())).toBeLessThan(60_000);
      const b = await backend.now();
      expect(b).toBeGreaterThanOrEqual(a);
      const shifted = await (await store.later(HOUR)).now();
      const c = await backend.now();
      expect(shifted - HOUR).toBeGreaterThanOrEqual(b);
      expect(shifted - HOUR).toBeLessThanOrEqual(c);
    });

    it('a closed backend refuses work; closing twice is fine; the store stays usable', async () => {
      const { backend } = store;
      const other = await store.reopen();
      const id = await enqueueOne(other);
      await other.close();
      await other.close();
      await expectCode(other.now(), 'TL_CLOSED');
      await expectCode(other.getTask(id), 'TL_CLOSED');
      await expectCode(other.claim('w', [{ queue: 'default', count: 1 }], 1000), 'TL_CLOSED');
      expect((await backend.getTask(id))!.state).toBe('queued');
    });

    it('close ends a pending waitForWork at once', async () => {
      const other = await store.reopen();
      const elapsed = await timed(async () => {
        const waiting = other.waitForWork(['default'], 10_000, new AbortController().signal);
        await new Promise((resolve) => setTimeout(resolve, 50));
        await other.close();
        await waiting;
      });
      expect(elapsed).toBeLessThan(2000);
    });
  });
}
