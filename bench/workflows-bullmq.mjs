// BullMQ adapter for the workflow benchmark (bench/workflows.mjs), set up as in
// system-bullmq.mjs (the way BullMQ's docs recommend for production speed): removeOnComplete
// { count: 0 } and removeOnFail { count: 1000 } on the worker, a local concurrency factor,
// maxRetriesPerRequest: null on the worker connection, no QueueEvents. Flows are FlowProducer
// trees: a parent runs once all its children completed and reads job.getChildrenValues().
import { FlowProducer, Worker } from 'bullmq';

export const name = 'bullmq';
export const PREFIX = 'bull';

function connection(url, extra = {}) {
  const { hostname, port } = new URL(url);
  return { host: hostname, port: Number(port), ...extra };
}

/** A chain of `length` steps: a flow nested `length` deep, the deepest child (level 1) first. */
function chainFlow(queueName, length) {
  let node = null;
  for (let level = 1; level <= length; level++) {
    node = { name: 'step', queueName, data: { level }, ...(node ? { children: [node] } : {}) };
  }
  return node;
}

export async function createProducer({ url, queue: queueName }) {
  const flows = new FlowProducer({ connection: connection(url), prefix: PREFIX });
  await flows.waitUntilReady();
  return {
    chord: (size) =>
      flows.add({ name: 'parent', queueName, data: { size }, children: Array.from({ length: size }, (_, i) => ({ name: 'child', queueName, data: { i } })) }),
    chain: (length) => flows.add(chainFlow(queueName, length)),
    close: () => flows.close(),
  };
}

/**
 * A worker for the three job names. `onFinal(value)` is called on the worker's 'completed'
 * event (emitted after the completion is stored) of a flow's top job: the chord's parent, a
 * chain's level-`length` step.
 */
export async function createConsumer({ url, queue, concurrency, chainLength, onFinal, onError }) {
  const worker = new Worker(
    queue,
    async (job) => {
      switch (job.name) {
        case 'child':
          return job.data.i;
        case 'parent': {
          // { '<prefix>:<queue>:<child id>': value }: the children's ids, in no useful order.
          const values = Object.values(await job.getChildrenValues());
          let sum = 0;
          for (const v of values) sum += v;
          const n = values.length;
          if (sum !== (n * (n - 1)) / 2) throw new Error(`children values sum to ${sum} for ${n} children`);
          return n;
        }
        case 'step': {
          // The deepest step has no child: it does not ask (the most favourable reading for BullMQ).
          if (job.data.level === 1) return 1;
          const [value] = Object.values(await job.getChildrenValues());
          return (value ?? 0) + 1;
        }
        default:
          throw new Error(`unknown job name ${job.name}`);
      }
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
  worker.on('completed', (job, result) => {
    if (job.name === 'parent' || (job.name === 'step' && job.data.level === chainLength)) onFinal(result);
  });
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
