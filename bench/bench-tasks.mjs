// The hot-path profilers' shared pieces (drain.mjs, redis-instructions.mjs, redis-functions.mjs, limits.mjs):
// filling the `bench` queue with no-op tasks, and the completion acks a worker would send.

/**
 * Enqueues `count` no-op tasks (~100-byte payloads) on `queue` (default `bench`), 1,000 per call;
 * with `groups`, task i is of group `g<i mod groups>`.
 */
export async function fillBenchQueue(client, count, queue = 'bench', groups = 0) {
  const pad = 'x'.repeat(60);
  for (let i = 0; i < count; i += 1000) {
    const size = Math.min(1000, count - i);
    await client.enqueueMany(
      Array.from({ length: size }, (_, j) => ({ type: 'noop', payload: { t: Date.now(), i: i + j, pad }, options: groups > 0 ? { queue, group: `g${(i + j) % groups}` } : { queue } })),
    );
  }
}

/** The acks completing claimed tasks now, as `workerId`, without a result. */
export function completeAcks(tasks, workerId) {
  const now = Date.now();
  return tasks.map((t) => ({
    kind: 'complete', id: t.id, queue: t.queue, token: t.token, result: '',
    attempt: { attempt: t.attempt, startedAt: t.startedAt, finishedAt: now, outcome: 'completed', error: null, stack: null, workerId },
  }));
}
