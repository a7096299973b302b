/** Conformance: an operator's actions — pause/resume, cancel, run, archive, delete, one or all. */
import { describe, expect, it } from 'vitest';
import type { TaskState } from '../../core/task.js';
import type { BulkState } from '../contract.js';
import {
  ackOk, cancelledAck, claimOne, claimTask, completeAck, createInStates, DAY, enqueueOne, expectCode, HOUR, LEASE_MS, listAll,
  newTask, retryAck, useStore, WORKER, type OpenStore,
} from './harness.js';

const ALL_STATES: TaskState[] = ['scheduled', 'queued', 'running', 'retrying', 'completed', 'dead', 'cancelled'];

export function operationConformance(openStore: OpenStore): void {
  describe('pause and resume', () => {
    const store = useStore(openStore);

    it('a paused queue keeps accepting tasks, claims none, and is reported paused', async () => {
      const { backend } = store;
      await backend.pauseQueue('default');
      expect((await backend.getQueue('default'))!.paused).toBe(true);
      const [outcome] = await backend.enqueue([newTask('t')]);
      expect(outcome).toMatchObject({ ok: true, info: { state: 'queued' } });
      expect(await backend.claim(WORKER, [{ queue: 'default', count: 10 }], LEASE_MS)).toMatchObject([{ paused: true, tasks: [] }]);
      await backend.resumeQueue('default');
      expect((await backend.getQueue('default'))!.paused).toBe(false);
      expect(await claimOne(backend)).toMatchObject({ type: 't' });
    });

    it('pausing is per queue and seen by every backend on the store', async () => {
      const { backend } = store;
      const other = await store.reopen();
      await enqueueOne(backend, 't', {}, { queue: 'a' });
      await enqueueOne(backend, 't', {}, { queue: 'b' });
      await backend.pauseQueue('a');
      const results = await other.claim(WORKER, [{ queue: 'a', count: 1 }, { queue: 'b', count: 1 }], LEASE_MS);
      expect(results.map((r) => [r.paused, r.tasks.length])).toEqual([[true, 0], [false, 1]]);
      expect((await other.listQueues()).map((q) => [q.name, q.paused])).toEqual([['a', true], ['b', false]]);
    });

    it('pause and resume are idempotent', async () => {
      const { backend } = store;
      await enqueueOne(backend);
      await backend.pauseQueue('default');
      await backend.pauseQueue('default');
      expect((await backend.getQueue('default'))!.paused).toBe(true);
      await backend.resumeQueue('default');
      await backend.resumeQueue('default');
      expect((await backend.getQueue('default'))!.paused).toBe(false);
    });
  });

  describe('cancelTask', () => {
    const store = useStore(openStore);

    it('cancels a queued, scheduled or retrying task', async () => {
      const { backend } = store;
      const [queued, scheduled, retrying] = await createInStates(backend, 'default', ['queued', 'scheduled', 'retrying']);
      for (const id of [queued, scheduled, retrying]) {
        expect(await backend.cancelTask(id)).toBe('cancelled');
        const record = (await backend.getTask(id))!;
        expect(record).toMatchObject({ state: 'cancelled', nextRunAt: null, cancelRequested: false });
        expect(record.finishedAt).toEqual(expect.any(Number));
      }
      expect((await backend.getQueue('default'))!.counts).toMatchObject({ queued: 0, scheduled: 0, retrying: 0, cancelled: 3 });
      const [claim] = await (await store.later(2 * HOUR)).claim(WORKER, [{ queue: 'default', count: 10 }], LEASE_MS);
      expect(claim.tasks).toEqual([]);
    });

    it('asks a running task to stop: cancel-requested until the worker acks', async () => {
      const { backend } = store;
      const claimed = await claimTask(backend, await enqueueOne(backend));
      expect(await backend.cancelTask(claimed.id)).toBe('cancel-requested');
      expect(await backend.getTask(claimed.id)).toMatchObject({ state: 'running', cancelRequested: true });
      expect(await backend.cancelTask(claimed.id)).toBe('cancel-requested');
      await ackOk(backend, cancelledAck(claimed));
      expect(await backend.getTask(claimed.id)).toMatchObject({ state: 'cancelled', cancelRequested: false });
    });

    it('a running task asked to cancel whose attempt ends in a retry is cancelled, not run again', async () => {
      const { backend } = store;
      const claimed = await claimTask(backend, await enqueueOne(backend));
      await backend.cancelTask(claimed.id);
      await ackOk(backend, retryAck(claimed, 'ended before noticing', 0));
      expect(await backend.getTask(claimed.id)).toMatchObject({ state: 'cancelled', cancelRequested: false, lastError: 'ended before noticing' });
      expect((await backend.claim(WORKER, [{ queue: 'default', count: 1 }], LEASE_MS))[0].tasks).toEqual([]);
    });

    it('clears the request when the running task completes', async () => {
      const { backend } = store;
      const claimed = await claimTask(backend, await enqueueOne(backend));
      await backend.cancelTask(claimed.id);
      await ackOk(backend, completeAck(claimed, 'done anyway'));
      expect(await backend.getTask(claimed.id)).toMatchObject({ state: 'completed', cancelRequested: false });
    });

    it('refuses a finished task and an unknown id', async () => {
      const { backend } = store;
      const ids = await createInStates(backend, 'default', ['completed', 'dead', 'cancelled']);
      for (const id of ids) {
        const before = (await backend.getTask(id))!;
        await expectCode(backend.cancelTask(id), 'TL_INVALID_STATE');
        expect(await backend.getTask(id)).toEqual(before);
      }
      await expectCode(backend.cancelTask('no-such-task'), 'TL_TASK_NOT_FOUND');
    });
  });

  describe('runTask', () => {
    const store = useStore(openStore);

    it('queues a scheduled task now', async () => {
      const { backend } = store;
      const id = await enqueueOne(backend, 't', {}, { delay: HOUR });
      await backend.runTask(id);
      expect(await backend.getTask(id)).toMatchObject({ state: 'queued', nextRunAt: null, attempt: 0 });
      expect(await claimOne(backend)).toMatchObject({ id, attempt: 1 });
    });

    it('queues a retrying task now, keeping its attempt count', async () => {
      const { backend } = store;
      const [id] = await createInStates(backend, 'default', ['retrying']);
      await backend.runTask(id);
      expect(await backend.getTask(id)).toMatchObject({ state: 'queued', nextRunAt: null, attempt: 1 });
      expect(await claimOne(backend)).toMatchObject({ id, attempt: 2 });
    });

    it('runs a dead or cancelled task again with fresh attempts, keeping its history', async () => {
      const { backend } = store;
      const [dead, cancelled] = await createInStates(backend, 'default', ['dead', 'cancelled']);
      await backend.runTask(dead);
      await backend.runTask(cancelled);
      expect(await backend.getTask(dead)).toMatchObject({ state: 'queued', attempt: 0, finishedAt: null });
      expect((await backend.getTask(dead))!.attempts).toHaveLength(1);
      expect(await backend.getTask(cancelled)).toMatchObject({ state: 'queued', attempt: 0, finishedAt: null });
      expect((await backend.getQueue('default'))!.counts).toMatchObject({ queued: 2, dead: 0, cancelled: 0 });
      const [claim] = await backend.claim(WORKER, [{ queue: 'default', count: 2 }], LEASE_MS);
      expect(claim.tasks.map((t) => t.attempt)).toEqual([1, 1]);
      // No longer kept for retention as dead: cleanup far in the future leaves it.
      await ackOk(backend, completeAck(claim.tasks.find((t) => t.id === dead)!, 'second life'));
      expect(await (await store.later(2 * HOUR)).cleanup('default', 100)).toBe(0);
      expect(await backend.getTask(dead)).toMatchObject({ state: 'completed', result: 'second life' });
    });

    it('refuses a queued, running or completed task and an unknown id', async () => {
      const { backend } = store;
      const ids = await createInStates(backend, 'default', ['queued', 'running', 'completed']);
      for (const id of ids) {
        const before = (await backend.getTask(id))!;
        await expectCode(backend.runTask(id), 'TL_INVALID_STATE');
        expect(await backend.getTask(id)).toEqual(before);
      }
      await expectCode(backend.runTask('no-such-task'), 'TL_TASK_NOT_FOUND');
    });
  });

  describe('archiveTask', () => {
    const store = useStore(openStore);

    it('moves a queued, scheduled or retrying task to the dead letter', async () => {
      const { backend } = store;
      const ids = await createInStates(backend, 'default', ['queued', 'scheduled', 'retrying']);
      for (const id of ids) {
        await backend.archiveTask(id);
        const record = (await backend.getTask(id))!;
        expect(record).toMatchObject({ state: 'dead', nextRunAt: null });
        expect(record.finishedAt).toEqual(expect.any(Number));
      }
      expect((await backend.getQueue('default'))!.counts).toMatchObject({ queued: 0, scheduled: 0, retrying: 0, dead: 3 });
      const [claim] = await (await store.later(2 * HOUR)).claim(WORKER, [{ queue: 'default', count: 10 }], LEASE_MS);
      expect(claim.tasks).toEqual([]);
    });

    it('refuses a running or finished task and an unknown id', async () => {
      const { backend } = store;
      const ids = await createInStates(backend, 'default', ['running', 'completed', 'dead', 'cancelled']);
      for (const id of ids) {
        const before = (await backend.getTask(id))!;
        await expectCode(backend.archiveTask(id), 'TL_INVALID_STATE');
        expect(await backend.getTask(id)).toEqual(before);
      }
      await expectCode(backend.archiveTask('no-such-task'), 'TL_TASK_NOT_FOUND');
    });
  });

  describe('deleteTask', () => {
    const store = useStore(openStore);

    it('deletes a task in any state but running', async () => {
      const { backend } = store;
      const states = ALL_STATES.filter((s) => s !== 'running');
      const ids = await createInStates(backend, 'default', states);
      for (const id of ids) {
        await backend.deleteTask(id);
        expect(await backend.getTask(id)).toBeNull();
      }
      const info = (await backend.getQueue('default'))!;
      expect(info.counts).toEqual(Object.fromEntries(ALL_STATES.map((s) => [s, 0])));
      for (const state of states) expect((await backend.listTasks('default', state)).tasks).toEqual([]);
      expect(await (await store.later(2 * HOUR)).forwardDue('default', 100)).toBe(0);
    });

    it('refuses a running task and an unknown id', async () => {
      const { backend } = store;
      const [running] = await createInStates(backend, 'default', ['running']);
      await expectCode(backend.deleteTask(running), 'TL_INVALID_STATE');
      expect((await backend.getTask(running))!.state).toBe('running');
      await expectCode(backend.deleteTask('no-such-task'), 'TL_TASK_NOT_FOUND');
    });
  });

  describe('runAll, archiveAll, deleteAll', () => {
    const store = useStore(openStore);

    async function counts(queue = 'default') {
      return (await store.backend.getQueue(queue))!.counts;
    }

    it('runAll queues every task of a runnable state and only those', async () => {
      const { backend } = store;
      const [deadA, deadB, , retrying, scheduled] = await createInStates(backend, 'default', ['dead', 'dead', 'completed', 'retrying', 'scheduled']);
      expect(await backend.runAll('default', 'dead')).toBe(2);
      expect(await counts()).toMatchObject({ dead: 0, queued: 2, completed: 1, retrying: 1, scheduled: 1 });
      expect([...(await listAll(backend, 'default', 'queued'))].sort()).toEqual([deadA, deadB].sort());
      expect(await backend.runAll('default', 'retrying')).toBe(1);
      expect(await backend.runAll('default', 'scheduled')).toBe(1);
      expect((await backend.getTask(retrying))!.state).toBe('queued');
      expect((await backend.getTask(scheduled))!.state).toBe('queued');
      expect(await backend.runAll('default', 'completed')).toBe(0);
      expect(await backend.runAll('default', 'queued')).toBe(0);
      expect(await counts()).toMatchObject({ queued: 4, completed: 1 });
    });

    it('runAll queues cancelled tasks', async () => {
      const { backend } = store;
      await createInStates(backend, 'default', ['cancelled', 'cancelled']);
      expect(await backend.runAll('default', 'cancelled')).toBe(2);
      expect(await counts()).toMatchObject({ cancelled: 0, queued: 2 });
    });

    it('archiveAll dead-letters every queued, scheduled or retrying task, and refuses finished states', async () => {
      const { backend } = store;
      await createInStates(backend, 'default', ['queued', 'queued', 'scheduled', 'retrying', 'completed', 'running']);
      expect(await backend.archiveAll('default', 'queued')).toBe(2);
      expect(await counts()).toMatchObject({ queued: 0, dead: 2, scheduled: 1 });
      expect(await backend.archiveAll('default', 'scheduled')).toBe(1);
      expect(await backend.archiveAll('default', 'retrying')).toBe(1);
      expect(await backend.archiveAll('default', 'completed')).toBe(0);
      expect(await backend.archiveAll('default', 'dead')).toBe(0);
      expect(await counts()).toMatchObject({ queued: 0, scheduled: 0, retrying: 0, dead: 4, completed: 1, running: 1 });
    });

    it('deleteAll deletes every task of one state and leaves the others', async () => {
      const { backend } = store;
      const ids = await createInStates(backend, 'default', ['completed', 'completed', 'dead', 'queued', 'running']);
      expect(await backend.deleteAll('default', 'completed')).toBe(2);
      expect(await backend.getTask(ids[0])).toBeNull();
      expect(await backend.getTask(ids[1])).toBeNull();
      expect(await counts()).toMatchObject({ completed: 0, dead: 1, queued: 1, running: 1 });
      for (const state of ['queued', 'scheduled', 'retrying', 'dead', 'cancelled'] as BulkState[]) await backend.deleteAll('default', state);
      expect(await counts()).toMatchObject({ queued: 0, dead: 0, running: 1 });
    });

    it('acts on more tasks than one batch, and only in its queue', async () => {
      const { backend } = store;
      const many = Array.from({ length: 1200 }, (_, i) => newTask('bulk', { i }, { delay: HOUR }));
      await backend.enqueue([...many, newTask('bulk', {}, { queue: 'other', delay: HOUR })]);
      expect(await backend.runAll('default', 'scheduled')).toBe(1200);
      expect(await counts()).toMatchObject({ scheduled: 0, queued: 1200 });
      expect(await backend.archiveAll('default', 'queued')).toBe(1200);
      expect(await counts()).toMatchObject({ queued: 0, dead: 1200 });
      expect(await backend.deleteAll('default', 'dead')).toBe(1200);
      expect(await counts()).toMatchObject({ dead: 0 });
      expect(await counts('other')).toMatchObject({ scheduled: 1 });
    });

    it('returns 0 for an unknown queue', async () => {
      const { backend } = store;
      expect(await backend.runAll('nothing-here', 'dead')).toBe(0);
      expect(await backend.archiveAll('nothing-here', 'queued')).toBe(0);
      expect(await backend.deleteAll('nothing-here', 'completed')).toBe(0);
    });

    it('dead-lettered and deleted tasks keep their retention semantics', async () => {
      const { backend } = store;
      await createInStates(backend, 'default', ['queued']);
      expect(await backend.archiveAll('default', 'queued')).toBe(1);
      expect(await (await store.later(29 * DAY)).cleanup('default', 100)).toBe(0);
      expect(await (await store.later(31 * DAY)).cleanup('default', 100)).toBe(1);
    });
  });
}
