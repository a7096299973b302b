/**
 * Conformance: workflows — creation, fan-in exactly once (redelivered and concurrent
 * completions), results kept by the workflow, failure policies, onFinish, cancel and retry.
 */
import { describe, expect, it } from 'vitest';
import { uuidv7 } from '../../core/ids.js';
import type { Backend, ClaimedTask, NewWorkflow, NewWorkflowNode, WorkflowFinish } from '../contract.js';
import {
  ackOk, cancelledAck, claimTask, completeAck, deadAck, expectCode, HOUR, LEASE_MS, listAll, newTask, retryAck, subscribeUntil, useStore, WORKER, type OpenStore,
} from './harness.js';

interface NodeSketch {
  id: string;
  type?: string;
  queue?: string;
  dependsOn?: string[];
  runOnFailure?: boolean;
  maxRetries?: number;
  retention?: number;
}

/** A workflow as the client would make it, from a sketch of its nodes. */
export function newWorkflow(nodes: NodeSketch[], options: { id?: string; failFast?: boolean; onFinish?: string; retention?: number } = {}): NewWorkflow {
  return {
    id: options.id ?? `wf-${uuidv7()}`,
    name: null,
    failFast: options.failFast ?? true,
    retention: options.retention ?? null,
    nodes: nodes.map((n): NewWorkflowNode => {
      const { id: _id, links: _links, uniqueKey: _k, uniqueFor: _f, generatedId: _g, ...task } = newTask(n.type ?? `node:${n.id}`, { node: n.id }, {
        queue: n.queue, maxRetries: n.maxRetries, retention: n.retention,
      });
      return { id: n.id, taskId: uuidv7(), task, dependsOn: n.dependsOn ?? [], runOnFailure: n.runOnFailure ?? false };
    }),
    onFinish: options.onFinish === undefined ? null : { taskId: uuidv7(), task: stripped(options.onFinish) },
  };
}

function stripped(type: string) {
  const { id: _id, links: _links, uniqueKey: _k, uniqueFor: _f, generatedId: _g, ...task } = newTask(type, null, { queue: 'finish' });
  return task;
}

/** The task ids of a workflow's nodes, by node id. */
function taskIds(wf: NewWorkflow): Record<string, string> {
  return Object.fromEntries(wf.nodes.map((n) => [n.id, n.taskId]));
}

/** Claims the queued task of a node, checking it is that node's. */
async function claimNode(backend: Backend, wf: NewWorkflow, node: string, queue = 'default'): Promise<ClaimedTask> {
  const claimed = await claimTask(backend, taskIds(wf)[node], queue);
  expect(claimed.links).toMatchObject({ workflowId: wf.id, workflowNode: node });
  return claimed;
}

async function complete(backend: Backend, wf: NewWorkflow, node: string, result: unknown = node, queue = 'default'): Promise<void> {
  await ackOk(backend, completeAck(await claimNode(backend, wf, node, queue), result));
}

async function nodeStates(backend: Backend, id: string): Promise<Record<string, string>> {
  const record = (await backend.getWorkflow(id))!;
  return Object.fromEntries(record.nodes.map((n) => [n.id, n.state]));
}

/** Tasks of a type in a queue and state. */
async function tasksOfType(backend: Backend, type: string, state: 'queued' | 'completed' = 'queued', queue = 'default'): Promise<string[]> {
  const ids = await listAll(backend, queue, state);
  const types = await Promise.all(ids.map(async (id) => (await backend.getTask(id))?.type));
  return ids.filter((_, i) => types[i] === type);
}

