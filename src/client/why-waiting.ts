/** Why a stored task has not started yet (core/why-waiting.ts), reading its queue and the live workers. */
import type { Backend } from '../backend/contract.js';
import type { TaskRecord } from '../core/task.js';
import { whyWaiting, type Waiting } from '../core/why-waiting.js';

export async function whyTaskWaits(backend: Backend, task: TaskRecord): Promise<Waiting | null> {
  if (task.state !== 'queued' && task.state !== 'scheduled' && task.state !== 'retrying') return null;
  const [queue, workers] = await Promise.all([backend.getQueue(task.queue), backend.listWorkers()]);
  return whyWaiting(task, { queuePaused: queue?.paused === true, workers });
}
