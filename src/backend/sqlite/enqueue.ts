/** Producing: stores a batch of new tasks (any queues) in one transaction. */
import type { NewTask } from '../../core/task.js';
import { isFinished, type TaskState } from '../../core/task.js';
import type { EnqueueOutcome } from '../contract.js';
import { groupOf, joinTurns, queuedSortKey } from './groups.js';
import type { Transition } from './transition.js';

const INSERT_TASK = `INSERT INTO tasks (id, queue, type, state, sort_key, max_retries, timeout, deadline, created_at, enqueued_at,
    next_run_at, unique_key, retention, backoff, headers, links, grp)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/**
 * Stores the tasks of several enqueue calls (EnqueueGroups: `sizes` is how many each brought), in
 * order, each call's tasks held to their queues' maxLength (enqueueBatch).
 */
export function enqueueCalls(t: Transition, tasks: NewTask[], sizes: number[]): EnqueueOutcome[] {
  let offset = 0;
  return sizes.flatMap((size) => enqueueBatch(t, tasks.slice(offset, (offset += size))));
}

/**
 * One call's tasks: those of a queue whose waiting tasks they would take past its maxLength are
 * all refused (queue-full), the others stored as enqueueTasks does. Internal enqueues (a
 * schedule's fires, workflow nodes) call enqueueTasks directly: the bound is for producers.
 */
function enqueueBatch(t: Transition, batch: NewTask[]): EnqueueOutcome[] {
  const full = fullQueues(t, batch);
  if (full.size === 0) return enqueueTasks(t, batch);
  const stored = enqueueTasks(t, batch.filter((task) => !full.has(task.queue)));
  for (const queue of full.keys()) {
    t.run('UPDATE queues SET refused = refused + ? WHERE name = ?', batch.filter((task) => task.queue === queue).length, queue);
  }
  let next = 0;
  return batch.map((task): EnqueueOutcome => {
    const refused = full.get(task.queue);
    return refused ? { ok: false, id: task.id, reason: 'queue-full', queue: task.queue, ...refused } : stored[next++];
  });
}

/**
 * The queues with a maxLength that the batch would take past it, with their bound and waiting
 * tasks. Only the tasks that would be stored count (not those refused for their id or unique
 * key); leaving a refused queue's tasks out may let a later task of the batch with the same id
 * be stored, so the count is taken again until no further queue is refused.
 */
function fullQueues(t: Transition, batch: NewTask[]): Map<string, { limit: number; waiting: number }> {
  const full = new Map<string, { limit: number; waiting: number }>();
  // The common case costs a lookup of the queue state each task's enqueue loads anyway.
  if (!batch.some((task) => t.queue(task.queue).limits.maxLength !== null)) return full;
  for (;;) {
    let refused = false;
    for (const [queue, adding] of storedPerBoundedQueue(t, batch.filter((task) => !full.has(task.queue)))) {
      const limit = t.queue(queue).limits.maxLength!;
      const waiting = t.waiting(queue);
      if (waiting + adding > limit) {
        full.set(queue, { limit, waiting });
        refused = true;
      }
    }
    if (!refused) return full;
  }
}

/** How many of the tasks enqueueTasks would store, per queue with a maxLength (read only: it checks what enqueueTasks does). */
function storedPerBoundedQueue(t: Transition, tasks: NewTask[]): Map<string, number> {
  const ids = new Set<string>();
  /** Unique keys (queue and key) of the tasks counted: whether each holds its key (a uniqueFor above 0). */
  const keys = new Map<string, boolean>();
  const counts = new Map<string, number>();
  for (const task of tasks) {
    if (ids.has(task.id) || t.get('SELECT 1 FROM tasks WHERE id = ?', task.id)) continue;
    if (task.uniqueKey !== null) {
      const key = `${task.queue}\u0000${task.uniqueKey}`;
      if (keys.get(key) ?? (uniqueHolder(t, task.queue, task.uniqueKey) !== null)) continue;
      keys.set(key, (task.uniqueFor ?? 0) > 0);
    }
    ids.add(task.id);
    if (t.queue(task.queue).limits.maxLength !== null) counts.set(task.queue, (counts.get(task.queue) ?? 0) + 1);
  }
  return counts;
}

/**
 * Stores each task unless its id exists (in any queue) or its unique key is held by an
 * unfinished task whose uniqueFor TTL has not run out. Tasks due now are queued (a grouped one
 * in its group's line, the group joining the turns), later ones scheduled.
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
    const group = groupOf(task);
    t.run(
      INSERT_TASK,
      task.id, task.queue, task.type, state, scheduled ? due : queuedSortKey(t.backOfLine(task.queue), group), task.maxRetries, task.timeout,
      task.deadline, t.now, scheduled ? null : t.now, scheduled ? due : null, task.uniqueKey, task.retention,
      task.backoff === null ? null : JSON.stringify(task.backoff),
      task.headers === null ? null : JSON.stringify(task.headers),
      task.links === null ? null : JSON.stringify(task.links),
      group,
    );
    if (!scheduled) joinTurns(t, task.queue, group);
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
