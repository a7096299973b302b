/** Store housekeeping in batches: each call handles at most BATCH tasks of one queue. */
export const BATCH = 1000;

/** Runs `step` per queue until it handles less than a full batch; returns how many it handled. */
export async function drainQueues(queues: string[], step: (queue: string) => Promise<number>): Promise<number> {
  let total = 0;
  for (const queue of queues) {
    for (;;) {
      const n = await step(queue);
      total += n;
      if (n < BATCH) break;
    }
  }
  return total;
}
