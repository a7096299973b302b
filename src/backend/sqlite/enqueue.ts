/** Producing: stores a batch of new tasks (any queues) in one transaction. */
import type { NewTask } from '../../core/task.js';
import { isFinished, type TaskState } from '../../core/task.js';
import type { EnqueueOutcome } from '../contract.js';
import type { Transition } from './transition.js';

const INSERT_TASK = `INSERT INTO tasks (id, queue, type, state, sort_key, max_retries, timeout, deadline, created_at, enqueued_at,
    next_run_at, unique_key, retention, backoff, headers, links)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/**
 * Stores each task unless its id exists (in any queue) or its unique key is held by an
 * unfinished task whose uniqueFor TTL has not run out. Tasks due now are queued, later ones
 * scheduled.
 */
export function enqueueTasks(t: Transition, tasks: NewTask[]): EnqueueOutcome[] {
  return tasks.map((task): EnqueueOutcome => {
    if (t.get('SELECT 1 FROM tasks WHERE id = ?', task.id)) return { ok: false, id: task.id, reason: 'id-conflict' };
    if (task.uniqueKey !== null) {
      const holder = uniqueHolder(t, task.queue, task.uniqueKey);
      if (holder !== null) return { ok: false, id: task.id, reason: 'unique-conflict', holder };
      t.run(
        'INSERT OR REPLACE INTO unique_keys (queue, key, holder, expires_at) VALUES (?, ?, ?, ?)',
        task.queue, task.uniqueKey, task.id, t.now + (task.uniqueFor ?? 0),
      );
    }
    const due = task.runAt !== null && task.runAt >= 0 ? task.runAt : task.delay !== null && task.delay > 0 ? t.now + task.delay : null;
    const scheduled = due !== null && due > t.now;
    const state: TaskState = scheduled ? 'scheduled' : 'queued';
    t.run(
      INSERT_TASK,
      task.id, task.queue, task.type, state, scheduled ? due : t.backOfLine(task.queue), task.maxRetries, task.timeout, task.deadline,
      t.now, scheduled ? null : t.now, scheduled ? due : null, task.uniqueKey, task.retention,
      task.backoff === null ? null : JSON.stringify(task.backoff),
      task.headers === null ? null : JSON.stringify(task.headers),
      task.links === null ? null : JSON.stringify(task.links),
    );
    t.run('INSERT INTO payloads (id, body) VALUES (?, ?)', task.id, task.payload);
    t.moved(task.queue, null, state);
    // A scheduled task wakes workers too: they learn its due time and wait for it.
    t.wake(task.queue);
    t.emitLifecycle('enqueued', task.queue, task.id, state, task.type);
    return { ok: true, info: { id: task.id, type: task.type, queue: task.queue, state } };
  });
}

/** The id of the unfinished task holding a unique key whose TTL has not run out, or null. */
function uniqueHolder(t: Transition, queue: string, key: string): string | null {
  const row = t.get<{ holder: string; expires_at: number }>('SELECT holder, expires_at FROM unique_keys WHERE queue = ? AND key = ?', queue, key);
  if (!row || row.expires_at <= t.now) return null;
  const held = t.get<{ state: TaskState }>('SELECT state FROM tasks WHERE id = ?', row.holder);
  return held && !isFinished(held.state) ? row.holder : null;
}
