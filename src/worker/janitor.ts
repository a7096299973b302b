/** The janitor: deletes finished tasks past their retention, and past their queue's keep bounds. */
import type { Backend } from '../backend/contract.js';
import { PeriodicComponent } from './component.js';
import { BATCH, drainQueues } from './drain-queues.js';

export function createJanitor(backend: Backend, queues: string[], intervalMs: number, onError: (error: unknown, where: string) => void): PeriodicComponent {
  return new PeriodicComponent('janitor', intervalMs, async () => void (await drainQueues(queues, (q) => backend.cleanup(q, BATCH))), onError);
}
