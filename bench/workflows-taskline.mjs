// Taskline adapter for the workflow benchmark (bench/workflows.mjs): the same shape as
// workflows-bullmq.mjs. Defaults everywhere except the queue name, the worker's concurrency and
// the queue's keep bounds (0 completed, 1,000 dead: what BullMQ's worker is given), as in
// system-taskline.mjs. Loaded only by the child process that measures Taskline.
import { chain, chord, Client, connect, group, task, Worker } from '../dist/index.js';

export const name = 'taskline';
export const PREFIX = 'tl';

/** Submits workflows: a chord of `size` children and one parent, or a chain of `length` steps. */
export async function createProducer({ url, queue }) {
  const backend = await connect(url, { prefix: PREFIX });
  const client = new Client(backend);
  return {
    chord: (size) =>
      client.enqueueWorkflow(chord(group(...Array.from({ length: size }, (_, i) => task('child', { i }, { queue }))), task('parent', null, { queue }))),
    chain: (length) => client.enqueueWorkflow(chain(...Array.from({ length }, () => task('step', null, { queue })))),
    async close() {
      await client.close();
      await backend.close();
    },
  };
}

/**
 * A worker with the three handlers. `onFinal(value)` is called when a workflow's last node is
 * stored as completed (Taskline emits 'completed' after the ack is written): a chord's parent, a
 * chain's last step (node id `length − 1`).
 */
export async function createConsumer({ url, queue, concurrency, chainLength, onFinal, onError }) {
  const backend = await connect(url, { prefix: PREFIX });
  await backend.setQueueKeep(queue, { completed: 0, dead: 1000 });
  const worker = new Worker(backend, { concurrency, queues: [queue] });
  const lastStep = String(chainLength - 1);
  worker.handle('child', async (payload) => payload.i);
  // ctx.parent: the array of the children's results, in the order they were written.
  worker.handle('parent', async (_payload, ctx) => {
    const values = ctx.parent;
    if (!Array.isArray(values)) throw new Error(`ctx.parent is not an array: ${typeof values}`);
    for (let i = 0; i < values.length; i++) if (values[i] !== i) throw new Error(`ctx.parent[${i}] is ${values[i]}`);
    return values.length;
  });
  worker.handle('step', async (_payload, ctx) => (ctx.parent ?? 0) + 1);
  worker.on('completed', (meta, result) => {
    if (meta.type === 'parent' || (meta.type === 'step' && meta.links.workflowNode === lastStep)) onFinal(result);
  });
  worker.on('failed', (_task, error) => onError(error));
  worker.on('error', (error) => onError(error));
  return {
    start: () => worker.start(),
    async stop() {
      await worker.stop({ timeout: 2_000 });
      await backend.close();
    },
  };
}
