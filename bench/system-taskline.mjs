// Taskline adapter for the benchmark: one producer and one consumer shape shared with bullmq.mjs.
// Everything is Taskline's defaults except the queue name, the worker's concurrency and the
// queue's keep bounds, set to what BullMQ's worker is given (settings.mjs describes both).
import { connect, Client, Worker } from '../dist/index.js';

export const name = 'taskline';
export const TASK_TYPE = 'noop';
export const PREFIX = 'tl';

export async function createProducer({ url, queue }) {
  const backend = await connect(url, { prefix: PREFIX });
  const client = new Client(backend);
  return {
    one: (payload) => client.enqueue(TASK_TYPE, payload, { queue }),
    many: (payloads) => client.enqueueMany(payloads.map((payload) => ({ type: TASK_TYPE, payload, options: { queue } }))),
    async close() {
      await client.close();
      await backend.close();
    },
  };
}

/**
 * A worker whose handler only calls `onStart(payload)`; `onCompleted` fires once the completion
 * is stored (Taskline emits 'completed' after the ack is written).
 */
export async function createConsumer({ url, queue, concurrency, onStart, onCompleted, onError }) {
  const backend = await connect(url, { prefix: PREFIX });
  // BullMQ's worker has removeOnComplete { count: 0 } and removeOnFail { count: 1000 }.
  await backend.setQueueKeep(queue, { completed: 0, dead: 1000 });
  const worker = new Worker(backend, { concurrency, queues: [queue] });
  // An async handler, as BullMQ's processor is (and as most handlers are): a sync one is ~5 %
  // cheaper per task here, but the comparison is of the same handler.
  worker.handle(TASK_TYPE, async (payload) => {
    if (onStart) onStart(payload);
  });
  worker.on('completed', onCompleted);
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
