/**
 * Conformance: task groups (the enqueue option `group`) and the queue's groupConcurrency — groups
 * with waiting tasks take turns in the claim, at most groupConcurrency of a group run at once,
 * and a grouped task reads, lists, counts, searches and moves like any other.
 */
import { describe, expect, it } from 'vitest';
import { parseTaskQuery } from '../../core/task-query.js';
import type { Backend, ClaimResult } from '../contract.js';
import { ackOk, completeAck, enqueueOne, LEASE_MS, newTask, retryAck, useStore, WORKER, type OpenStore } from './harness.js';
import { newWorkflow, taskIds } from './workflow-harness.js';

/** Enqueues `n` tasks of a group (null: none) in one call; returns their ids in order. */
async function enqueueGroup(backend: Backend, group: string | null, n: number, queue = 'default'): Promise<string[]> {
  const tasks = Array.from({ length: n }, (_, i) => newTask('t', { group, i }, group === null ? { queue } : { queue, group }));
  const outcomes = await backend.enqueue(tasks);
  expect(outcomes.every((o) => o.ok)).toBe(true);
  return tasks.map((t) => t.id);
}

async function claim(backend: Backend, count: number, queue = 'default', leaseMs = LEASE_MS): Promise<ClaimResult> {
  const [result] = await backend.claim(WORKER, [{ queue, count }], leaseMs);
  return result;
}

/** The group of each claimed task, from its payload (null: none). */
function groupsOf(result: ClaimResult): (string | null)[] {
  return result.tasks.map((t) => (JSON.parse(t.payload) as { group: string | null }).group);
}

