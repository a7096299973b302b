/**
 * `GET /api/v1/tasks/{id}?wait=N`: holds the request until the task finishes or N s pass, driven
 * by the store's finished notifications (like Client.waitFor). The waiter is registered before
 * the first read, so a task finishing in between is not missed; the task is read again every
 * RECHECK_MS in case a notification was lost (a reconnect); the wait ends when the client goes.
 * A task its queue keeps none of is gone once it finished: the notification says how it ended.
 */
import type { Backend } from '../backend/contract.js';
import { isFinished, type TaskRecord } from '../core/task.js';
import { GONE_GRACE_MS } from '../client/client.js';
import type { EventHub } from './events.js';

const RECHECK_MS = 5_000;

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
  // Until a notification, the client going away or `ms` pass.
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        abort.removeEventListener('abort', done);
        wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      abort.addEventListener('abort', done, { once: true });
      wake = done;
    });
  try {
    let task = await backend.getTask(id);
    if (task === null && finishedAs === null && !abort.aborted) {
      // A task its queue keeps none of is deleted as it finishes, and its notification may come
      // just after the read that missed it: wait a moment for it before saying there is none.
      await pause(Math.min(GONE_GRACE_MS, waitMs));
      if (notified) task = await backend.getTask(id);
    }
    while (task !== null && !isFinished(task.state) && !abort.aborted) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      if (!notified) await pause(Math.min(left, RECHECK_MS));
      notified = false;
      task = await backend.getTask(id);
    }
    return { task, finishedAs };
  } finally {
    forget();
  }
}
