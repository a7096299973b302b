/**
 * The forwarder (forwarder.ts) and the recoverer (recoverer.ts) as one periodic component: each
 * tick runs the steps that are due (with the default intervals, both) for all queues at once,
 * so their script calls go out in one pipelined write — one round trip per tick for an idle
 * worker instead of one per step and queue. The tick interval is the shorter of the two; each
 * step keeps its own interval.
 */
import type { Backend } from '../backend/contract.js';
import { PeriodicComponent } from './component.js';
import { forwardDueTasks } from './forwarder.js';
import { recoverExpiredLeases } from './recoverer.js';

export function createMaintenance(
  backend: Backend,
  queues: string[],
  intervals: { forwardMs: number; recoverMs: number },
  onError: (error: unknown, where: string) => void,
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
      steps.push(...queues.map((queue) => forwardDueTasks(backend, queue)));
    }
    if (now + 10 >= nextRecover) {
      nextRecover = now + intervals.recoverMs;
      steps.push(...queues.map((queue) => recoverExpiredLeases(backend, queue)));
    }
    const moved = (await Promise.all(steps)).reduce((sum, n) => sum + n, 0);
    if (moved > 0) onMoved(moved);
  }, onError);
}
