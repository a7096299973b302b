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
      for (const id of lost) processor.active.get(id)?.abort('lease-lost', 'lease lost: the task was recovered by another worker');
      for (const id of cancelRequested) processor.active.get(id)?.abort('cancelled', 'cancelled by operator');
    },
    onError,
    false,
  );
}
