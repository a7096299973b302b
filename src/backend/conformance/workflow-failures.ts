/** Conformance: workflows — failure policies, onFinish exactly once, cancel, retry, and what operators may do to a node's task. */
import { describe, expect, it } from 'vitest';
import { uuidv7 } from '../../core/ids.js';
import type { WorkflowFinish } from '../contract.js';
import {
  ackOk, cancelledAck, claimTask, completeAck, deadAck, expectCode, HOUR, LEASE_MS, newTask, retryAck, subscribeUntil, useStore, WORKER, type OpenStore,
} from './harness.js';
import { claimNode, complete, newWorkflow, nodeStates, taskIds, tasksOfType } from './workflow-harness.js';

export function workflowFailureConformance(openStore: OpenStore): void {
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
        (seen) => seen.some((e) => e.kind === 'workflow' && e.id === wf.id && e.state !== 'running'),
        () => ackOk(backend, cancelledAck(busy, 'aborted')),
      );
      // The last of its workflow events (on a Redis Cluster, the one of its creation, published by
      // another node, may reach a subscriber late).
      expect(finished.filter((e) => e.kind === 'workflow').at(-1)).toEqual({ kind: 'workflow', id: wf.id, state: 'failed' });
      const done = (await backend.getWorkflow(wf.id))!;
      expect(done.state).toBe('failed');
      expect(done.nodes.find((n) => n.id === 'bad')!.error).toBe('fatal');
      // Its worker said 'aborted'; the node says who cancelled it.
      expect(done.nodes.find((n) => n.id === 'busy')!.error).toBe('workflow failed');
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
      const events = await subscribeUntil(
        backend,
        (seen) => seen.some((e) => e.kind === 'workflow' && e.id === wf.id && e.state !== 'running'),
        () => complete(backend, wf, 'next'),
      );
      // (As above: its creation's event may reach a subscriber late on a Redis Cluster.)
      expect(events.filter((e) => e.kind === 'workflow').at(-1)).toEqual({ kind: 'workflow', id: wf.id, state: 'failed' });
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

    it('a completion and a failure acked in one batch settle in the order the worker sent them', async () => {
      const { backend } = store;
      const wf = newWorkflow([{ id: 'a' }, { id: 'b' }, { id: 'c', dependsOn: ['a'] }, { id: 'd', dependsOn: ['c'] }]);
      await backend.createWorkflow(wf);
      const a = await claimNode(backend, wf, 'a');
      const b = await claimNode(backend, wf, 'b');
      // a completes first: c starts (its task is made), then b's failure cancels it and d.
      expect(await backend.ack([completeAck(a, 'A'), deadAck(b, 'boom')])).toEqual(['ok', 'ok']);
      const done = (await backend.getWorkflow(wf.id))!;
      expect(done.nodes.map((n) => [n.id, n.state, n.error, n.taskId !== null])).toEqual([
        ['a', 'completed', null, true], ['b', 'dead', 'boom', true], ['c', 'cancelled', 'workflow failed', true], ['d', 'cancelled', 'workflow failed', false],
      ]);
    });

    it('the inputs of a node whose parents have not run name them pending, then started', async () => {
      const { backend } = store;
      const wf = newWorkflow([{ id: 'r' }, { id: 'p1', dependsOn: ['r'] }, { id: 'p2', dependsOn: ['r'] }, { id: 'j', dependsOn: ['p1', 'p2'] }]);
      await backend.createWorkflow(wf);
      expect(await backend.workflowInputs([{ workflowId: wf.id, node: 'j' }])).toEqual([{
        parents: [{ id: 'p1', state: 'pending', result: null, error: null }, { id: 'p2', state: 'pending', result: null, error: null }],
      }]);
      // Once started, a parent reads as started (its task is queued or running).
      await complete(backend, wf, 'r');
      expect((await backend.workflowInputs([{ workflowId: wf.id, node: 'j' }]))[0]!.parents.map((p) => p.state)).toEqual(['started', 'started']);
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

    it('retry starts a join of two parents when the one that runs again completes', async () => {
      const { backend } = store;
      const wf = newWorkflow([{ id: 'left' }, { id: 'right' }, { id: 'join', dependsOn: ['left', 'right'] }, { id: 'after', dependsOn: ['join'] }], { failFast: false });
      await backend.createWorkflow(wf);
      await complete(backend, wf, 'left', 'L');
      await ackOk(backend, deadAck(await claimNode(backend, wf, 'right'), 'fatal'));
      expect((await backend.getWorkflow(wf.id))!).toMatchObject({ state: 'failed', counts: { completed: 1, dead: 1, cancelled: 2 } });
      await backend.retryWorkflow(wf.id, null);
      await complete(backend, wf, 'right', 'R');
      expect((await backend.workflowInputs([{ workflowId: wf.id, node: 'join' }]))[0]!.parents.map((p) => p.result)).toEqual(['"L"', '"R"']);
      await complete(backend, wf, 'join', 'J');
      await complete(backend, wf, 'after', 'A');
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
      const wf = newWorkflow([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }, { id: 'c', dependsOn: ['b'] }], { generatedTaskIds: false });
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
