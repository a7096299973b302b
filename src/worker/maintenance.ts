/**
 * The worker's store housekeeping, each a small periodic component over the queues it serves:
 * - forwarder: moves due scheduled and retrying tasks to queued (claims do it too, for the queue
 *   they claim from; this covers paused and quiet queues);
 * - recoverer: fails the attempts of tasks whose lease expired (their worker is gone);
 * - janitor: deletes finished tasks past their retention.
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

export function createForwarder(backend: Backend, queues: string[], intervalMs: number, onError: OnError, onForwarded: (n: number) => void): PeriodicComponent {
  return new PeriodicComponent('forwarder', intervalMs, async () => {
    const n = await drainEach(queues, (q) => backend.forwardDue(q, BATCH));
    if (n > 0) onForwarded(n);
  }, onError);
}

export function createRecoverer(backend: Backend, queues: string[], intervalMs: number, onError: OnError, onRecovered: (n: number) => void): PeriodicComponent {
  return new PeriodicComponent('recoverer', intervalMs, async () => {
    const n = await drainEach(queues, (q) => backend.recoverExpired(q, BATCH));
    if (n > 0) onRecovered(n);
  }, onError);
}

export function createJanitor(backend: Backend, queues: string[], intervalMs: number, onError: OnError): PeriodicComponent {
  return new PeriodicComponent('janitor', intervalMs, async () => void (await drainEach(queues, (q) => backend.cleanup(q, BATCH))), onError);
}
