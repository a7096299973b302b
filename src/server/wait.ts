/**
 * `GET /api/v1/tasks/{id}?wait=N`: holds the request until the task finishes or N s pass, driven
 * by the store's finished notifications (like Client.waitFor). The waiter is registered before
 * the first read, so a task finishing in between is not missed; the task is read again every
 * RECHECK_MS in case a notification was lost (a reconnect); the wait ends when the client goes.
 */
import type { Backend } from '../backend/contract.js';
import { isFinished, type TaskRecord } from '../core/task.js';
import type { EventHub } from './events.js';

const RECHECK_MS = 5_000;

export async function waitForTask(backend: Backend, hub: EventHub, id: string, waitMs: number, abort: AbortSignal): Promise<TaskRecord | null> {
  const deadline = Date.now() + waitMs;
  let notified = false;
  let wake: (() => void) | null = null;
  const forget = hub.onFinished(id, () => {
    notified = true;
    wake?.();
  });
  try {
    let task = await backend.getTask(id);
    while (task !== null && !isFinished(task.state) && !abort.aborted) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      if (!notified) {
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            abort.removeEventListener('abort', done);
            wake = null;
            resolve();
          };
          const timer = setTimeout(done, Math.min(left, RECHECK_MS));
          abort.addEventListener('abort', done, { once: true });
          wake = done;
        });
      }
      notified = false;
      task = await backend.getTask(id);
    }
    return task;
  } finally {
    forget();
  }
}
