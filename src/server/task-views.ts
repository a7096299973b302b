/** Tasks as the API shows them, each waiting one with why it has not started (one read of its queues and the workers). */
import type { Backend } from '../backend/contract.js';
import { whyTasksWait } from '../client/why-waiting.js';
import type { TaskRecord } from '../core/task.js';
import { taskStatus, waitingView } from './present.js';

export async function taskViews(backend: Backend, tasks: TaskRecord[]) {
  const waiting = await whyTasksWait(backend, tasks);
  return tasks.map((task, i) => ({ ...taskStatus(task), waiting: waitingView(waiting[i]) }));
}
