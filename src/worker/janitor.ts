/** The janitor: deletes finished tasks past their retention, and past their queue's keep bounds; finished workflows past theirs. */
import type { Backend } from '../backend/contract.js';
import { PeriodicComponent } from './component.js';
import { BATCH, drainQueues } from './drain-queues.js';

export function createJanitor(backend: Backend, queues: string[], intervalMs: number, onError: (error: unknown, where: string) => void): PeriodicComponent {
  return new PeriodicComponent('janitor', intervalMs, async () => {
    await drainQueues(queues, (q) => backend.cleanup(q, BATCH));
    // Finished workflows past their retention (any worker's janitor may delete them: each is deleted once).
    await backend.cleanupWorkflows(BATCH);
  }, onError);
}
