/**
 * The worker's store housekeeping over the queues it serves:
 * - forwarder: moves due scheduled and retrying tasks to queued (claims do it too, for the queue
 *   they claim from; this covers paused and quiet queues);
 * - recoverer: fails the attempts of tasks whose lease expired (their worker is gone);
 * - janitor: deletes finished tasks past their retention.
 * The forwarder and the recoverer share one component (createMaintenance).
 */
import type { Backend } from '../backend/contract.js';
import { PeriodicComponent } from './component.js';

const BATCH = 1000;

type OnError = (error: unknown, where: string) => void;

/** Runs `step` per queue until it handles less than a full batch. */
async function drainEach(queues: string[], step: (queue: string) => Promise<number>): Promise<number> {
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

/**
 * The forwarder and the recoverer as one periodic component: each tick runs the steps that are
 * due (with the default intervals, both) for all queues at once, so their script calls go out
 * in one pipelined write — one round trip per tick for an idle worker instead of one per step
 * and queue. The tick interval is the shorter of the two; each step keeps its own interval.
 */
export function createMaintenance(
  backend: Backend,
  queues: string[],
  intervals: { forwardMs: number; recoverMs: number },
  onError: OnError,
  onMoved: (n: number) => void,
): PeriodicComponent {
  let nextForward = 0;
  let nextRecover = 0;
  return new PeriodicComponent('maintenance', Math.min(intervals.forwardMs, intervals.recoverMs), async () => {
    const now = Date.now();
    const steps: Promise<number>[] = [];
    // A tick may run a little early (timer granularity): count it as due within 10 ms.
    if (now + 10 >= nextForward) {
      nextForward = now + intervals.forwardMs;
      steps.push(...queues.map((q) => drainEach([q], (queue) => backend.forwardDue(queue, BATCH))));
    }
    if (now + 10 >= nextRecover) {
      nextRecover = now + intervals.recoverMs;
      steps.push(...queues.map((q) => drainEach([q], (queue) => backend.recoverExpired(queue, BATCH))));
    }
    const moved = (await Promise.all(steps)).reduce((sum, n) => sum + n, 0);
    if (moved > 0) onMoved(moved);
  }, onError);
}

export function createJanitor(backend: Backend, queues: string[], intervalMs: number, onError: OnError): PeriodicComponent {
  return new PeriodicComponent('janitor', intervalMs, async () => void (await drainEach(queues, (q) => backend.cleanup(q, BATCH))), onError);
}
