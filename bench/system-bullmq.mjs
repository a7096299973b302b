// BullMQ adapter for the benchmark, set up the way BullMQ's docs recommend for production speed:
// auto-removal of finished jobs on the worker, a local concurrency factor, no QueueEvents
// listener, maxRetriesPerRequest: null on the worker connection (described in settings.mjs).
import { Queue, Worker } from 'bullmq';

export const name = 'bullmq';
export const TASK_TYPE = 'noop';
export const PREFIX = 'bull';

function connection(url, extra = {}) {
  const { hostname, port } = new URL(url);
  return { host: hostname, port: Number(port), ...extra };
}

export async function createProducer({ url, queue: queueName }) {
  const queue = new Queue(queueName, { connection: connection(url), prefix: PREFIX });
  await queue.waitUntilReady();
  return {
    one: (payload) => queue.add(TASK_TYPE, payload),
    many: (payloads) => queue.addBulk(payloads.map((data) => ({ name: TASK_TYPE, data }))),
    close: () => queue.close(),
  };
}

export async function createConsumer({ url, queue, concurrency, onStart, onCompleted, onError }) {
  const worker = new Worker(
    queue,
    async (job) => {
      if (onStart) onStart(job.data);
    },
    {
      connection: connection(url, { maxRetriesPerRequest: null }),
      prefix: PREFIX,
      concurrency,
      autorun: false,
      removeOnComplete: { count: 0 },
      removeOnFail: { count: 1000 },
    },
  );
  worker.on('completed', onCompleted);
  worker.on('failed', (_job, error) => onError(error));
  worker.on('error', (error) => onError(error));
  await worker.waitUntilReady();
  return {
    start() {
      worker.run().catch(onError);
    },
    stop: () => worker.close(),
  };
}
