/** Why a stored task has not started yet (core/why-waiting.ts), reading its queue and the live workers. */
import type { Backend } from '../backend/contract.js';
import type { TaskRecord } from '../core/task.js';
import { whyWaiting, type Waiting } from '../core/why-waiting.js';

export async function whyTaskWaits(backend: Backend, task: TaskRecord): Promise<Waiting | null> {
  return (await whyTasksWait(backend, [task]))[0];
}

/** whyTaskWaits for a page of tasks: the queues and the live workers are read once. */
export async function whyTasksWait(backend: Backend, tasks: TaskRecord[]): Promise<(Waiting | null)[]> {
  const waits = (t: TaskRecord) => t.state === 'queued' || t.state === 'scheduled' || t.state === 'retrying';
  if (!tasks.some(waits)) return tasks.map(() => null);
  const names = [...new Set(tasks.filter(waits).map((t) => t.queue))];
  const [queues, workers] = await Promise.all([Promise.all(names.map((name) => backend.getQueue(name))), backend.listWorkers()]);
  const paused = new Set(queues.filter((q) => q?.paused).map((q) => q!.name));
  const held = new Map(queues.filter((q) => q?.held).map((q) => [q!.name, { ...q!.held!, rate: q!.limits.rate, concurrency: q!.limits.concurrency }]));
  return tasks.map((t) => (waits(t) ? whyWaiting(t, { queuePaused: paused.has(t.queue), held: held.get(t.queue) ?? null, workers }) : null));
}
