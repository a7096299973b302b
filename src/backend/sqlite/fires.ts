/**
 * Fires of schedules on SQLite: recording each fire at most once and
 * enqueueing its task in the same transaction, the overlap policies, bounded fire history with a
 * floor below which pruned fires stay no-ops. The SQLite counterpart of redis/lua/fire.lua and
 * fire-history.lua; tasks are stored and cancelled through the ordinary enqueue and cancel paths.
 */
import { TasklineError } from '../../core/errors.js';
import { isFinished, isTaskState, type TaskState } from '../../core/task.js';
import type { FireBatch, FireOutcome, FireRecord, FireRequest, FireResult } from '../contract.js';
import { MAX_PAGE_LIMIT } from '../page-cursor.js';
import { checkStorableTasks, countWithin } from '../shared.js';
import type { StatementCache } from './database.js';
import { enqueueTasks } from './enqueue.js';
import { operateTask } from './operate.js';
import type { Transition } from './transition.js';

/** Applies each batch in order; the caller runs them in one transaction. */
export function fireBatches(t: Transition, batches: FireBatch[]): FireResult[][] {
  checkStorableTasks(batches.flatMap((b) => b.fires.flatMap((f) => (f.task ? [f.task] : []))));
  return batches.map((batch) => fireBatch(t, batch));
}

/**
 * One schedule's fires. A fire recorded before, or at or below the pruned floor, is `exists` (with
 * the task it enqueued then, if its record is kept).
 * Overlap (enqueue fires only, while the previous task is unfinished): skip → skipped:overlap;
 * allow → enqueued; cancelPrevious → the previous task is cancelled (or asked to stop) and the
 * fire enqueued; bufferOne → the first such fire is `busy` and not recorded (the scheduler holds
 * it and sends it again first), later ones in the batch are skipped:overlap.
 */
function fireBatch(t: Transition, batch: FireBatch): FireResult[] {
  const floor = t.get<{ floor: number }>('SELECT floor FROM schedule_fire_floors WHERE queue = ? AND schedule_id = ?', batch.queue, batch.scheduleId)?.floor ?? -1;
  let previous = batch.overlap === 'allow' ? batch.previousTaskId : latestRun(t, batch);
  let holding = false;
  const results = batch.fires.map((fire): FireResult => {
    let outcome: FireOutcome;
    let taskId: string | null = null;
    const recorded = fire.nominalAt <= floor ? undefined : t.get<{ task_id: string | null }>('SELECT task_id FROM schedule_fires WHERE fire_id = ?', fire.fireId);
    if (fire.nominalAt <= floor || recorded) {
      outcome = 'exists';
      taskId = recorded?.task_id ?? null;
      if (taskId !== null && !fire.fireId.endsWith(':manual')) previous = taskId;
    } else if (fire.action === 'missed') {
      outcome = 'missed';
    } else if (fire.action === 'skipped') {
      outcome = `skipped:${fire.reason ?? ''}`;
    } else {
      const running = previous !== null && unfinished(t, previous);
      if (running && batch.overlap === 'skip') {
        outcome = 'skipped:overlap';
      } else if (running && batch.overlap === 'bufferOne') {
        outcome = holding ? 'skipped:overlap' : 'busy';
        holding = true;
      } else {
        if (running && batch.overlap === 'cancelPrevious') operateTask(t, previous!, 'cancel');
        if (enqueueFireTask(t, batch.queue, fire)) {
          outcome = 'enqueued';
          taskId = fire.fireId;
          if (!fire.fireId.endsWith(':manual')) previous = fire.fireId;
          recordRun(t, batch, fire.fireId);
        } else {
          outcome = 'exists';
        }
      }
    }
    if (outcome !== 'exists' && outcome !== 'busy') {
      t.run(
        'INSERT INTO schedule_fires (fire_id, queue, schedule_id, nominal_at, outcome, task_id, enqueued_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
        fire.fireId, batch.queue, batch.scheduleId, fire.nominalAt, outcome, taskId, taskId === null ? null : t.now,
      );
    }
    return { fireId: fire.fireId, outcome, taskId };
  });
  pruneHistory(t, batch);
  return results;
}

