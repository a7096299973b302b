/**
 * Acks: what a worker writes back when an attempt ends. Every write is conditional on the lease
 * token (and queue): a stale token matches no row, so nothing is written and the caller hears
 * 'stale'. Lease renewals are in leases.ts, logs and progress in progress.ts.
 */
import { DEFAULT_RETENTION, type Ack, type AckResult } from '../contract.js';
import { joinTurns, QUEUED_SORT_KEY, unparkGroupOf } from './groups.js';
import { HELD } from './leases.js';
import type { Transition } from './transition.js';

const APPEND_ATTEMPT = "attempts = json_insert(attempts, '$[#]', json(?))";
const FINISH = `state = ?, finished_at = ?, next_run_at = NULL, cancel_requested = 0, lease_token = NULL, sort_key = ? + COALESCE(retention, ?)`;

const COMPLETE = `UPDATE tasks SET ${FINISH}, result = CASE WHEN ? = '' THEN result ELSE ? END, ${APPEND_ATTEMPT} WHERE ${HELD}`;
const FAIL_FINAL = `UPDATE tasks SET ${FINISH}, last_error = ?, ${APPEND_ATTEMPT} WHERE ${HELD}`;
const RETRY = `UPDATE tasks SET state = 'retrying', attempt = attempt - ?, last_error = ?, next_run_at = ?, sort_key = ?,
    cancel_requested = 0, lease_token = NULL, ${APPEND_ATTEMPT} WHERE ${HELD}`;
const HAND_BACK = `UPDATE tasks SET state = 'retrying', attempt = attempt - 1, next_run_at = ?, sort_key = ?,
    cancel_requested = 0, lease_token = NULL WHERE ${HELD}`;
const REQUEUE = `UPDATE tasks SET state = 'queued', attempt = attempt - 1, worker_id = NULL, enqueued_at = ?, sort_key = ${QUEUED_SORT_KEY},
    lease_token = NULL, ${APPEND_ATTEMPT} WHERE ${HELD} RETURNING grp`;

/** Ends attempts: complete, retry, dead, cancelled, requeue (graceful shutdown) or hand-back. */
export function ackAttempts(t: Transition, acks: Ack[]): AckResult[] {
  return acks.map((ack): AckResult => (applyAck(t, ack) ? 'ok' : 'stale'));
}

const CANCEL_WAS_REQUESTED = `SELECT cancel_requested FROM tasks WHERE ${HELD}`;
const CANCEL_WITHOUT_ATTEMPT = `UPDATE tasks SET ${FINISH}, last_error = COALESCE(last_error, ?) WHERE ${HELD}`;

/**
 * An attempt that would run again (retry, hand-back, requeue) of a task someone asked to cancel
 * (an operator, or its workflow failing): the task ends cancelled instead, so the request is not
 * lost to the next attempt.
 */
function cancelInstead(t: Transition, ack: Extract<Ack, { kind: 'retry' | 'hand-back' | 'requeue' }>, attempt: string, held: readonly [string, string, string]): boolean {
  const done =
    ack.kind === 'hand-back'
      ? t.run(CANCEL_WITHOUT_ATTEMPT, 'cancelled', t.now, t.now, DEFAULT_RETENTION.cancelled, 'cancelled by operator', ...held).changes > 0
      : t.run(FAIL_FINAL, 'cancelled', t.now, t.now, DEFAULT_RETENTION.cancelled, ack.kind === 'retry' ? ack.error : 'cancelled by operator', attempt, ...held).changes > 0;
  if (done) {
    t.moved(ack.queue, 'running', 'cancelled');
    if (ack.kind !== 'hand-back') t.count(ack.queue, 1, 0);
    t.emitFinished(ack.queue, ack.id, 'cancelled');
  }
  return done;
}

function applyAck(t: Transition, ack: Ack): boolean {
  // A slot of its group frees (a stale ack's too: the claim counts again before it parks).
  unparkGroupOf(t, ack.queue, ack.id);
  const attempt = JSON.stringify(ack.attempt);
  const held = [ack.id, ack.queue, ack.token] as const;
  if ((ack.kind === 'retry' || ack.kind === 'hand-back' || ack.kind === 'requeue') && t.get<{ cancel_requested: number }>(CANCEL_WAS_REQUESTED, ...held)?.cancel_requested === 1) {
    return cancelInstead(t, ack, attempt, held);
  }
  switch (ack.kind) {
    case 'complete': {
      if (t.keepBounds(ack.queue).completed === 0) {
        // The queue keeps no completed task: deleted at once (the lease checked by the same statement).
        const gone = t.get<{ type: string }>(`DELETE FROM tasks WHERE ${HELD} RETURNING type`, ...held);
        if (!gone) return false;
        t.run('DELETE FROM payloads WHERE id = ?', ack.id);
        t.moved(ack.queue, 'running', null);
        t.count(ack.queue, 1, 0);
        t.emitFinished(ack.queue, ack.id, 'completed', gone.type, ack.result);
        return true;
      }
      // A completed task finished when its completing attempt did (as on Redis, lua/ack.lua).
      const done = t.run(COMPLETE, 'completed', ack.attempt.finishedAt ?? t.now, t.now, DEFAULT_RETENTION.completed, ack.result, ack.result, attempt, ...held).changes > 0;
      if (done) {
        t.moved(ack.queue, 'running', 'completed');
        t.count(ack.queue, 1, 0);
        t.emitFinished(ack.queue, ack.id, 'completed');
      }
      return done;
    }
    case 'dead':
    case 'cancelled': {
      const done = t.run(FAIL_FINAL, ack.kind, t.now, t.now, DEFAULT_RETENTION[ack.kind], ack.error, attempt, ...held).changes > 0;
      if (done) {
        t.moved(ack.queue, 'running', ack.kind);
        t.count(ack.queue, 1, ack.kind === 'dead' ? 1 : 0);
        t.emitFinished(ack.queue, ack.id, ack.kind);
      }
      return done;
    }
    case 'retry': {
      const due = t.now + ack.delay;
      const done = t.run(RETRY, ack.consumed ? 0 : 1, ack.error, due, due, attempt, ...held).changes > 0;
      if (done) {
        t.moved(ack.queue, 'running', 'retrying');
        t.count(ack.queue, 1, ack.consumed ? 1 : 0);
        t.emitLifecycle('retrying', ack.queue, ack.id, `${ack.consumed ? ack.attempt.attempt : ack.attempt.attempt - 1},${due}`);
        // Waiting workers learn the new due time.
        t.wake(ack.queue);
      }
      return done;
    }
    case 'hand-back': {
      // No handler in that worker: as if never claimed — no attempt record, no count.
      const due = t.now + ack.delay;
      const done = t.run(HAND_BACK, due, due, ...held).changes > 0;
      if (done) {
        t.moved(ack.queue, 'running', 'retrying');
        t.emitLifecycle('retrying', ack.queue, ack.id, `${ack.attempt.attempt - 1},${due}`);
        t.wake(ack.queue);
      }
      return done;
    }
    case 'requeue': {
      // At the front of its line (its group's, which keeps its place in the turns or joins them).
      const requeued = t.get<{ grp: string | null }>(REQUEUE, t.now, t.frontOfLine(ack.queue), attempt, ...held);
      if (requeued) {
        joinTurns(t, ack.queue, requeued.grp);
        t.moved(ack.queue, 'running', 'queued');
        t.wake(ack.queue);
      }
      return requeued !== undefined;
    }
  }
}