export function groupsConformance(openStore: OpenStore): void {
  describe('task groups', () => {
    const store = useStore(openStore);

    it('keeps a task’s group in its record and hands it to the worker', async () => {
      const { backend } = store;
      const id = await enqueueOne(backend, 't', {}, { group: 'tenant-7' });
      const plain = await enqueueOne(backend, 't');
      expect((await backend.getTask(id))!.group).toBe('tenant-7');
      expect((await backend.getTask(plain))!.group).toBeNull();
      const claimed = await claim(backend, 2);
      expect(claimed.tasks.map((t) => t.group ?? null).sort()).toEqual([null, 'tenant-7'].sort());
    });

    it('refuses a group the enqueue option would not take, storing nothing of the call', async () => {
      const { backend } = store;
      for (const group of ['', 'with space', 'quo"te', 'x'.repeat(201), 'back\\slash']) {
        const good = newTask('t');
        const bad = { ...newTask('t'), group };
        await expect(backend.enqueue([good, bad])).rejects.toMatchObject({ code: 'TL_INVALID_ARGUMENT' });
        expect(await backend.getTask(good.id)).toBeNull();
      }
      const wf = newWorkflow([{ id: 'a' }]);
      wf.nodes[0].task.group = 'no spaces please';
      await expect(backend.createWorkflow(wf)).rejects.toMatchObject({ code: 'TL_INVALID_ARGUMENT' });
      expect(await backend.getWorkflow(wf.id)).toBeNull();
    });

    it('lets groups take turns: a small group is not held behind a large one', async () => {
      const { backend } = store;
      await enqueueGroup(backend, 'A', 50);
      await enqueueGroup(backend, 'B', 5);
      const order: (string | null)[] = [];
      for (let i = 0; i < 10; i++) order.push(...groupsOf(await claim(backend, 1)));
      expect(order).toEqual(['A', 'B', 'A', 'B', 'A', 'B', 'A', 'B', 'A', 'B']);
      expect(groupsOf(await claim(backend, 3))).toEqual(['A', 'A', 'A']);
    });

    it('takes turns within one claim, with the tasks without a group as one more turn', async () => {
      const { backend } = store;
      await enqueueGroup(backend, 'A', 20);
      await enqueueGroup(backend, null, 20);
      await enqueueGroup(backend, 'B', 20);
      const taken = groupsOf(await claim(backend, 9));
      expect(taken.filter((g) => g === 'A')).toHaveLength(3);
      expect(taken.filter((g) => g === 'B')).toHaveLength(3);
      expect(taken.filter((g) => g === null)).toHaveLength(3);
      expect((await backend.getQueue('default'))!.counts.queued).toBe(51);
    });

    it('shares claims evenly: a group short in one claim has its turn first in the next', async () => {
      const { backend } = store;
      for (const group of ['A', 'B', 'C']) await enqueueGroup(backend, group, 60);
      const counts: Record<string, number> = { A: 0, B: 0, C: 0 };
      for (let i = 0; i < 20; i++) for (const group of groupsOf(await claim(backend, 5))) counts[group!] += 1;
      expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(100);
      for (const n of Object.values(counts)) expect(Math.abs(n - 100 / 3)).toBeLessThanOrEqual(2);
    });

    it('a queue’s first group, lined up by an ack-and-claim’s own forward, is claimed by it', async () => {
      const { backend } = store;
      const [plain] = await enqueueGroup(backend, null, 1);
      const claimed = (await claim(backend, 1)).tasks[0];
      expect(claimed.id).toBe(plain);
      await backend.enqueue([newTask('t', { group: 'G' }, { group: 'G', delay: 500 })]);
      const later = await store.later(1_000);
      const reply = await later.ackAndClaim([completeAck(claimed)], WORKER, [{ queue: 'default', count: 1 }], LEASE_MS);
      expect(reply.claims[0].tasks.map((t) => t.group)).toEqual(['G']);
    });

    it('counts, lists and searches grouped queued tasks with the others', async () => {
      const { backend } = store;
      const a = await enqueueGroup(backend, 'A', 3);
      const plain = await enqueueGroup(backend, null, 2);
      const b = await enqueueGroup(backend, 'B', 2);
      const queue = (await backend.getQueue('default'))!;
      expect(queue.counts.queued).toBe(7);
      expect(queue.groups.waiting).toBe(2);
      const listed: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await backend.listTasks('default', 'queued', { limit: 3, cursor });
        listed.push(...page.tasks.map((t) => t.id));
        cursor = page.nextCursor ?? undefined;
      } while (cursor !== undefined);
      expect(listed.sort()).toEqual([...a, ...plain, ...b].sort());
      const filter = parseTaskQuery('state:queued queue:default');
      const found = await backend.searchTasks(filter, { limit: 4 });
      expect(found.total).toBe(7);
      const rest = found.nextCursor ? await backend.searchTasks(filter, { limit: 10, cursor: found.nextCursor }) : null;
      expect([...found.tasks, ...(rest?.tasks ?? [])].map((t) => t.id).sort()).toEqual([...a, ...plain, ...b].sort());
    });

    it('lets an operator delete, cancel and run grouped tasks; the group keeps its turns right', async () => {
      const { backend } = store;
      const [a1, a2] = await enqueueGroup(backend, 'A', 2);
      const [b1] = await enqueueGroup(backend, 'B', 1);
      await backend.deleteTask(a1);
      await backend.cancelTask(b1);
      expect((await backend.getTask(b1))!.state).toBe('cancelled');
      expect((await backend.getQueue('default'))!.counts.queued).toBe(1);
      expect((await backend.getQueue('default'))!.groups.waiting).toBe(1);
      const claimed = await claim(backend, 5);
      expect(claimed.tasks.map((t) => t.id)).toEqual([a2]);
      await backend.runTask(b1);
      expect((await claim(backend, 5)).tasks.map((t) => t.id)).toEqual([b1]);
      expect((await backend.getQueue('default'))!.counts.queued).toBe(0);
    });

    it('bulk-deletes the queued tasks of every group', async () => {
      const { backend } = store;
      await enqueueGroup(backend, 'A', 3);
      await enqueueGroup(backend, null, 2);
      await enqueueGroup(backend, 'B', 4);
      expect(await backend.deleteAll('default', 'queued')).toBe(9);
      expect((await backend.getQueue('default'))!.counts.queued).toBe(0);
      expect((await backend.getQueue('default'))!.groups.waiting).toBe(0);
      await enqueueGroup(backend, 'B', 1);
      expect(groupsOf(await claim(backend, 5))).toEqual(['B']);
    });

    it('counts grouped tasks as waiting for maxLength', async () => {
      const { backend } = store;
      await backend.setQueueLimits('default', { maxLength: 4 });
      await enqueueGroup(backend, 'A', 2);
      await enqueueGroup(backend, null, 1);
      await enqueueGroup(backend, 'B', 1);
      const [refused] = await backend.enqueue([newTask('t', {}, { group: 'C' })]);
      expect(refused).toMatchObject({ ok: false, reason: 'queue-full', limit: 4, waiting: 4 });
    });

    it('keeps the group when a task is retried, and through a delay', async () => {
      const { backend } = store;
      const [id] = await enqueueGroup(backend, 'A', 1);
      const first = (await claim(backend, 1)).tasks[0];
      await ackOk(backend, retryAck(first, 'again', 0));
      const second = (await claim(backend, 1)).tasks[0];
      expect(second).toMatchObject({ id, group: 'A', attempt: 2 });
      await backend.enqueue([newTask('t', { group: 'B' }, { group: 'B', delay: 1_000 })]);
      const later = await store.later(2_000);
      const third = (await claim(later, 1)).tasks[0];
      expect(third.group).toBe('B');
    });
  });

  describe('task groups in workflows', () => {
    const store = useStore(openStore);

    it('lines up a node’s task in its group, when the workflow starts and when its parent ends', async () => {
      const { backend } = store;
      await enqueueGroup(backend, 'A', 5);
      const wf = newWorkflow([{ id: 'root', group: 'B' }, { id: 'child', dependsOn: ['root'], group: 'B' }, { id: 'other', group: 'C' }]);
      await backend.createWorkflow(wf);
      expect((await backend.getQueue('default'))!.groups.waiting).toBe(3);
      const first = await claim(backend, 3);
      expect(first.tasks.map((t) => t.group).sort()).toEqual(['A', 'B', 'C']);
      await ackOk(backend, completeAck(first.tasks.find((t) => t.group === 'B')!));
      expect((await backend.getTask(taskIds(wf).child))!).toMatchObject({ state: 'queued', group: 'B' });
      const second = await claim(backend, 2);
      expect(second.tasks.map((t) => t.group).sort()).toEqual(['A', 'B']);
    });

    it('takes a cancelled workflow’s waiting grouped tasks out of their lines', async () => {
      const { backend } = store;
      const wf = newWorkflow([{ id: 'a', group: 'B' }, { id: 'b', group: 'B' }]);
      await backend.createWorkflow(wf);
      await backend.cancelWorkflow(wf.id);
      expect((await backend.getQueue('default'))!).toMatchObject({ counts: { queued: 0 }, groups: { waiting: 0 } });
      expect((await claim(backend, 5)).tasks).toHaveLength(0);
    });
  });

  describe('queue limits: groupConcurrency', () => {
    const store = useStore(openStore);

    it('runs at most groupConcurrency of a group at once, across claims; other groups go on', async () => {
      const { backend } = store;
      await backend.setQueueLimits('default', { groupConcurrency: 2 });
      await enqueueGroup(backend, 'A', 10);
      await enqueueGroup(backend, 'B', 10);
      const first = await claim(backend, 10);
      expect(groupsOf(first).sort()).toEqual(['A', 'A', 'B', 'B']);
      expect(first.limited).toBe('group');
      const second = await claim(backend, 10);
      expect(second.tasks).toHaveLength(0);
      expect(second).toMatchObject({ limited: 'group', more: true });
      expect((await backend.getQueue('default'))!.groups).toEqual({ waiting: 2, running: { A: 2, B: 2 } });
      // An ack frees its group's slot.
      await ackOk(backend, completeAck(first.tasks.find((t) => t.group === 'A')!));
      expect(groupsOf(await claim(backend, 10))).toEqual(['A']);
      // Tasks without a group are not held by the groups' limit.
      await enqueueGroup(backend, null, 3);
      const third = await claim(backend, 10);
      expect(groupsOf(third)).toEqual([null, null, null]);
    });

    it('finds the tasks that can run past many groups at their limit, and knows when one frees', async () => {
      const { backend } = store;
      await backend.setQueueLimits('default', { groupConcurrency: 1 });
      const groups = Array.from({ length: 300 }, (_, i) => `g${i}`);
      await backend.enqueue(groups.flatMap((group) => [newTask('t', { group }, { group }), newTask('t', { group }, { group })]));
      // One of each group runs: 300 claims' worth in a few big claims.
      const running = [];
      for (let i = 0; i < 10 && running.length < 300; i++) running.push(...(await claim(backend, 100)).tasks);
      expect(running).toHaveLength(300);
      expect(new Set(running.map((t) => t.group)).size).toBe(300);
      // Every group is full: nothing more of them, but tasks without a group still run.
      await enqueueGroup(backend, null, 5);
      const next = await claim(backend, 50);
      expect(groupsOf(next)).toEqual([null, null, null, null, null]);
      const none = await claim(backend, 50);
      expect(none).toMatchObject({ tasks: [], limited: 'group', more: true });
      expect((await backend.getQueue('default'))!.groups.waiting).toBe(300);
      // An ack gives its group its turn again.
      await ackOk(backend, completeAck(running[7]));
      expect(groupsOf(await claim(backend, 50))).toEqual([running[7].group]);
    });

    it('gives an expired lease’s slot back to its group', async () => {
      const { backend } = store;
      await backend.setQueueLimits('default', { groupConcurrency: 1 });
      await enqueueGroup(backend, 'A', 3);
      expect((await claim(backend, 3, 'default', 1_000)).tasks).toHaveLength(1);
      expect((await claim(backend, 3)).tasks).toHaveLength(0);
      const later = await store.later(2_000);
      expect((await claim(later, 3)).tasks).toHaveLength(1);
    });

    it('says when a full group’s earliest live lease expires (a crashed worker’s): the claim’s limitedUntil', async () => {
      const { backend } = store;
      await backend.setQueueLimits('default', { groupConcurrency: 2 });
      await enqueueGroup(backend, 'A', 5);
      const crashed = (await claim(backend, 1, 'default', 2_000)).tasks[0];
      // This claim fills A itself (its own lease is later than the crashed one's), then finds it full.
      const held = await claim(backend, 5);
      expect(groupsOf(held)).toEqual(['A']);
      expect(held).toMatchObject({ limited: 'group', limitedUntil: crashed.leaseExpiresAt });
      expect((await claim(backend, 5))).toMatchObject({ tasks: [], limited: 'group', limitedUntil: crashed.leaseExpiresAt });
      const later = await store.later(2_500);
      expect(groupsOf(await claim(later, 5))).toEqual(['A']);
    });

    it('takes a parked group’s turn again when its groupConcurrency is removed, its task ends, then the limit is set again', async () => {
      const { backend } = store;
      await backend.setQueueLimits('default', { groupConcurrency: 1 });
      await enqueueGroup(backend, 'A', 3);
      const running = (await claim(backend, 1, 'default', 600_000)).tasks[0];
      // A is full: this claim parks it.
      expect(await claim(backend, 1)).toMatchObject({ tasks: [], limited: 'group' });
      await backend.setQueueLimits('default', { groupConcurrency: null });
      await ackOk(backend, completeAck(running));
      await backend.setQueueLimits('default', { groupConcurrency: 1 });
      // A runs nothing and has 2 queued: one starts.
      const after = await claim(backend, 3);
      expect(groupsOf(after)).toEqual(['A']);
      expect(after.limited).toBe('group');
    });

    it('takes a parked group’s turn again at once when its groupConcurrency is raised', async () => {
      const { backend } = store;
      await backend.setQueueLimits('default', { groupConcurrency: 1 });
      await enqueueGroup(backend, 'A', 4);
      expect((await claim(backend, 1, 'default', 600_000)).tasks).toHaveLength(1);
      expect(await claim(backend, 1)).toMatchObject({ tasks: [], limited: 'group' });
      await backend.setQueueLimits('default', { groupConcurrency: 3 });
      expect(groupsOf(await claim(backend, 5))).toEqual(['A', 'A']);
      // Lowered again: nothing more starts while 3 run.
      await backend.setQueueLimits('default', { groupConcurrency: 2 });
      expect(await claim(backend, 5)).toMatchObject({ tasks: [], limited: 'group', more: true });
    });

    it('applies with the queue’s concurrency: the smaller bound holds', async () => {
      const { backend } = store;
      await backend.setQueueLimits('default', { groupConcurrency: 3, concurrency: 4 });
      await enqueueGroup(backend, 'A', 10);
      await enqueueGroup(backend, 'B', 10);
      const first = await claim(backend, 10);
      expect(first.tasks).toHaveLength(4);
      expect(groupsOf(first).sort()).toEqual(['A', 'A', 'B', 'B']);
      expect(first.limited).toBe('concurrency');
    });

    it('is lifted with "none"', async () => {
      const { backend } = store;
      await backend.setQueueLimits('default', { groupConcurrency: 1 });
      await enqueueGroup(backend, 'A', 4);
      expect((await claim(backend, 4)).tasks).toHaveLength(1);
      await backend.setQueueLimits('default', { groupConcurrency: 'none' });
      const after = await claim(backend, 4);
      expect(after.tasks).toHaveLength(3);
      expect(after.limited).toBeNull();
    });
  });
}
