/**
 * Conformance: workflows — creation and fan-in exactly once (redelivered and concurrent
 * completions), results kept by the workflow, listing. Failure policies, onFinish, cancel and
 * retry are in workflow-failures.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  ackOk, claimTask, completeAck, expectCode, HOUR, LEASE_MS, newTask, useStore, WORKER, type OpenStore,
} from './harness.js';
import { claimNode, complete, newWorkflow, nodeStates, taskIds, tasksOfType } from './workflow-harness.js';
import { uuidv7 } from '../../core/ids.js';

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

    it('node ids with quotes, brackets, backslashes and other scripts run like any other', async () => {
      const { backend } = store;
      const ids = ['a"[', 'b]\\', 'c,"d"', 'é/ж 🙂'];
      const wf = newWorkflow([{ id: ids[0] }, { id: ids[1], dependsOn: [ids[0]] }, { id: ids[2], dependsOn: [ids[0]] }, { id: ids[3], dependsOn: [ids[1], ids[2]] }]);
      await backend.createWorkflow(wf);
      for (const id of ids) await complete(backend, wf, id, { id });
      const done = (await backend.getWorkflow(wf.id))!;
      expect(done.state).toBe('completed');
      expect(done.nodes.map((n) => [n.id, n.result, n.dependsOn])).toEqual(ids.map((id, i) => [id, JSON.stringify({ id }), wf.nodes[i].dependsOn]));
    });

    it('a workflow id that JSON escapes (a direct caller’s) is in every node task’s links', async () => {
      const { backend } = store;
      const id = `wf "a\\b" ${uuidv7()}`;
      const wf = newWorkflow([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }], { id });
      await backend.createWorkflow(wf);
      expect((await backend.getTask(taskIds(wf).a))!.links).toEqual({ workflowId: id, workflowNode: 'a' });
      await complete(backend, wf, 'a', 1);
      expect((await backend.getTask(taskIds(wf).b))!.links).toEqual({ workflowId: id, workflowNode: 'b' });
      await complete(backend, wf, 'b', 2);
      expect((await backend.getWorkflow(id))!.state).toBe('completed');
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
      const wf = newWorkflow([{ id: 'a' }, { id: 'b' }], { generatedTaskIds: false });
      wf.nodes[1].taskId = taken.id;
      await expectCode(backend.createWorkflow(wf), 'TL_TASK_CONFLICT');
      expect(await backend.getWorkflow(wf.id)).toBeNull();
      expect(await backend.getTask(wf.nodes[0].taskId)).toBeNull();
    });

    it('workflows created at once are each stored or refused on their own, as if one after another', async () => {
      const { backend } = store;
      const taken = newTask('t', null, { queue: 'elsewhere' });
      await backend.enqueue([taken]);
      // Made in the same tick: a store may write them in one call.
      const first = newWorkflow([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }], { id: 'together', onFinish: 'done' });
      const sameId = newWorkflow([{ id: 'other' }], { id: 'together' });
      const takenRoot = newWorkflow([{ id: 'x' }], { generatedTaskIds: false });
      takenRoot.nodes[0].taskId = taken.id;
      const twin = newWorkflow([{ id: 'y' }], { generatedTaskIds: false });
      twin.nodes[0].taskId = first.nodes[0].taskId;
      // Its node queue is the first's onFinish queue: it is still marked as a queue of nodes.
      const inFinishQueue = newWorkflow([{ id: 'f', queue: 'finish' }, { id: 'g', queue: 'finish', dependsOn: ['f'] }]);
      const results = await Promise.allSettled([first, sameId, takenRoot, twin, inFinishQueue].map((wf) => backend.createWorkflow(wf)));
      expect(results.map((r) => (r.status === 'fulfilled' ? 'ok' : (r.reason as { code: string }).code))).toEqual([
        'ok', 'TL_WORKFLOW_CONFLICT', 'TL_TASK_CONFLICT', 'TL_TASK_CONFLICT', 'ok',
      ]);
      expect((await backend.getWorkflow('together'))!.nodes.map((n) => n.id)).toEqual(['a', 'b']);
      expect(await backend.getWorkflow(takenRoot.id)).toBeNull();
      expect(await backend.getWorkflow(twin.id)).toBeNull();
      expect((await backend.getTask(first.nodes[0].taskId))!.links).toEqual({ workflowId: 'together', workflowNode: 'a' });
      await complete(backend, inFinishQueue, 'f', 'F', 'finish');
      await complete(backend, inFinishQueue, 'g', 'G', 'finish');
      await complete(backend, first, 'a');
      await complete(backend, first, 'b');
      expect((await backend.getWorkflow(inFinishQueue.id))!).toMatchObject({ state: 'completed', nodes: [{ result: '"F"' }, { result: '"G"' }] });
      expect((await backend.getWorkflow('together'))!.state).toBe('completed');
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
}
