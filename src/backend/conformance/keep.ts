/** Conformance: bounds on the finished tasks a queue keeps (setQueueKeep). */
import { describe, expect, it } from 'vitest';
import type { Backend, BackendEvent } from '../contract.js';
import {
  ackOk, claimTask, completeAck, createInStates, deadAck, enqueueOne, expectCode, LEASE_MS, listAll, retryAck, subscribeUntil, useStore,
  WORKER, type OpenStore,
} from './harness.js';

const NO_BOUNDS = { completed: null, dead: null, cancelled: null };

/** Enqueues, claims and completes `n` tasks one after another; returns their ids in order. */
async function completeInTurn(backend: Backend, n: number, queue = 'default'): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = await enqueueOne(backend, 't', { i }, { queue });
    await ackOk(backend, completeAck(await claimTask(backend, id, queue), { i }));
    ids.push(id);
  }
  return ids;
}

export function keepConformance(openStore: OpenStore): void {
  describe('keep bounds on finished tasks', () => {
    const store = useStore(openStore);

    it('are unset by default, set per state, changed in part and cleared with null', async () => {
      const { backend } = store;
      await enqueueOne(backend, 't');
      expect((await backend.getQueue('default'))!.keep).toEqual(NO_BOUNDS);
      expect(await backend.setQueueKeep('default', { completed: 100, dead: 0 })).toEqual({ completed: 100, dead: 0, cancelled: null });
      expect(await backend.setQueueKeep('default', { cancelled: 5, completed: undefined })).toEqual({ completed: 100, dead: 0, cancelled: 5 });
      expect(await backend.setQueueKeep('default', { dead: null })).toEqual({ completed: 100, dead: null, cancelled: 5 });
      expect(await backend.setQueueKeep('default', {})).toEqual({ completed: 100, dead: null, cancelled: 5 });
      expect((await backend.getQueue('default'))!.keep).toEqual({ completed: 100, dead: null, cancelled: 5 });
      expect((await backend.listQueues())[0].keep).toEqual({ completed: 100, dead: null, cancelled: 5 });
    });

    it('register a queue not used yet, and belong to their queue only', async () => {
      const { backend } = store;
      expect(await backend.setQueueKeep('fresh', { completed: 3 })).toEqual({ completed: 3, dead: null, cancelled: null });
      expect(await backend.getQueue('fresh')).toMatchObject({ name: 'fresh', keep: { completed: 3 }, counts: { completed: 0 } });
      await completeInTurn(backend, 2, 'other');
      expect((await backend.getQueue('other'))!.keep).toEqual(NO_BOUNDS);
    });

    it('refuse what is not a whole count or null, and states that are not final, changing nothing', async () => {
      const { backend } = store;
      await backend.setQueueKeep('default', { completed: 7 });
      for (const bad of [{ completed: -1 }, { completed: 1.5 }, { completed: '10' }, { dead: 1e12 }, { queued: 3 }, { completed: 5, running: 1 }, null, [], 'all', 3]) {
        await expectCode(backend.setQueueKeep('default', bad as never), 'TL_INVALID_ARGUMENT');
      }
      expect((await backend.getQueue('default'))!.keep).toEqual({ completed: 7, dead: null, cancelled: null });
      await expectCode(backend.setQueueKeep('no spaces', { completed: 1 }), 'TL_INVALID_ARGUMENT');
      expect(await backend.getQueue('no spaces')).toBeNull();
    });

    it('count tasks leaving a final state too: run again, deleted, archived', async () => {
      const { backend } = store;
      const [d1, d2] = await createInStates(backend, 'default', ['dead', 'dead']);
      await backend.setQueueKeep('default', { dead: 2 });
      // Two leave the dead letter (one run again, one deleted): two others may die and be kept.
      await backend.runTask(d1);
      await backend.deleteTask(d2);
      // (Out of the way of the claims below, which take the oldest queued task.)
      await backend.archiveTask(d1);
      expect(await backend.getTask(d1)).toMatchObject({ state: 'dead' });
      await backend.runTask(d1);
      await backend.deleteTask(d1);
      const [d3, d4] = await createInStates(backend, 'default', ['dead', 'dead']);
      expect((await listAll(backend, 'default', 'dead')).sort()).toEqual([d3, d4].sort());
      // A third death is one too many: the oldest goes.
      const [d5] = await createInStates(backend, 'default', ['dead']);
      expect((await listAll(backend, 'default', 'dead')).sort()).toEqual([d4, d5].sort());
      expect(await backend.getTask(d3)).toBeNull();
    });

    it('keep the newest completed tasks up to the bound, deleting older ones as others complete', async () => {
      const { backend } = store;
      await backend.setQueueKeep('default', { completed: 2 });
      const ids = await completeInTurn(backend, 5);
      expect((await listAll(backend, 'default', 'completed')).sort()).toEqual(ids.slice(3).sort());
      for (const id of ids.slice(0, 3)) expect(await backend.getTask(id)).toBeNull();
      expect(await backend.getTask(ids[4])).toMatchObject({ state: 'completed', result: { i: 4 } });
      expect(await backend.getQueue('default')).toMatchObject({ counts: { completed: 2 }, processed: 5 });
    });

    it('with 0, delete a completed task when its ack is written, with its result and attempts, and still announce it', async () => {
      const { backend } = store;
      await backend.setQueueKeep('default', { completed: 0 });
      // One task completes at its first attempt; one after a retry (its failed attempt recorded).
      const retried = await enqueueOne(backend, 't', { n: 2 }, { id: 'retried' });
      await ackOk(backend, retryAck(await claimTask(backend, retried), 'boom', 0));
      const first = await enqueueOne(backend, 't', { n: 1 }, { id: 'first' });
      const events = await subscribeUntil(
        backend,
        (seen) => seen.filter((e) => e.kind === 'finished').length === 2,
        async () => {
          const tasks = [await claimTask(backend, first), await claimTask(backend, retried)];
          expect(await backend.ack(tasks.map((t) => completeAck(t, { big: 'result' })))).toEqual(['ok', 'ok']);
        },
      );
      expect(events.filter((e) => e.kind === 'finished')).toEqual([
        { kind: 'finished', id: first, queue: 'default', state: 'completed' },
        { kind: 'finished', id: retried, queue: 'default', state: 'completed' },
      ]);
      expect(await backend.getTask(first)).toBeNull();
      expect(await backend.getTask(retried)).toBeNull();
      expect(await backend.getQueue('default')).toMatchObject({ counts: { completed: 0, running: 0 }, processed: 3, failed: 1 });
      // Nothing of them is left: their ids can be used again.
      expect(await enqueueOne(backend, 't', {}, { id: 'first' })).toBe('first');
      expect(await backend.getTask('first')).toMatchObject({ state: 'queued', attempt: 0, result: null, attempts: [] });
    });

    it('with 0, still tell a lifecycle subscriber of another instance every event with its type', async () => {
      const { backend } = store;
      const other = await store.reopen();
      await other.setQueueKeep('default', { completed: 0, dead: 0 });
      const events: BackendEvent[] = [];
      const unsubscribe = await backend.subscribe((event) => events.push(event), { lifecycle: true });
      try {
        const ok = await enqueueOne(other, 'mail:send');
        const bad = await enqueueOne(other, 'mail:bounce', {}, { maxRetries: 0 });
        const [claimed] = await other.claim(WORKER, [{ queue: 'default', count: 2 }], LEASE_MS);
        const [first, second] = claimed.tasks;
        expect(await other.ack([completeAck(first), deadAck(second, 'gone')])).toEqual(['ok', 'ok']);
        expect(await other.getTask(ok)).toBeNull();
        expect(await other.getTask(bad)).toBeNull();
        const typed = (id: string) => events.filter((e) => e.id === id).map((e) => [e.kind, 'type' in e ? e.type : null]);
        await expect.poll(() => typed(ok), { timeout: 5000 }).toEqual([['enqueued', 'mail:send'], ['started', 'mail:send'], ['finished', 'mail:send']]);
        await expect.poll(() => typed(bad), { timeout: 5000 }).toEqual([['enqueued', 'mail:bounce'], ['started', 'mail:bounce'], ['finished', 'mail:bounce']]);
      } finally {
        await unsubscribe();
      }
    });

    it('with 0, delete completions that ride with a claim, and leave the claimed tasks alone', async () => {
      const { backend } = store;
      await backend.setQueueKeep('default', { completed: 0 });
      const ids = await Promise.all([1, 2, 3, 4].map((i) => enqueueOne(backend, 't', { i })));
      const [first] = await backend.claim(WORKER, [{ queue: 'default', count: 2 }], LEASE_MS);
      const reply = await backend.ackAndClaim(first.tasks.map((t) => completeAck(t)), WORKER, [{ queue: 'default', count: 2 }], LEASE_MS);
      expect(reply.acks).toEqual(['ok', 'ok']);
      expect(reply.claims[0].tasks).toHaveLength(2);
      for (const task of first.tasks) expect(await backend.getTask(task.id)).toBeNull();
      for (const task of reply.claims[0].tasks) expect(await backend.getTask(task.id)).toMatchObject({ state: 'running' });
      expect(new Set([...first.tasks, ...reply.claims[0].tasks].map((t) => t.id))).toEqual(new Set(ids));
    });

    it('apply to dead tasks, whether dead-lettered by an ack or by lease recovery', async () => {
      const { backend } = store;
      await backend.setQueueKeep('default', { dead: 1 });
      const a = await enqueueOne(backend, 't', {}, { maxRetries: 0 });
      await ackOk(backend, deadAck(await claimTask(backend, a), 'fatal'));
      const b = await enqueueOne(backend, 't', {}, { maxRetries: 0 });
      await claimTask(backend, b, 'default', 1000);
      expect(await (await store.later(5000)).recoverExpired('default', 100)).toBe(1);
      expect(await listAll(backend, 'default', 'dead')).toEqual([b]);
      expect(await backend.getTask(a)).toBeNull();
      expect(await backend.getTask(b)).toMatchObject({ state: 'dead', lastError: 'lease expired (worker lost)' });
    });

    it("apply to an operator's cancel and archive, one task or all", async () => {
      const { backend } = store;
      await backend.setQueueKeep('default', { cancelled: 0, dead: 1 });
      const [one, two, three] = await createInStates(backend, 'default', ['queued', 'queued', 'scheduled']);
      expect(await backend.cancelTask(one)).toBe('cancelled');
      expect(await backend.getTask(one)).toBeNull();
      expect(await backend.archiveAll('default', 'queued')).toBe(1);
      await backend.archiveTask(three);
      expect(await listAll(backend, 'default', 'dead')).toHaveLength(1);
      expect([await backend.getTask(two), await backend.getTask(three)].filter((t) => t !== null)).toHaveLength(1);
      expect(await backend.getQueue('default')).toMatchObject({ counts: { cancelled: 0, dead: 1, queued: 0, scheduled: 0 } });
    });

    it('once lowered, let the janitor delete the tasks past them, at most `limit` per call', async () => {
      const { backend } = store;
      const ids = await completeInTurn(backend, 6);
      expect(await backend.cleanup('default', 100)).toBe(0);
      await backend.setQueueKeep('default', { completed: 1 });
      expect(await backend.cleanup('default', 3)).toBe(3);
      expect(await backend.cleanup('default', 3)).toBe(2);
      expect(await backend.cleanup('default', 3)).toBe(0);
      expect(await listAll(backend, 'default', 'completed')).toEqual([ids[5]]);
      // Cleared, no bound applies: new completions stay.
      await backend.setQueueKeep('default', { completed: null });
      await completeInTurn(backend, 2);
      expect((await backend.getQueue('default'))!.counts.completed).toBe(3);
    });
  });
}
