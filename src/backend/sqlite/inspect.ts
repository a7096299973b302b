/** Inspecting: queues, tasks and counters, read in one (deferred, read-only) transaction each. */
import type { TaskRecord, TaskState } from '../../core/task.js';
import type { DailyStat, MinuteStat, QueueGroups, QueueInfo, QueueLimits, TaskPage } from '../contract.js';
import { decodeCursor, encodeCursor, pageLimit } from '../page-cursor.js';
import { countWithin, dayString, emptyCounts, MAX_STAT_DAYS, MAX_STAT_MINUTES } from '../shared.js';
import type { StatementCache } from './database.js';
import { decodeRecord, TASK_COLUMNS, TASK_FROM, type TaskRow } from './rows.js';
import { LIVE_LEASES, STARTS_IN_WINDOW } from './claim.js';
import { UNGROUPED, UNGROUPED_BELOW } from './groups.js';
import { decodeLimits, LIMIT_COLUMNS, type LimitColumns } from './transition.js';

const QUEUE_COLUMNS = `SELECT name, paused, turn, processed, failed, refused, keep_completed, keep_dead, keep_cancelled, ${LIMIT_COLUMNS} FROM queues`;

interface QueueRow extends LimitColumns {
  name: string;
  paused: number;
  /** 0: the queue never had a grouped task (groups.ts). */
  turn: number;
  refused: number;
  keep_completed: number | null;
  keep_dead: number | null;
  keep_cancelled: number | null;
  processed: number;
  failed: number;
}

export function listQueues(sql: StatementCache, now: number): QueueInfo[] {
  const rows = sql.get(`${QUEUE_COLUMNS} ORDER BY name`).all() as QueueRow[];
  return rows.map((row) => queueInfo(sql, row, now));
}

export function getQueue(sql: StatementCache, name: string, now: number): QueueInfo | null {
  const row = sql.get(`${QUEUE_COLUMNS} WHERE name = ?`).get(name) as QueueRow | undefined;
  return row ? queueInfo(sql, row, now) : null;
}

function queueInfo(sql: StatementCache, row: QueueRow, now: number): QueueInfo {
  const counts = emptyCounts();
  // Kept by the transitions (Transition.moved): one read, not a count of the queue's tasks.
  const byState = sql.get('SELECT state, n FROM state_counts WHERE queue = ? AND n > 0').all(row.name) as { state: TaskState; n: number }[];
  for (const { state, n } of byState) counts[state] = n;
  const enqueuedAt = oldestQueued(sql, row.name, row.turn > 0);
  const latency = enqueuedAt === null ? 0 : Math.max(0, now - enqueuedAt);
  const keep = { completed: row.keep_completed, dead: row.keep_dead, cancelled: row.keep_cancelled };
  const limits = decodeLimits(row);
  const groups = row.turn > 0 ? queueGroups(sql, row.name, now) : { waiting: 0, running: {} };
  return { name: row.name, paused: row.paused === 1, keep, limits, held: heldBy(sql, row.name, limits, now), counts, processed: row.processed, failed: row.failed, refused: row.refused, latency, groups };
}

const FIRST_QUEUED = "SELECT enqueued_at FROM tasks WHERE queue = ? AND state = 'queued' ORDER BY sort_key LIMIT 1";
const FIRST_GROUPED = `SELECT enqueued_at FROM tasks WHERE queue = ? AND state = 'queued' AND sort_key >= ${UNGROUPED_BELOW} ORDER BY sort_key LIMIT 1`;

/**
 * When the oldest queued task was queued: the front of the line, and in a queue that has had
 * groups also the front of the groups' lines (which wait above the line without a group).
 */
function oldestQueued(sql: StatementCache, queue: string, grouped: boolean): number | null {
  const fronts = [sql.get(FIRST_QUEUED).get(queue), grouped ? sql.get(FIRST_GROUPED).get(queue) : undefined] as ({ enqueued_at: number | null } | undefined)[];
  const times = fronts.flatMap((front) => (front?.enqueued_at == null ? [] : [front.enqueued_at]));
  return times.length === 0 ? null : Math.min(...times);
}

/** Most groups QueueInfo.groups.running lists. */
const RUNNING_GROUPS_LISTED = 1000;
/** The groups in the turns that have a queued task (a group without one may keep its row until a claim meets it). */
const WAITING_GROUPS = `SELECT COUNT(*) AS n FROM group_turns g WHERE g.queue = ? AND g.grp <> '${UNGROUPED}'
  AND EXISTS (SELECT 1 FROM tasks t WHERE t.queue = g.queue AND t.state = 'queued' AND t.grp = g.grp)`;
const RUNNING_BY_GROUP = `SELECT grp, COUNT(*) AS n FROM tasks WHERE queue = ? AND state = 'running' AND grp IS NOT NULL AND sort_key > ?
  GROUP BY grp ORDER BY grp LIMIT ${RUNNING_GROUPS_LISTED}`;

