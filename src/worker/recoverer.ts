/**
 * The recoverer: fails the attempts of a queue's tasks whose lease expired (their worker is
 * gone), which then retry or die as any failed attempt. It runs in the worker's maintenance
 * tick (maintenance.ts), beside the forwarder.
 */
import type { Backend } from '../backend/contract.js';
import { BATCH, drainQueues } from './drain-queues.js';

/** Recovers every expired lease of `queue`; returns how many tasks it recovered. */
export function recoverExpiredLeases(backend: Backend, queue: string): Promise<number> {
  return drainQueues([queue], (q) => backend.recoverExpired(q, BATCH));
}
