/** Housekeeping transitions: recovering expired leases, deleting finished tasks past retention. */
import { backoffDelay, DEFAULT_BACKOFF } from '../../core/backoff.js';
import type { BackoffSpec } from '../../core/task.js';
import { finishTask } from './lifecycle.js';
import { unparkGroupOf } from './groups.js';
import { deleteTaskRows, pruneEvents, trimKept, type Transition } from './transition.js';

export const LEASE_EXPIRED = 'lease expired (worker lost)';

interface ExpiredRow {
  id: string;
  attempt: number;
  max_retries: number;
  deadline: number | null;
  started_at: number | null;
  worker_id: string | null;
  cancel_requested: number;
  backoff: string | null;
}

/**
 * Fails the attempts of running tasks whose lease expired: the attempt is recorded as failed
 * with LEASE_EXPIRED, then the task is cancelled (if an operator asked), dead (no retry left or
 * past its deadline) or retrying after its backoff. Returns how many were recovered.
 */
export function recoverExpiredLeases(t: Transition, queue: string, limit: number): number {
  const expired = t.all<ExpiredRow>(
    `SELECT id, attempt, max_retries, deadline, started_at, worker_id, cancel_requested, backoff
     FROM tasks WHERE queue = ? AND state = 'running' AND sort_key <= ? ORDER BY sort_key LIMIT ?`,
    queue, t.now, limit,
  );
  for (const row of expired) {
    unparkGroupOf(t, queue, row.id);
    const record = { attempt: row.attempt, startedAt: row.started_at, finishedAt: t.now, outcome: 'failed', error: LEASE_EXPIRED, workerId: row.worker_id };
    t.run(
      "UPDATE tasks SET lease_token = NULL, last_error = ?, attempts = json_insert(attempts, '$[#]', json(?)) WHERE id = ?",
      LEASE_EXPIRED, JSON.stringify(record), row.id,
    );
    if (row.cancel_requested === 1) finishTask(t, row.id, queue, 'running', 'cancelled');
    else if (row.attempt > row.max_retries || (row.deadline !== null && row.deadline <= t.now)) finishTask(t, row.id, queue, 'running', 'dead');
    else {
      const spec = row.backoff === null ? DEFAULT_BACKOFF : (JSON.parse(row.backoff) as BackoffSpec);
      const due = t.now + backoffDelay(spec, Math.max(1, row.attempt));
      t.run("UPDATE tasks SET state = 'retrying', next_run_at = ?, sort_key = ? WHERE id = ?", due, due, row.id);
      t.moved(queue, 'running', 'retrying');
      t.emitLifecycle('retrying', queue, row.id, `${row.attempt},${due}`);
      t.wake(queue);
    }
  }
  t.count(queue, expired.length, expired.length);
  return expired.length;
}

const MINUTES_KEPT = 120;
const DAYS_KEPT = 90;

/**
 * Deletes finished tasks whose retention ran out, then those past the queue's keep bounds (at
 * most `limit` per final state each), and trims old counters, expired unique keys and old
 * events. Returns how many tasks were deleted.
 */
export function deleteExpiredTasks(t: Transition, queue: string, limit: number, recount: boolean): number {
  let deleted = 0;
  // Keep bounds: a queue never used has none (and is not registered by looking).
  const known = t.get('SELECT 1 FROM queues WHERE name = ?', queue) !== undefined;
  // Counted afresh now and then (the caller says when): a count kept by the transitions cannot
  // drift for long, and a count is as many index steps as the state has tasks.
  if (known && recount) {
    t.recountKept(queue);
    t.recountStates(queue);
  }
  for (const state of ['completed', 'dead', 'cancelled'] as const) {
    const ids = t.all<{ id: string }>('SELECT id FROM tasks WHERE queue = ? AND state = ? AND sort_key <= ? ORDER BY sort_key LIMIT ?', queue, state, t.now, limit);
    for (const { id } of ids) deleteTaskRows(t, id, queue, state);
    deleted += ids.length + (known ? trimKept(t, queue, state, limit) : 0);
  }
  t.run("DELETE FROM stats WHERE queue = ? AND period = 'minute' AND number < ?", queue, Math.floor(t.now / 60_000) - MINUTES_KEPT);
  t.run("DELETE FROM stats WHERE queue = ? AND period = 'day' AND number < ?", queue, Math.floor(t.now / 86_400_000) - DAYS_KEPT);
  t.run('DELETE FROM unique_keys WHERE queue = ? AND expires_at <= ?', queue, t.now);
  pruneEvents(t);
  return deleted;
}
