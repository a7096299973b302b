/**
 * The forwarder: moves due scheduled and retrying tasks of a queue to queued. Claims do it too,
 * for the queue they claim from; this covers paused and quiet queues. It runs in the worker's
 * maintenance tick (maintenance.ts), beside the recoverer.
 */
import type { Backend } from '../backend/contract.js';
import { BATCH, drainQueues } from './drain-queues.js';

/** Forwards every due task of `queue`; returns how many moved. */
export function forwardDueTasks(backend: Backend, queue: string): Promise<number> {
  return drainQueues([queue], (q) => backend.forwardDue(q, BATCH));
}
