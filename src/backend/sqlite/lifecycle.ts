/** Moves of one task between states, shared by the transitions (see transition.ts). */
import { DEFAULT_RETENTION } from '../contract.js';
import { joinTurns, QUEUED_SORT_KEY } from './groups.js';
import type { Transition } from './transition.js';

export type FinalState = 'completed' | 'dead' | 'cancelled';

/**
 * Moves a task to a final state; its retention (its own, else the state's default) starts now.
 * `lastError` replaces the stored error when given.
 */
export function finishTask(t: Transition, id: string, queue: string, from: string, state: FinalState, lastError?: string): void {
  t.run(
    `UPDATE tasks SET state = ?, finished_at = ?, next_run_at = NULL, cancel_requested = 0, lease_token = NULL,
       sort_key = ? + COALESCE(retention, ?), last_error = COALESCE(?, last_error)
     WHERE id = ?`,
    state, t.now, t.now, DEFAULT_RETENTION[state], lastError ?? null, id,
  );
  t.moved(queue, from, state);
  t.emitFinished(queue, id, state);
}

/**
 * Puts a task (in state `from`) at the back of the queued line (its group's, joining the turns:
 * groups.ts) and wakes the queue's workers.
 */
export function queueTask(t: Transition, id: string, queue: string, from: string): void {
  const row = t.get<{ grp: string | null }>(
    `UPDATE tasks SET state = 'queued', enqueued_at = ?, next_run_at = NULL, sort_key = ${QUEUED_SORT_KEY} WHERE id = ? RETURNING grp`,
    t.now, t.backOfLine(queue), id,
  );
  // The caller found the task in its transaction; should it be gone, there is nothing to queue.
  if (row === undefined) return;
  joinTurns(t, queue, row.grp);
  t.moved(queue, from, 'queued');
  t.wake(queue);
}

/** Moves due scheduled and retrying tasks to queued, at most `limit` of each. Returns how many. */
export function forwardDue(t: Transition, queue: string, limit: number): number {
  let moved = 0;
  for (const state of ['scheduled', 'retrying'] as const) {
    const due = t.all<{ id: string }>(
      'SELECT id FROM tasks WHERE queue = ? AND state = ? AND sort_key <= ? ORDER BY sort_key LIMIT ?',
      queue, state, t.now, limit,
    );
    for (const { id } of due) queueTask(t, id, queue, state);
    moved += due.length;
  }
  return moved;
}

/** When the earliest scheduled or retrying task of the queue is due, or null. */
export function nextDueAt(t: Transition, queue: string): number | null {
  let next: number | null = null;
  for (const state of ['scheduled', 'retrying'] as const) {
    const row = t.get<{ sort_key: number }>('SELECT sort_key FROM tasks WHERE queue = ? AND state = ? ORDER BY sort_key LIMIT 1', queue, state);
    if (row && (next === null || row.sort_key < next)) next = row.sort_key;
  }
  return next;
}