export function workflowConformance(openStore: OpenStore): void {
  describe('workflows: creation and fan-in', () => {
    const store = useStore(openStore);

    it('a chain runs in order, each node seeing its parent’s result; results are kept by node id', async () => {
      const { backend } = store;
      const wf = newWorkflow([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }, { id: 'c', dependsOn: ['b'] }]);
      expect(await backend.createWorkflow(wf)).toEqual({ id: wf.id, state: 'running' });
      const created = (await backend.getWorkflow(wf.id))!;
      expect(created).toMatchObject({ id: wf.id, state: 'running', finishedAt: null });
      expect(created.nodes.map((n) => [n.id, n.state, n.dependsOn])).toEqual([['a', 'queued', []], ['b', 'pending', ['a']], ['c', 'pending', ['b']]]);
      // A node has a task only from when it starts.
      expect(created.nodes.map((n) => n.taskId)).toEqual([taskIds(wf).a, null, null]);
      expect(await backend.getTask(taskIds(wf).b)).toBeNull();
      await complete(backend, wf, 'a', { n: 1 });
      expect(await nodeStates(backend, wf.id)).toEqual({ a: 'completed', b: 'queued', c: 'pending' });
      expect(await backend.workflowInputs([{ workflowId: wf.id, node: 'b' }])).toEqual([{ parents: [{ id: 'a', state: 'completed', result: '{"n":1}', error: null }] }]);
      await complete(backend, wf, 'b', { n: 2 });
      await complete(backend, wf, 'c', { n: 3 });
      const done = (await backend.getWorkflow(wf.id))!;
      expect(done.state).toBe('completed');
      expect(done.finishedAt).toEqual(expect.any(Number));
      expect(done.nodes.map((n) => [n.id, n.state, n.result])).toEqual([['a', 'completed', '{"n":1}'], ['b', 'completed', '{"n":2}'], ['c', 'completed', '{"n":3}']]);
      expect(done.counts).toEqual({ completed: 3 });
    });

    it('a group starts all its members at once and finishes when all have', async () => {
      const { backend } = store;
      const wf = newWorkflow([{ id: 'x' }, { id: 'y' }, { id: 'z' }]);
      await backend.createWorkflow(wf);
      expect(await nodeStates(backend, wf.id)).toEqual({ x: 'queued', y: 'queued', z: 'queued' });
      await complete(backend, wf, 'x');
      await complete(backend, wf, 'y');
      expect((await backend.getWorkflow(wf.id))!.state).toBe('running');
      await complete(backend, wf, 'z');
      expect((await backend.getWorkflow(wf.id))!.state).toBe('completed');
    });

    it('a chord callback sees its members’ results in declared order, whatever order they finished in', async () => {
      const { backend } = store;
      const members = ['m0', 'm1', 'm2', 'm3'];
      const wf = newWorkflow([...members.map((id) => ({ id })), { id: 'cb', dependsOn: members }]);
      await backend.createWorkflow(wf);
      const claimed = [];
      for (let i = 0; i < members.length; i++) claimed.push(await claimTask(store.backend, taskIds(wf)[members[i]]));
      for (const task of [...claimed].reverse()) await ackOk(backend, completeAck(task, task.links.workflowNode));
      const [inputs] = await backend.workflowInputs([{ workflowId: wf.id, node: 'cb' }]);
      expect(inputs!.parents.map((p) => [p.id, p.result])).toEqual(members.map((m) => [m, JSON.stringify(m)]));
      expect(await backend.workflowInputs([{ workflowId: wf.id, node: 'nope' }, { workflowId: 'nope', node: 'cb' }])).toEqual([null, null]);
    });

    it('a diamond starts its join once, after both sides', async () => {
      const { backend } = store;
      const wf = newWorkflow([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }, { id: 'c', dependsOn: ['a'] }, { id: 'd', dependsOn: ['b', 'c'] }]);
      await backend.createWorkflow(wf);
      await complete(backend, wf, 'a');
      expect(await nodeStates(backend, wf.id)).toMatchObject({ b: 'queued', c: 'queued', d: 'pending' });
      await complete(backend, wf, 'b');
      expect(await nodeStates(backend, wf.id)).toMatchObject({ d: 'pending' });
      await complete(backend, wf, 'c');
      expect(await tasksOfType(backend, 'node:d')).toEqual([taskIds(wf).d]);
      await complete(backend, wf, 'd');
      expect((await backend.getWorkflow(wf.id))!.state).toBe('completed');
    });

    it('nodes run in their own queues, and every node task carries its workflow and node id', async () => {
      const { backend } = store;
      const wf = newWorkflow([{ id: 'a', queue: 'images' }, { id: 'b', queue: 'mail', dependsOn: ['a'] }]);
      await backend.createWorkflow(wf);
      await complete(backend, wf, 'a', 1, 'images');
      expect((await backend.getTask(taskIds(wf).b))!.links).toEqual({ workflowId: wf.id, workflowNode: 'b' });
      await complete(backend, wf, 'b', 2, 'mail');
      expect((await backend.getWorkflow(wf.id))!.state).toBe('completed');
    });

    it('a 10,000-member group runs its chord callback exactly once, with every result', async () => {
      const { backend } = store;
      const members = Array.from({ length: 9_999 }, (_, i) => `m${i}`);
      const wf = newWorkflow([...members.map((id) => ({ id, type: 'member' })), { id: 'cb', type: 'callback', dependsOn: members }]);
      await backend.createWorkflow(wf);
      for (;;) {
        const [claim] = await backend.claim(WORKER, [{ queue: 'default', count: 500 }], LEASE_MS);
        if (claim.tasks.length === 0) break;
        const acks = claim.tasks.filter((t) => t.type === 'member').map((t) => completeAck(t, t.links.workflowNode));
        expect(await backend.ack(acks)).toEqual(acks.map(() => 'ok'));
        if (claim.tasks.some((t) => t.type === 'callback')) {
          expect(claim.tasks.filter((t) => t.type === 'callback')).toHaveLength(1);
          const callback = claim.tasks.find((t) => t.type === 'callback')!;
          const [inputs] = await backend.workflowInputs([{ workflowId: wf.id, node: 'cb' }]);
          expect(inputs!.parents.map((p) => p.result)).toEqual(members.map((m) => JSON.stringify(m)));
          await ackOk(backend, completeAck(callback, 'all'));
        }
      }
      const done = (await backend.getWorkflow(wf.id))!;
      expect(done.state).toBe('completed');
      expect(done.counts).toEqual({ completed: 10_000 });
      expect((await backend.getQueue('default'))!.counts).toMatchObject({ queued: 0, running: 0, completed: 10_000 });
    }, 120_000);

    it('the same completion delivered twice starts the child once', async () => {
      const { backend } = store;
      const wf = newWorkflow([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }]);
      await backend.createWorkflow(wf);
      const a = await claimNode(backend, wf, 'a');
      expect(await backend.ack([completeAck(a, 1), completeAck(a, 1)])).toEqual(['ok', 'stale']);
      expect(await backend.ack([completeAck(a, 1)])).toEqual(['stale']);
      expect(await tasksOfType(backend, 'node:b')).toEqual([taskIds(wf).b]);
    });

    it('an attempt whose lease was recovered cannot complete its node; the new attempt does, once', async () => {
      const { backend } = store;
      const wf = newWorkflow([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }]);
      await backend.createWorkflow(wf);
      const first = await claimNode(backend, wf, 'a');
      const later = await store.later(LEASE_MS + HOUR);
      expect(await later.recoverExpired('default', 10)).toBe(1);
      const muchLater = await store.later(LEASE_MS + 2 * HOUR);
      expect(await muchLater.forwardDue('default', 10)).toBe(1);
      const second = await claimTask(muchLater, taskIds(wf).a);
      expect(await backend.ack([completeAck(first, 'old')])).toEqual(['stale']);
      expect(await nodeStates(backend, wf.id)).toMatchObject({ a: 'running', b: 'pending' });
      await ackOk(muchLater, completeAck(second, 'new'));
      expect((await backend.getWorkflow(wf.id))!.nodes[0].result).toBe('"new"');
      expect(await tasksOfType(backend, 'node:b')).toEqual([taskIds(wf).b]);
    });

    it('the last two parents completing at once, from two connections, start the child exactly once', async () => {
      const { backend } = store;
      const other = await store.reopen();
      for (let round = 0; round < 10; round++) {
        const wf = newWorkflow([{ id: 'p' }, { id: 'q' }, { id: 'join', type: 'join', dependsOn: ['p', 'q'] }]);
        await backend.createWorkflow(wf);
        const [claim] = await backend.claim(WORKER, [{ queue: 'default', count: 2 }], LEASE_MS);
        expect(claim.tasks).toHaveLength(2);
        const results = await Promise.all([backend.ack([completeAck(claim.tasks[0])]), other.ack([completeAck(claim.tasks[1])])]);
        expect(results).toEqual([['ok'], ['ok']]);
        expect(await tasksOfType(backend, 'join')).toEqual([taskIds(wf).join]);
        await complete(backend, wf, 'join');
      }
    });

    it('a workflow id in use is refused and nothing of the second workflow is stored', async () => {
      const { backend } = store;
      const first = newWorkflow([{ id: 'a' }], { id: 'same' });
      await backend.createWorkflow(first);
      const second = newWorkflow([{ id: 'other' }], { id: 'same' });
      await expectCode(backend.createWorkflow(second), 'TL_WORKFLOW_CONFLICT');
      expect(await backend.getTask(second.nodes[0].taskId)).toBeNull();
      expect((await backend.getWorkflow('same'))!.nodes.map((n) => n.id)).toEqual(['a']);
    });

    it('a root whose task id is taken stores nothing of the workflow', async () => {
      const { backend } = store;
      const taken = newTask('t');
      await backend.enqueue([taken]);
      const wf = newWorkflow([{ id: 'a' }, { id: 'b' }]);
      wf.nodes[1].taskId = taken.id;
      await expectCode(backend.createWorkflow(wf), 'TL_TASK_CONFLICT');
      expect(await backend.getWorkflow(wf.id)).toBeNull();
      expect(await backend.getTask(wf.nodes[0].taskId)).toBeNull();
    });

    it('a workflow outlives its nodes’ task retention, keeping their results until its own ends', async () => {
      const { backend } = store;
      const wf = newWorkflow([{ id: 'a', retention: 1000 }, { id: 'b', retention: 1000, dependsOn: ['a'] }], { retention: 2 * HOUR });
      await backend.createWorkflow(wf);
      await complete(backend, wf, 'a', { kept: 'a' });
      const later = await store.later(HOUR);
      await complete(later, wf, 'b', { kept: 'b' });
      const evenLater = await store.later(HOUR + 60_000);
      await evenLater.cleanup('default', 100);
      expect(await backend.getTask(taskIds(wf).a)).toBeNull();
      expect(await backend.getTask(taskIds(wf).b)).toBeNull();
      const kept = (await backend.getWorkflow(wf.id))!;
      expect(kept.nodes.map((n) => [n.state, n.result])).toEqual([['completed', '{"kept":"a"}'], ['completed', '{"kept":"b"}']]);
      expect(await evenLater.cleanupWorkflows(100)).toBe(0);
      const past = await store.later(4 * HOUR);
      expect(await past.cleanupWorkflows(100)).toBe(1);
      expect(await backend.getWorkflow(wf.id)).toBeNull();
    });

    it('lists workflows newest first, by state, a page at a time; a bad cursor or state is refused', async () => {
      const { backend } = store;
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const wf = newWorkflow([{ id: 'a', queue: `q${i}` }], { id: `list-${i}` });
        await backend.createWorkflow(wf);
        ids.push(wf.id);
        if (i === 2) await complete(backend, wf, 'a', null, 'q2');
      }
      const first = await backend.listWorkflows({ limit: 3 });
      expect(first.workflows.map((w) => w.id)).toEqual(['list-4', 'list-3', 'list-2']);
      expect(first.workflows[0].nodes).toEqual([]);
      expect(first.workflows[0].counts).toEqual({ queued: 1 });
      const second = await backend.listWorkflows({ limit: 3, cursor: first.nextCursor! });
      expect(second.workflows.map((w) => w.id)).toEqual(['list-1', 'list-0']);
      expect(second.nextCursor).toBeNull();
      expect((await backend.listWorkflows({ state: 'completed' })).workflows.map((w) => w.id)).toEqual(['list-2']);
      await expectCode(backend.listWorkflows({ cursor: 'junk' }), 'TL_INVALID_ARGUMENT');
      await expectCode(backend.listWorkflows({ state: 'completed', cursor: first.nextCursor! }), 'TL_INVALID_ARGUMENT');
      await expectCode(backend.listWorkflows({ state: 'nope' as 'running' }), 'TL_INVALID_ARGUMENT');
      await expectCode(backend.listWorkflows({ limit: 0 }), 'TL_INVALID_ARGUMENT');
    });
  });

  describe('workflows: failure, onFinish, cancel and retry', () => {
    const store = useStore(openStore);

    it('failFast: a dead node fails the workflow; pending and waiting nodes are cancelled, running ones asked to cancel', async () => {
      const { backend } = store;
      const wf = newWorkflow([{ id: 'bad' }, { id: 'busy' }, { id: 'waiting' }, { id: 'after', dependsOn: ['bad'] }, { id: 'later', dependsOn: ['busy'] }], { onFinish: 'finish' });
      await backend.createWorkflow(wf);
      const bad = await claimNode(backend, wf, 'bad');
      const busy = await claimNode(backend, wf, 'busy');
      const events = await subscribeUntil(
        backend,
        (seen) => seen.some((e) => e.kind === 'cancel-requested' && e.id === busy.id),
        () => ackOk(backend, deadAck(bad, 'fatal')),
      );
      expect(events.some((e) => e.kind === 'finished' && e.id === taskIds(wf).waiting && e.state === 'cancelled')).toBe(true);
      expect(await nodeStates(backend, wf.id)).toEqual({ bad: 'dead', busy: 'running', waiting: 'cancelled', after: 'cancelled', later: 'cancelled' });
      expect((await backend.getWorkflow(wf.id))!.state).toBe('running');
      expect(await tasksOfType(backend, 'finish', 'queued', 'finish')).toEqual([]);
      const finished = await subscribeUntil(
        backend,
        (seen) => seen.some((e) => e.kind === 'workflow' && e.id === wf.id),
        () => ackOk(backend, cancelledAck(busy, 'aborted')),
      );
      expect(finished.find((e) => e.kind === 'workflow')).toEqual({ kind: 'workflow', id: wf.id, state: 'failed' });
      const done = (await backend.getWorkflow(wf.id))!;
      expect(done.state).toBe('failed');
      expect(done.nodes.find((n) => n.id === 'bad')!.error).toBe('fatal');
      const [finish] = await tasksOfType(backend, 'finish', 'queued', 'finish');
      expect(finish).toBe(done.onFinishTaskId);
      const payload: WorkflowFinish = { workflowId: wf.id, state: 'failed', completed: [], failed: ['bad'], cancelled: ['busy', 'waiting', 'after', 'later'] };
      expect((await backend.getTask(finish))!.payload).toEqual(payload);
    });

    it('without failFast, independent branches finish; only the failed node’s descendants are cancelled', async () => {
      const { backend } = store;
      const wf = newWorkflow([{ id: 'bad' }, { id: 'ok' }, { id: 'child', dependsOn: ['bad'] }, { id: 'grandchild', dependsOn: ['child'] }, { id: 'next', dependsOn: ['ok'] }], { failFast: false });
      await backend.createWorkflow(wf);
      await ackOk(backend, deadAck(await claimNode(backend, wf, 'bad'), 'fatal'));
      expect(await nodeStates(backend, wf.id)).toEqual({ bad: 'dead', ok: 'queued', child: 'cancelled', grandchild: 'cancelled', next: 'pending' });
      await complete(backend, wf, 'ok');
      await complete(backend, wf, 'next');
      const done = (await backend.getWorkflow(wf.id))!;
      expect(done.state).toBe('failed');
      expect(done.counts).toEqual({ dead: 1, completed: 2, cancelled: 2 });
    });

    it('a runOnFailure node runs after a failure and sees it among its parents', async () => {
      const { backend } = store;
      const wf = newWorkflow([{ id: 'good' }, { id: 'bad' }, { id: 'cleanup', dependsOn: ['bad', 'good'], runOnFailure: true }]);
      await backend.createWorkflow(wf);
      const good = await claimNode(backend, wf, 'good');
      await ackOk(backend, deadAck(await claimNode(backend, wf, 'bad'), 'fatal'));
      // failFast asks the running sibling to cancel; it completes anyway.
      expect(await nodeStates(backend, wf.id)).toEqual({ good: 'running', bad: 'dead', cleanup: 'pending' });
      await ackOk(backend, completeAck(good, 'fine'));
      const [inputs] = await backend.workflowInputs([{ workflowId: wf.id, node: 'cleanup' }]);
      expect(inputs!.parents).toEqual([
        { id: 'bad', state: 'dead', result: null, error: 'fatal' },
        { id: 'good', state: 'completed', result: '"fine"', error: null },
      ]);
      await complete(backend, wf, 'cleanup');
      expect((await backend.getWorkflow(wf.id))!).toMatchObject({ state: 'failed', counts: { dead: 1, completed: 2 } });
    });

    it('a node whose lease expires with no retry left dies, and fails the workflow', async () => {
      const { backend } = store;
      const wf = newWorkflow([{ id: 'lost', maxRetries: 0 }, { id: 'next', dependsOn: ['lost'] }]);
      await backend.createWorkflow(wf);
      await claimNode(backend, wf, 'lost');
      const later = await store.later(LEASE_MS + 1000);
      expect(await later.recoverExpired('default', 10)).toBe(1);
      expect((await backend.getWorkflow(wf.id))!).toMatchObject({ state: 'failed', counts: { dead: 1, cancelled: 1 } });
    });

    it('onFinish runs exactly once, with the nodes by outcome', async () => {
      const { backend } = store;
      const wf = newWorkflow([{ id: 'a' }, { id: 'b' }], { onFinish: 'finish' });
      await backend.createWorkflow(wf);
      const [claim] = await backend.claim(WORKER, [{ queue: 'default', count: 2 }], LEASE_MS);
      const other = await store.reopen();
      await Promise.all([backend.ack([completeAck(claim.tasks[0])]), other.ack([completeAck(claim.tasks[1])])]);
      const finishes = await tasksOfType(backend, 'finish', 'queued', 'finish');
      expect(finishes).toHaveLength(1);
      const task = (await backend.getTask(finishes[0]))!;
      expect(task.links).toEqual({ workflowId: wf.id });
      expect(task.payload).toEqual({ workflowId: wf.id, state: 'completed', completed: ['a', 'b'], failed: [], cancelled: [] });
    });

    it('cancelWorkflow cancels pending and waiting nodes at once, asks running ones, and ends cancelled', async () => {
      const { backend } = store;
      const wf = newWorkflow([{ id: 'run' }, { id: 'wait' }, { id: 'next', dependsOn: ['run'], runOnFailure: true }], { onFinish: 'finish' });
      await backend.createWorkflow(wf);
      const running = await claimNode(backend, wf, 'run');
      const events = await subscribeUntil(
        backend,
        (seen) => seen.some((e) => e.kind === 'cancel-requested' && e.id === running.id),
        async () => {
          expect((await backend.cancelWorkflow(wf.id))!.state).toBe('running');
        },
      );
      expect(events.length).toBeGreaterThan(0);
      expect(await nodeStates(backend, wf.id)).toEqual({ run: 'running', wait: 'cancelled', next: 'cancelled' });
      // `next` never started: it has no task to show.
      expect((await backend.getWorkflow(wf.id))!.nodes.map((n) => n.taskId)).toEqual([taskIds(wf).run, taskIds(wf).wait, null]);
      expect((await backend.getTask(running.id))!.cancelRequested).toBe(true);
      await ackOk(backend, cancelledAck(running, 'aborted'));
      const done = (await backend.getWorkflow(wf.id))!;
      expect(done.state).toBe('cancelled');
      expect((await backend.getTask(done.onFinishTaskId!))!.payload).toMatchObject({ state: 'cancelled', cancelled: ['run', 'wait', 'next'] });
      await expectCode(backend.cancelWorkflow(wf.id), 'TL_INVALID_STATE');
      expect(await backend.cancelWorkflow('no-such-workflow')).toBeNull();
    });

    it('cancelling a workflow with nothing running ends it at once', async () => {
      const { backend } = store;
      const wf = newWorkflow([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }]);
      await backend.createWorkflow(wf);
      expect((await backend.cancelWorkflow(wf.id))!.state).toBe('cancelled');
      expect((await backend.getTask(taskIds(wf).a))!.state).toBe('cancelled');
    });

    it('retryWorkflow re-runs the dead and cancelled nodes, keeping completed results; onFinish runs again', async () => {
      const { backend } = store;
      const wf = newWorkflow([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }, { id: 'c', dependsOn: ['b'] }], { onFinish: 'finish' });
      await backend.createWorkflow(wf);
      await complete(backend, wf, 'a', 'A');
      await ackOk(backend, deadAck(await claimNode(backend, wf, 'b'), 'flaky'));
      const failed = (await backend.getWorkflow(wf.id))!;
      expect(failed.state).toBe('failed');
      expect(await backend.retryWorkflow('no-such-workflow', null)).toBeNull();
      const nextFinish = uuidv7();
      const retried = (await backend.retryWorkflow(wf.id, nextFinish))!;
      expect(retried).toMatchObject({ state: 'running', finishedAt: null, onFinishTaskId: nextFinish });
      expect(retried.nodes.map((n) => [n.id, n.state, n.result])).toEqual([['a', 'completed', '"A"'], ['b', 'queued', null], ['c', 'pending', null]]);
      const b = await claimNode(backend, wf, 'b');
      expect(b.attempt).toBe(1);
      expect((await backend.workflowInputs([{ workflowId: wf.id, node: 'b' }]))[0]!.parents[0].result).toBe('"A"');
      await ackOk(backend, completeAck(b, 'B'));
      await complete(backend, wf, 'c', 'C');
      expect((await backend.getWorkflow(wf.id))!.state).toBe('completed');
      expect((await tasksOfType(backend, 'finish', 'queued', 'finish')).sort()).toEqual([failed.onFinishTaskId!, nextFinish].sort());
      await expectCode(backend.retryWorkflow(wf.id, null), 'TL_INVALID_STATE');
    });

    it('retry re-runs what depends on a re-run node, even a completed runOnFailure node and its children', async () => {
      const { backend } = store;
      const wf = newWorkflow([{ id: 'other' }, { id: 'a' }, { id: 'r', dependsOn: ['a'], runOnFailure: true }, { id: 'c', dependsOn: ['r'] }], { failFast: false });
      await backend.createWorkflow(wf);
      await complete(backend, wf, 'other', 'kept');
      await ackOk(backend, deadAck(await claimNode(backend, wf, 'a'), 'fatal'));
      await complete(backend, wf, 'r', 'first run');
      await complete(backend, wf, 'c', 'first run');
      expect((await backend.getWorkflow(wf.id))!.state).toBe('failed');
      const retried = (await backend.retryWorkflow(wf.id, null))!;
      expect(retried.nodes.map((n) => [n.id, n.state, n.result])).toEqual([['other', 'completed', '"kept"'], ['a', 'queued', null], ['r', 'pending', null], ['c', 'pending', null]]);
      await complete(backend, wf, 'a', 'A');
      expect((await backend.workflowInputs([{ workflowId: wf.id, node: 'r' }]))[0]!.parents).toEqual([{ id: 'a', state: 'completed', result: '"A"', error: null }]);
      await complete(backend, wf, 'r', 'R');
      await complete(backend, wf, 'c', 'C');
      expect((await backend.getWorkflow(wf.id))!.state).toBe('completed');
    });

    it('a node asked to cancel by failFast is cancelled when its attempt ends in a retry, not retried', async () => {
      const { backend } = store;
      const wf = newWorkflow([{ id: 'bad' }, { id: 'busy' }]);
      await backend.createWorkflow(wf);
      const bad = await claimNode(backend, wf, 'bad');
      const busy = await claimNode(backend, wf, 'busy');
      await ackOk(backend, deadAck(bad, 'fatal'));
      expect((await backend.getTask(busy.id))!.cancelRequested).toBe(true);
      await ackOk(backend, retryAck(busy, 'connection reset', 1000));
      expect((await backend.getTask(busy.id))!).toMatchObject({ state: 'cancelled', cancelRequested: false });
      expect((await backend.getWorkflow(wf.id))!).toMatchObject({ state: 'failed', counts: { dead: 1, cancelled: 1 } });
    });

    it('retrying a cancelled workflow whose nodes all completed anyway ends it completed at once', async () => {
      const { backend } = store;
      const wf = newWorkflow([{ id: 'a' }]);
      await backend.createWorkflow(wf);
      const a = await claimNode(backend, wf, 'a');
      await backend.cancelWorkflow(wf.id);
      await ackOk(backend, completeAck(a, 'done anyway'));
      expect((await backend.getWorkflow(wf.id))!.state).toBe('cancelled');
      expect((await backend.retryWorkflow(wf.id, null))!).toMatchObject({ state: 'completed', counts: { completed: 1 } });
    });

    it('bulk run goes past any number of workflow node tasks to the others', async () => {
      const { backend } = store;
      const wf = newWorkflow(Array.from({ length: 600 }, (_, i) => ({ id: `n${i}` })), { failFast: false });
      await backend.createWorkflow(wf);
      for (;;) {
        const [claim] = await backend.claim(WORKER, [{ queue: 'default', count: 500 }], LEASE_MS);
        if (claim.tasks.length === 0) break;
        expect(await backend.ack(claim.tasks.map((t) => deadAck(t, 'fatal')))).toEqual(claim.tasks.map(() => 'ok'));
      }
      const plain = newTask('plain');
      await backend.enqueue([plain]);
      await ackOk(backend, deadAck(await claimTask(backend, plain.id), 'fatal'));
      expect(await backend.runAll('default', 'dead')).toBe(1);
      expect((await backend.getTask(plain.id))!.state).toBe('queued');
      expect((await backend.getWorkflow(wf.id))!.counts).toEqual({ dead: 600 });
    });

    it('a node waiting for its next attempt can be run now; only a finished node’s re-run is the workflow’s', async () => {
      const { backend } = store;
      const wf = newWorkflow([{ id: 'a' }]);
      await backend.createWorkflow(wf);
      await ackOk(backend, retryAck(await claimNode(backend, wf, 'a'), 'flaky', HOUR));
      expect((await backend.getTask(taskIds(wf).a))!.state).toBe('retrying');
      await backend.runTask(taskIds(wf).a);
      await complete(backend, wf, 'a', 'now');
      expect((await backend.getWorkflow(wf.id))!.state).toBe('completed');
    });

    it('a node whose task id is taken when it starts ends dead saying so; the completing ack still applies', async () => {
      const { backend } = store;
      const wf = newWorkflow([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }, { id: 'c', dependsOn: ['b'] }]);
      await backend.createWorkflow(wf);
      const squatter = newTask('other', {}, { id: taskIds(wf).b });
      await backend.enqueue([squatter]);
      const a = await claimNode(backend, wf, 'a');
      expect(await backend.ack([completeAck(a, 'A')])).toEqual(['ok']);
      const done = (await backend.getWorkflow(wf.id))!;
      expect(done.nodes.map((n) => [n.id, n.state])).toEqual([['a', 'completed'], ['b', 'dead'], ['c', 'cancelled']]);
      expect(done.nodes[1].error).toContain('is taken');
      expect(done.state).toBe('failed');
      expect((await backend.getTask(squatter.id))!.type).toBe('other');
    });

    it('a node’s task is the workflow’s to run again; deleting a waiting one cancels the node', async () => {
      const { backend } = store;
      const wf = newWorkflow([{ id: 'a' }, { id: 'b' }], { failFast: false });
      await backend.createWorkflow(wf);
      await ackOk(backend, deadAck(await claimNode(backend, wf, 'a'), 'fatal'));
      await expectCode(backend.runTask(taskIds(wf).a), 'TL_INVALID_STATE');
      expect(await backend.runAll('default', 'dead')).toBe(0);
      await backend.deleteTask(taskIds(wf).b);
      expect((await backend.getWorkflow(wf.id))!).toMatchObject({ state: 'failed', counts: { dead: 1, cancelled: 1 } });
    });
  });
}
