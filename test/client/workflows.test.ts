import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  chain, chord, Client, defineTask, group, ParentFailure, PermanentError, task, Worker, workflow, WorkflowFailedError, isTasklineError,
  type TaskContext,
} from '../../src/index.js';
import { STORES, type TestStore } from '../helpers/stores.js';

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe.each(STORES)('workflows through the client and a worker on %s', (_name, openStore) => {
  let store: TestStore;
  let client: Client;
  const workers: Worker[] = [];

  function startWorker(setup: (w: Worker) => void): Worker {
    const worker = new Worker(store.backend, { idleWait: 1000, concurrency: 8 });
    setup(worker);
    workers.push(worker);
    void worker.start();
    return worker;
  }

  beforeEach(async () => {
    store = await openStore();
    client = new Client(store.backend);
  });

  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop({ timeout: 1000 })));
    await client.close();
    await store.cleanup();
  });

  it('a chain passes each result to the next node in ctx.parent; a chord callback gets the array in order', async () => {
    const double = defineTask('double', { schema: z.object({ by: z.number() }) });
    startWorker((w) => {
      w.handle('fetch', async () => 3);
      w.handle(double, async (p, ctx) => (ctx.parent as number) * p.by);
      w.handle('sum', async (_p, ctx: TaskContext) => ({ total: (ctx.parent as number[]).reduce((a, b) => a + b, 0), parents: ctx.parents }));
    });
    const { id, state } = await client.enqueueWorkflow(
      chain(task('fetch', null, { node: 'fetch' }), chord(group(task(double, { by: 2 }, { node: 'x2' }), task(double, { by: 10 }, { node: 'x10' })), task('sum', null, { node: 'sum' }))),
      { id: 'import-42', name: 'image import' },
    );
    expect({ id, state }).toEqual({ id: 'import-42', state: 'running' });
    const results = await client.waitForWorkflow(id, { timeout: 10_000 });
    expect(results).toEqual({ fetch: 3, x2: 6, x10: 30, sum: { total: 36, parents: { x2: 6, x10: 30 } } });
    const wf = (await client.getWorkflow(id))!;
    expect(wf).toMatchObject({ id, name: 'image import', state: 'completed', counts: { completed: 4 } });
    expect(wf.nodes.map((n) => [n.id, n.dependsOn])).toEqual([['fetch', []], ['x2', ['fetch']], ['x10', ['fetch']], ['sum', ['x2', 'x10']]]);
    const sumTask = (await client.getTask(wf.nodes[3].taskId!))!;
    expect(sumTask.links).toEqual({ workflowId: id, workflowNode: 'sum' });
  });

  it('a pending node says which parents it waits on: not completed, or for runOnFailure not ended', async () => {
    const { id } = await client.enqueueWorkflow(
      workflow({ nodes: { a: task('ok'), b: task('boom'), c: task('cleanup', null, { dependsOn: ['a', 'b'], runOnFailure: true }), d: task('next', null, { dependsOn: ['a'] }) } }),
      { failFast: false },
    );
    const waiting = async () => Object.fromEntries((await client.getWorkflow(id))!.nodes.map((n) => [n.id, n.waitingOn]));
    expect(await waiting()).toEqual({ a: [], b: [], c: ['a', 'b'], d: ['a'] });
    startWorker((w) => {
      w.handle('ok', async () => 'fine');
      w.handle('boom', async () => {
        throw new PermanentError('exploded');
      });
    });
    // b ended dead: c (runOnFailure) waits on nothing and starts; d started once a completed.
    await expect.poll(async () => (await client.getWorkflow(id))!.nodes.filter((n) => n.state === 'pending').length, { timeout: 10_000 }).toBe(0);
    expect(await waiting()).toEqual({ a: [], b: [], c: [], d: [] });
  });

  it('a failed node rejects waitForWorkflow with the node named; runOnFailure and onFinish still run', async () => {
    const seen: unknown[] = [];
    startWorker((w) => {
      w.handle('ok', async () => 'fine');
      w.handle('boom', async () => {
        throw new PermanentError('exploded');
      });
      w.handle('cleanup', async (_p, ctx) => void seen.push(ctx.parents));
      w.handle('report', async (p) => void seen.push(p));
    });
    const { id } = await client.enqueueWorkflow(
      workflow({ nodes: { a: task('ok'), b: task('boom'), c: task('cleanup', null, { dependsOn: ['a', 'b'], runOnFailure: true }) } }),
      { onFinish: task('report') },
    );
    const error = await rejection(client.waitForWorkflow(id, { timeout: 10_000 }));
    expect(error).toBeInstanceOf(WorkflowFailedError);
    expect((error as WorkflowFailedError).code).toBe('TL_WORKFLOW_FAILED');
    expect((error as Error).message).toContain('node "b" ended dead: exploded');
    await expect.poll(() => seen.length, { timeout: 10_000 }).toBe(2);
    const parents = seen[0] as Record<string, unknown>;
    expect(parents.a === 'fine' || parents.a instanceof ParentFailure).toBe(true);
    expect(parents.b).toEqual(new ParentFailure('b', 'dead', 'exploded'));
    expect(seen[1]).toMatchObject({ workflowId: id, state: 'failed', failed: ['b'] });
  });

  it('cancelWorkflow aborts a running node’s signal and ends cancelled; retryWorkflow runs it again', async () => {
    let started = 0;
    let aborted = 0;
    let hold = true;
    startWorker((w) => {
      w.handle('slow', async (_p, ctx) => {
        started += 1;
        if (!hold) return 'done';
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
        aborted += 1;
        throw ctx.signal.reason;
      });
      w.handle('after', async (_p, ctx) => `after ${String(ctx.parent)}`);
    });
    const { id } = await client.enqueueWorkflow(chain(task('slow', null, { node: 's' }), task('after', null, { node: 'a' })));
    await expect.poll(() => started, { timeout: 10_000 }).toBe(1);
    expect((await client.cancelWorkflow(id)).nodes.map((n) => n.state)).toEqual(['running', 'cancelled']);
    const error = await rejection(client.waitForWorkflow(id, { timeout: 10_000 }));
    expect((error as WorkflowFailedError).workflow.state).toBe('cancelled');
    expect(aborted).toBe(1);
    hold = false;
    await client.retryWorkflow(id);
    expect(await client.waitForWorkflow(id, { timeout: 10_000 })).toEqual({ s: 'done', a: 'after done' });
    expect(isTasklineError(await rejection(client.cancelWorkflow(id)), 'TL_INVALID_STATE')).toBe(true);
    expect(isTasklineError(await rejection(client.cancelWorkflow('nope')), 'TL_WORKFLOW_NOT_FOUND')).toBe(true);
    expect(await client.getWorkflow('nope')).toBeNull();
  });

  it('a node whose result is over 1 MiB dies saying so, and fails the workflow', async () => {
    startWorker((w) => w.handle('big', async () => 'x'.repeat(1024 * 1024 + 1)));
    const { id } = await client.enqueueWorkflow(task('big', null, { node: 'big' }));
    const error = await rejection(client.waitForWorkflow(id, { timeout: 10_000 }));
    expect((error as Error).message).toMatch(/node "big" ended dead: the handler's result is 1048579 bytes of JSON; a workflow node's result may be at most 1048576 bytes/);
  });

  it('refuses bad workflows naming the node, and stores nothing', async () => {
    const typed = defineTask('typed', { schema: z.object({ n: z.number() }) });
    const cases: Array<[() => Promise<unknown>, string]> = [
      [() => client.enqueueWorkflow(workflow({ nodes: { a: task('x', {}, { dependsOn: ['ghost'] }) } })), 'node "a" depends on "ghost"'],
      [() => client.enqueueWorkflow(workflow({ nodes: { a: task('x', {}, { dependsOn: ['b'] }), b: task('x', {}, { dependsOn: ['a'] }) } })), 'cycle'],
      [() => client.enqueueWorkflow(chain(task('x'), task(typed, { n: 'one' } as unknown as { n: number }, { node: 'bad' }))), 'node "bad"'],
      [() => client.enqueueWorkflow(chain(task('x', { f: () => 1 }, { node: 'fn' }))), 'node "fn": payload is not JSON-serialisable'],
      [() => client.enqueueWorkflow(chain(task('x', {}, { node: 'q', queue: 'bad queue!' }))), 'node "q": invalid queue'],
      [() => client.enqueueWorkflow(chain(task('x', {}, { node: 'u', uniqueFor: 1000 }))), 'node "u": option uniqueFor is refused: a workflow node cannot be unique (uniqueness is for single tasks)'],
      [() => client.enqueueWorkflow(chain(task('x', {}, { node: 'k', uniqueKey: 'k' }))), 'node "k": option uniqueKey is refused: a workflow node cannot be unique (uniqueness is for single tasks)'],
      [() => client.enqueueWorkflow(chain(task('x', {}, { node: 'i', id: 'mine' } as never))), 'node "i": option id is refused: the workflow gives each node its task id'],
      [() => client.enqueueWorkflow(chain(task('x', {}, { node: 'l', links: { workflowId: 'w' } } as never))), 'node "l": option links is refused: the workflow sets the links of each node'],
      [() => client.enqueueWorkflow(task('x'), { onFinish: task('y', null, { uniqueFor: 1000 }) }), "onFinish: option uniqueFor is refused: a workflow's onFinish task cannot be unique"],
      [() => client.enqueueWorkflow(group(...Array.from({ length: 10_001 }, () => task('x')))), 'at most 10,000 nodes'],
      [() => client.enqueueWorkflow(task('x'), { id: 'bad id!' }), 'workflow id'],
      [() => client.enqueueWorkflow(task('x'), { failFast: 'yes' as unknown as boolean }), 'failFast'],
      [() => client.enqueueWorkflow(task('x'), { color: 'red' } as never), 'unknown workflow option "color"'],
      [() => client.enqueueWorkflow(task('x'), { onFinish: task('y', { a: 1 }) }), 'onFinish takes no payload'],
      [() => client.enqueueWorkflow(group(...Array.from({ length: 20 }, (_, i) => task('x', 'é'.repeat(450_000), { node: `big${i}` })))), 'bytes together; the most is 16777216'],
    ];
    for (const [attempt, message] of cases) {
      const error = await rejection(attempt());
      expect(isTasklineError(error, 'TL_INVALID_WORKFLOW'), String(error)).toBe(true);
      expect((error as Error).message).toContain(message);
    }
    expect((await client.listWorkflows()).workflows).toEqual([]);
    expect(await store.backend.listQueues()).toEqual([]);
    await client.enqueueWorkflow(task('x'), { id: 'taken' });
    expect(isTasklineError(await rejection(client.enqueueWorkflow(task('x'), { id: 'taken' })), 'TL_WORKFLOW_CONFLICT')).toBe(true);
  });
});
