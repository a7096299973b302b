/** Leases: a worker's renewal of the leases of its running tasks, and the condition every write of a lease holder carries. */
import type { LeaseRef, RenewResult } from '../contract.js';
import type { Transition } from './transition.js';

/** The row of a task still held with this lease: `id, queue, lease_token` as parameters. */
export const HELD = 'id = ? AND queue = ? AND lease_token = ?';

/** Extends the leases still held; reports the lost ones and those an operator asked to cancel. */
export function renewLeases(t: Transition, leases: LeaseRef[], leaseMs: number): RenewResult {
  const lost: string[] = [];
  const cancelRequested: string[] = [];
  const expires = t.now + leaseMs;
  for (const lease of leases) {
    const row = t.get<{ cancel_requested: number }>(
      `UPDATE tasks SET sort_key = ? WHERE ${HELD} RETURNING cancel_requested`,
      expires, lease.id, lease.queue, lease.token,
    );
    if (!row) lost.push(lease.id);
    else if (row.cancel_requested === 1) cancelRequested.push(lease.id);
  }
  return { lost, cancelRequested };
}
