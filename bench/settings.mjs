// How each system is set up in the benchmark, printed with the results. Kept apart from the
// adapters so that the parent process does not load either library.
export const SETTINGS = {
  taskline: {
    prefix: 'tl',
    enqueue: 'client.enqueue(type, payload, { queue }) / client.enqueueMany([{ type, payload, options: { queue } }]), default options',
    worker: 'new Worker(backend, { concurrency, queues: [queue] }); other options default (lease 30 s, idleWait 30 s, forward + recover every 15 s in one round trip, heartbeat every 15 s)',
    retention: "the queue keeps 0 completed and 1,000 dead tasks (backend.setQueueKeep(queue, { completed: 0, dead: 1000 }), as BullMQ's removeOnComplete/removeOnFail counts): a completed task is deleted at once",
  },
  bullmq: {
    prefix: 'bull',
    enqueue: 'queue.add(name, data) / queue.addBulk([{ name, data }]), default job options',
    worker:
      'new Worker(queue, processor, { concurrency, removeOnComplete: { count: 0 }, removeOnFail: { count: 1000 }, autorun: false }) then run(); ' +
      'connection maxRetriesPerRequest: null; other options default (lockDuration 30 s, stalledInterval 30 s, drainDelay 5 s); no QueueEvents',
    retention: 'removeOnComplete { count: 0 } on the worker: a completed job is deleted at once',
  },
};