/**
 * QueueInfo.groups: how many groups have queued tasks, and the running tasks with a live lease
 * (as groupConcurrency counts them) of each group that has one. Cost: a lookup per group in the
 * turns, and the queue's running grouped tasks.
 */
function queueGroups(sql: StatementCache, queue: string, now: number): QueueGroups {
  const { n } = sql.get(WAITING_GROUPS).get(queue) as { n: number };
  const running = sql.get(RUNNING_BY_GROUP).all(queue, now) as { grp: string; n: number }[];
  return { waiting: n, running: Object.fromEntries(running.map((r) => [r.grp, r.n])) };
}

/** The limit that holds the queue's waiting tasks back now (QueueInfo.held), as the claim judges it (claim.ts). */
function heldBy(sql: StatementCache, queue: string, limits: QueueLimits, now: number): QueueInfo['held'] {
  if (limits.rate !== null) {
    const window = sql.get(STARTS_IN_WINDOW).get(queue, now - limits.rate.intervalMs) as
      { n: number; oldest: number | null };
    if (window.n >= limits.rate.limit && window.oldest !== null) return { limit: 'rate', until: window.oldest + limits.rate.intervalMs };
  }
  if (limits.concurrency !== null) {
    const { n } = sql.get(LIVE_LEASES).get(queue, now) as { n: number };
    if (n >= limits.concurrency) return { limit: 'concurrency', until: null };
  }
  return null;
}

/** Finished tasks are listed newest first; the others in the order they will move on. */
function newestFirst(state: TaskState): boolean {
  return state === 'completed' || state === 'dead' || state === 'cancelled';
}

/**
 * One page of a queue's tasks in one state: queued oldest first (claim order; grouped tasks,
 * which take turns, after those without a group), scheduled and
 * retrying by due time, running by lease expiry, finished newest first. The cursor is the
 * position after the last task returned (its sort key and id), so pages do not shift when tasks
 * ahead of it move.
 */
export function listTasks(sql: StatementCache, queue: string, state: TaskState, page: { limit?: number; cursor?: string }): TaskPage {
  const limit = pageLimit(page.limit);
  const after = decodeCursor(page.cursor, queue, state, isPosition);
  const desc = newestFirst(state);
  const order = desc ? 'ORDER BY t.sort_key DESC, t.id DESC' : 'ORDER BY t.sort_key, t.id';
  const where = "WHERE t.queue = ? AND t.state = ?";
  const rows = (
    after === null
      ? sql.get(`${TASK_COLUMNS} ${TASK_FROM} ${where} ${order} LIMIT ?`).all(queue, state, limit)
      : sql.get(`${TASK_COLUMNS} ${TASK_FROM} ${where} AND (t.sort_key, t.id) ${desc ? '<' : '>'} (?, ?) ${order} LIMIT ?`).all(queue, state, after[0], after[1], limit)
  ) as TaskRow[];
  const last = rows[rows.length - 1];
  return { tasks: rows.map(decodeRecord), nextCursor: rows.length < limit || !last ? null : encodeCursor(queue, state, [last.sort_key, last.id]) };
}

/** A listing position: the sort key and id of the last task of the page before. */
function isPosition(position: unknown[]): position is [number, string] {
  return position.length === 2 && typeof position[0] === 'number' && Number.isFinite(position[0]) && typeof position[1] === 'string';
}

export function getTask(sql: StatementCache, id: string): TaskRecord | null {
  const row = sql.get(`${TASK_COLUMNS} ${TASK_FROM} WHERE t.id = ?`).get(id) as TaskRow | undefined;
  return row ? decodeRecord(row) : null;
}

function counters(sql: StatementCache, queue: string, period: 'day' | 'minute', first: number, last: number): Map<number, { processed: number; failed: number }> {
  const rows = sql
    .get('SELECT number, processed, failed FROM stats WHERE queue = ? AND period = ? AND number BETWEEN ? AND ?')
    .all(queue, period, first, last) as { number: number; processed: number; failed: number }[];
  return new Map(rows.map((r) => [r.number, r]));
}

export function dailyStats(sql: StatementCache, queue: string, days: number, now: number): DailyStat[] {
  countWithin('days', days, MAX_STAT_DAYS);
  const today = Math.floor(now / 86_400_000);
  const numbers = Array.from({ length: days }, (_, i) => today - days + 1 + i);
  const found = counters(sql, queue, 'day', today - days + 1, today);
  return numbers.map((d) => ({ day: dayString(d), processed: found.get(d)?.processed ?? 0, failed: found.get(d)?.failed ?? 0 }));
}

export function minuteStats(sql: StatementCache, queue: string, minutes: number, now: number): MinuteStat[] {
  countWithin('minutes', minutes, MAX_STAT_MINUTES);
  const current = Math.floor(now / 60_000);
  const numbers = Array.from({ length: minutes }, (_, i) => current - minutes + 1 + i);
  const found = counters(sql, queue, 'minute', current - minutes + 1, current);
  return numbers.map((m) => ({ at: m * 60_000, processed: found.get(m)?.processed ?? 0, failed: found.get(m)?.failed ?? 0 }));
}
