/** Why a stored task has not started yet (core/why-waiting.ts), reading its queue and the live workers. */
import type { Backend, QueueInfo } from '../backend/contract.js';
import type { TaskRecord } from '../core/task.js';
import { whyWaiting, type Waiting, type WaitingGroup } from '../core/why-waiting.js';

export async function whyTaskWaits(backend: Backend, task: TaskRecord): Promise<Waiting | null> {
  return (await whyTasksWait(backend, [task]))[0];
}

/** whyTaskWaits for a page of tasks: the queues and the live workers are read once. */
export async function whyTasksWait(backend: Backend, tasks: TaskRecord[]): Promise<(Waiting | null)[]> {
  const waits = (t: TaskRecord) => t.state === 'queued' || t.state === 'scheduled' || t.state === 'retrying';
  if (!tasks.some(waits)) return tasks.map(() => null);
  const names = [...new Set(tasks.filter(waits).map((t) => t.queue))];
  const [queues, workers] = await Promise.all([Promise.all(names.map((name) => backend.getQueue(name))), backend.listWorkers()]);
  const byName = new Map(queues.filter((q): q is QueueInfo => q !== null).map((q) => [q.name, q]));
  return tasks.map((t) => {
    if (!waits(t)) return null;
    const queue = byName.get(t.queue);
    const held = queue?.held ? { ...queue.held, rate: queue.limits.rate, concurrency: queue.limits.concurrency } : null;
    return whyWaiting(t, { queuePaused: queue?.paused === true, held, group: groupShare(queue, t.group), workers });
  });
}

/** The task's group's running count against its queue's groupConcurrency; null when either has none. */
function groupShare(queue: QueueInfo | undefined, group: string | null | undefined): WaitingGroup | null {
  const limit = queue?.limits.groupConcurrency ?? null;
  if (limit === null || typeof group !== 'string') return null;
  // A group named like an Object.prototype member ("constructor") must read as its own count.
  const running = queue?.groups?.running;
  const count = running !== undefined && Object.hasOwn(running, group) ? running[group] : 0;
  return { groupConcurrency: limit, running: typeof count === 'number' ? count : 0 };
}
