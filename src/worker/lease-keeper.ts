import type { Backend } from '../backend/contract.js';
import { PeriodicComponent } from './component.js';
import type { Processor } from './processor.js';

/**
 * Renews the leases of all running tasks in one call every lease/3. A lease found lost (the task
 * was recovered by another worker) aborts the handler's signal; a cancel request found here
 * (missed by the cancel listener) aborts it too.
 */
export function createLeaseKeeper(backend: Backend, processor: Processor, leaseMs: number, onError: (e: unknown, where: string) => void): PeriodicComponent {
  return new PeriodicComponent(
    'lease-keeper',
    Math.max(100, Math.floor(leaseMs / 3)),
    async () => {
      const leases = processor.leases();
      if (leases.length === 0) return;
      const { lost, cancelRequested } = await backend.renewLeases(leases, leaseMs);
      for (const [id, times] of countIds(lost)) {
        // A task this worker runs twice (its first lease was lost, and it came back here) has one
        // live token at most, the newest claim's: the oldest executions are the lost ones.
        // Only those whose lease was sent: one already known lost is no longer renewed.
        const executions = processor.active.withId(id).filter((e) => e.abortReason !== 'lease-lost').sort((a, b) => a.localStart - b.localStart);
        for (const execution of executions.slice(0, times)) execution.abort('lease-lost', 'lease lost: the task was recovered by another worker');
      }
      for (const id of new Set(cancelRequested)) for (const execution of processor.active.withId(id)) execution.abort('cancelled', 'cancelled by operator');
    },
    onError,
    false,
  );
}

function countIds(ids: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}