/** The schedule's latest run as recorded with its fires (see migration 0004), else the scheduler's word. */
function latestRun(t: Transition, batch: FireBatch): string | null {
  const row = t.get<{ last_task_id: string | null }>('SELECT last_task_id FROM schedule_fire_floors WHERE queue = ? AND schedule_id = ?', batch.queue, batch.scheduleId);
  return row?.last_task_id ?? batch.previousTaskId;
}

/** Records the schedule's latest run (a manual trigger, fire id ending ':manual', is not one). */
function recordRun(t: Transition, batch: FireBatch, fireId: string): void {
  if (fireId.endsWith(':manual')) return;
  t.run(
    `INSERT INTO schedule_fire_floors (queue, schedule_id, floor, last_task_id) VALUES (?, ?, -1, ?)
     ON CONFLICT (queue, schedule_id) DO UPDATE SET last_task_id = excluded.last_task_id`,
    batch.queue, batch.scheduleId, fireId,
  );
}

function unfinished(t: Transition, taskId: string): boolean {
  const task = t.get<{ state: TaskState }>('SELECT state FROM tasks WHERE id = ?', taskId);
  return task !== undefined && !isFinished(task.state);
}

/** Stores the fire's task (its id is the fire id) in the batch's queue; false when that id is taken. */
function enqueueFireTask(t: Transition, queue: string, fire: FireRequest): boolean {
  if (!fire.task) throw new TasklineError('TL_INVALID_ARGUMENT', `fire ${fire.fireId}: an enqueue fire needs its task`);
  const task = { ...fire.task, id: fire.fireId, queue, delay: null, uniqueKey: null, uniqueFor: null };
  const [outcome] = enqueueTasks(t, [task]);
  return outcome.ok;
}

/** Keeps the newest `keepHistory` records of the schedule in this queue; raises the floor to the newest pruned. */
function pruneHistory(t: Transition, batch: FireBatch): void {
  const { n } = t.get<{ n: number }>('SELECT COUNT(*) AS n FROM schedule_fires WHERE queue = ? AND schedule_id = ?', batch.queue, batch.scheduleId)!;
  const excess = n - Math.max(0, batch.keepHistory);
  if (excess <= 0) return;
  const pruned = t.all<{ fire_id: string; nominal_at: number }>(
    'SELECT fire_id, nominal_at FROM schedule_fires WHERE queue = ? AND schedule_id = ? ORDER BY nominal_at, fire_id LIMIT ?',
    batch.queue, batch.scheduleId, excess,
  );
  for (const { fire_id } of pruned) t.run('DELETE FROM schedule_fires WHERE fire_id = ?', fire_id);
  t.run(
    `INSERT INTO schedule_fire_floors (queue, schedule_id, floor) VALUES (?, ?, ?)
     ON CONFLICT (queue, schedule_id) DO UPDATE SET floor = MAX(floor, excluded.floor)`,
    batch.queue, batch.scheduleId, pruned[pruned.length - 1].nominal_at,
  );
}

interface FireRow {
  fire_id: string;
  nominal_at: number;
  outcome: string;
  task_id: string | null;
  enqueued_at: number | null;
  task_state: string | null;
}

/** A schedule's fire records in a queue, newest first, with the current state of each fire's task. */
export function listFires(sql: StatementCache, scheduleId: string, queue: string, limit: number): FireRecord[] {
  countWithin('limit', limit, MAX_PAGE_LIMIT);
  const rows = sql
    .get(
      `SELECT f.fire_id, f.nominal_at, f.outcome, f.task_id, f.enqueued_at, t.state AS task_state
       FROM schedule_fires f LEFT JOIN tasks t ON t.id = f.task_id
       WHERE f.queue = ? AND f.schedule_id = ? ORDER BY f.nominal_at DESC, f.fire_id DESC LIMIT ?`,
    )
    .all(queue, scheduleId, limit) as FireRow[];
  return rows.map((row) => ({
    fireId: row.fire_id,
    nominalAt: row.nominal_at,
    enqueuedAt: row.enqueued_at,
    lagMs: row.enqueued_at === null ? null : row.enqueued_at - row.nominal_at,
    outcome: row.outcome,
    taskId: row.task_id,
    taskState: isTaskState(row.task_state) ? row.task_state : null,
  }));
}
