/**
 * `GET /api/v1/tasks/{id}?wait=N`: holds the request until the task finishes or N s pass, driven
 * by the store's finished notifications (like Client.waitFor). The waiter is registered before
 * the first read, so a task finishing in between is not missed; the task is read again every
 * RECHECK_MS in case a notification was lost (a reconnect); the wait ends when the client goes.
 * A task its queue keeps none of is gone once it finished: the notification says how it ended.
 */
import type { Backend } from '../backend/contract.js';
import { isFinished, type TaskRecord } from '../core/task.js';
import type { EventHub } from './events.js';

const RECHECK_MS = 5_000;
/** How long a first read that found no task waits for a finished notification (as Client.waitFor). */
const GONE_GRACE_MS = 250;

/** The task when the wait ended; null, with the final state a notification announced if one did, when it is gone. */
export interface WaitResult {
  task: TaskRecord | null;
  finishedAs: 'completed' | 'dead' | 'cancelled' | null;
}

export async function waitForTask(backend: Backend, hub: EventHub, id: string, waitMs: number, abort: AbortSignal): Promise<WaitResult> {
  const deadline = Date.now() + waitMs;
  let notified = false;
  let finishedAs: WaitResult['finishedAs'] = null;
  let wake: (() => void) | null = null;
  const forget = hub.onFinished(id, (state) => {
    notified = true;
    if (state) finishedAs = state;
    wake?.();
  });
  try {
    let task = await backend.getTask(id);
    if (task === null && finishedAs === null && !abort.aborted) {
      // A task its queue keeps none of is deleted as it finishes, and its notification may come
      // just after the read that missed it: wait a moment for it before saying there is none.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.min(GONE_GRACE_MS, waitMs));
        function done() {
          clearTimeout(timer);
          abort.removeEventListener('abort', done);
          wake = null;
          resolve();
        }
        abort.addEventListener('abort', done, { once: true });
        wake = done;
      });
      if (notified) task = await backend.getTask(id);
    }
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
    return { task, finishedAs };
  } finally {
    forget();
  }
}
