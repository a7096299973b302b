/** A running task's log lines and progress, written by its lease holder only. */
import type { AckResult, LeaseRef } from '../contract.js';
import type { TaskLogLine } from '../../core/task.js';
import { MAX_LOG_LINES } from '../shared.js';
import { HELD } from './leases.js';
import type { Transition } from './transition.js';

/** Appends log lines (the newest MAX_LOG_LINES are kept) and/or sets progress of a running task. */
export function reportProgress(t: Transition, lease: LeaseRef, update: { logs?: TaskLogLine[]; progress?: unknown }): AckResult {
  const row = t.get<{ logs: string }>(`SELECT logs FROM tasks WHERE ${HELD}`, lease.id, lease.queue, lease.token);
  if (!row) return 'stale';
  if (update.logs && update.logs.length > 0) {
    const lines = [...(JSON.parse(row.logs) as TaskLogLine[]), ...update.logs].slice(-MAX_LOG_LINES);
    t.run('UPDATE tasks SET logs = ? WHERE id = ?', JSON.stringify(lines), lease.id);
  }
  if (update.progress !== undefined) t.run('UPDATE tasks SET progress = ? WHERE id = ?', JSON.stringify(update.progress), lease.id);
  return 'ok';
}
