/**
 * One state transition in progress: the bookkeeping every write transaction shares (the SQLite
 * counterpart of the helpers in redis/lua/lib/). A Transition lives inside one `BEGIN IMMEDIATE`
 * transaction; `flush()` writes what it gathered (queue rows, counters) before the commit, and
 * after the commit the backend tells its notifier which queues were woken and whether events
 * were written.
 */
import type Database from 'better-sqlite3';
import { KEPT_STATES, noLimits, type KeptState, type QueueKeep, type QueueLimits } from '../contract.js';
import type { StatementCache } from './database.js';

interface QueueState {
  paused: boolean;
  keep: QueueKeep;
  limits: QueueLimits;
  signal: number;
  position: number;
  /** The number of the last turn given to one of its groups (groups.ts); 0: it never had a grouped task. */
  turn: number;
  processed: number;
  failed: number;
  dirty: boolean;
}

/** The limit columns of a `queues` row (migration 0010). */
export const LIMIT_COLUMNS = 'rate_limit, rate_interval_ms, concurrency, group_concurrency, max_length';

export interface LimitColumns {
  rate_limit: number | null;
  rate_interval_ms: number | null;
  concurrency: number | null;
  group_concurrency: number | null;
  max_length: number | null;
}

export function decodeLimits(row: LimitColumns): QueueLimits {
  return {
    rate: row.rate_limit === null || row.rate_interval_ms === null ? null : { limit: row.rate_limit, intervalMs: row.rate_interval_ms },
    concurrency: row.concurrency,
    groupConcurrency: row.group_concurrency,
    maxLength: row.max_length,
  };
}

/** Events are kept at least this long, for subscribers in other processes to read. */
export const EVENT_RETENTION_MS = 10_000;
/** Pruning of old events runs when an event id crosses a multiple of this. */
const EVENT_PRUNE_EVERY = 1024;
/** Most tasks one transaction deletes per state for the keep bounds; the janitor does the rest. */
export const TRIM_LIMIT = 1000;
const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

export class Transition {
  /** Queues whose signal was bumped: waiting workers should look again. */
  readonly woken = new Set<string>();
  /** Events written (finished, cancel-requested). */
  events = 0;
  private readonly queues = new Map<string, QueueState>();
  private readonly counted = new Map<string, { processed: number; failed: number }>();
  /** Final states each queue moved tasks to: trimmed to the queue's keep bounds in flush(). */
  private readonly finishedIn = new Map<string, Set<KeptState>>();
  /** Changes to state_counts not written yet, by queue then state (see moved). */
  private readonly stateDeltas = new Map<string, Map<string, number>>();
  /** Changes to kept_counts not written yet, by queue then state (see countKept). */
  private readonly keptDeltas = new Map<string, Map<KeptState, number>>();
  private pruneEvents = false;
  /**
   * Tasks moved to a final state, in order, for their workflows (sqlite/workflows.ts settles
   * them before the flush); `result` when the row is gone by then (a queue that keeps none).
   */
  readonly finishedTasks: Array<{ id: string; state: KeptState; result?: string }> = [];

  constructor(private readonly statements: StatementCache, readonly now: number) {}

  run(sql: string, ...params: unknown[]): Database.RunResult {
    return this.statements.get(sql).run(...params);
  }

  get<T>(sql: string, ...params: unknown[]): T | undefined {
    return this.statements.get(sql).get(...params) as T | undefined;
  }

  all<T>(sql: string, ...params: unknown[]): T[] {
    return this.statements.get(sql).all(...params) as T[];
  }

  /** The queue's row, registering the queue on first use. */
  queue(name: string): Readonly<QueueState> {
    return this.queueState(name);
  }

  private queueState(name: string): QueueState {
    let state = this.queues.get(name);
    if (!state) {
      const row = this.get<{
        paused: number; signal: number; position: number; turn: number; processed: number; failed: number;
        keep_completed: number | null; keep_dead: number | null; keep_cancelled: number | null;
      } & LimitColumns>(
        `SELECT paused, signal, position, turn, processed, failed, keep_completed, keep_dead, keep_cancelled, ${LIMIT_COLUMNS} FROM queues WHERE name = ?`,
        name,
      );
      if (!row) this.run('INSERT INTO queues (name) VALUES (?)', name);
      state = {
        paused: row?.paused === 1,
        keep: { completed: row?.keep_completed ?? null, dead: row?.keep_dead ?? null, cancelled: row?.keep_cancelled ?? null },
        limits: row ? decodeLimits(row) : noLimits(),
        signal: row?.signal ?? 0,
        position: row?.position ?? 0,
        turn: row?.turn ?? 0,
        processed: row?.processed ?? 0,
        failed: row?.failed ?? 0,
        dirty: false,
      };
      this.queues.set(name, state);
    }
    return state;
  }

  /** A place at the back of the queued line (claimed after everything queued before). */
  backOfLine(queue: string): number {
    const state = this.queueState(queue);
    state.position += 1;
    state.dirty = true;
    return state.position;
  }

  /** A place at the front of the queued line (claimed next). */
  frontOfLine(queue: string): number {
    return -this.backOfLine(queue);
  }

  /** The number of a new turn at the back of the queue's group turns (groups.ts). */
  nextTurn(queue: string): number {
    const state = this.queueState(queue);
    state.turn += 1;
    state.dirty = true;
    return state.turn;
  }

  setPaused(queue: string, paused: boolean): void {
    const state = this.queueState(queue);
    state.paused = paused;
    state.dirty = true;
  }

  /** Changes some of the queue's keep bounds; returns them all. */
  setKeepBounds(queue: string, bounds: Partial<QueueKeep>): QueueKeep {
    const state = this.queueState(queue);
    state.keep = { ...state.keep, ...bounds };
    this.run('UPDATE queues SET keep_completed = ?, keep_dead = ?, keep_cancelled = ? WHERE name = ?', state.keep.completed, state.keep.dead, state.keep.cancelled, queue);
    this.recountKept(queue);
    return state.keep;
  }

  /** Changes some of the queue's limits; returns them all. */
  setLimits(queue: string, limits: Partial<QueueLimits>): QueueLimits {
    const state = this.queueState(queue);
    state.limits = { ...state.limits, ...limits };
    const { rate, concurrency, groupConcurrency, maxLength } = state.limits;
    this.run(
      'UPDATE queues SET rate_limit = ?, rate_interval_ms = ?, concurrency = ?, group_concurrency = ?, max_length = ? WHERE name = ?',
      rate?.limit ?? null, rate?.intervalMs ?? null, concurrency, groupConcurrency, maxLength, queue,
    );
    // Starts are recorded only while a rate is set: a rate set again later starts afresh.
    if (rate === null) this.run('DELETE FROM queue_starts WHERE queue = ?', queue);
    // A limit raised or removed may let waiting workers claim now.
    this.wake(queue);
    return state.limits;
  }

  /**
   * Counts afresh the tasks of the queue's states whose bound is above 0 (they are not counted
   * while a state has another bound), dropping the counts of the others.
   */
  recountKept(queue: string): void {
    const { keep } = this.queueState(queue);
    this.keptDeltas.delete(queue);
    this.run('DELETE FROM kept_counts WHERE queue = ?', queue);
    for (const state of KEPT_STATES) {
      const bound = keep[state];
      if (bound === null || bound === 0) continue;
      this.run('INSERT INTO kept_counts (queue, state, n) SELECT ?, ?, COUNT(*) FROM tasks WHERE queue = ? AND state = ?', queue, state, queue, state);
    }
  }

  /**
   * A task of the queue moved from state `from` (null: it is new) to `to` (null: it was deleted),
   * for state_counts; written at flush(). Every write of a task's state says so here.
   */
  moved(queue: string, from: string | null, to: string | null, tasks = 1): void {
    if (from === to || tasks === 0) return;
    // A task that stops running frees a slot of a queue with a concurrency or a groupConcurrency:
    // its workers look again.
    if (from === 'running') {
      const { limits } = this.queueState(queue);
      if (limits.concurrency !== null || limits.groupConcurrency !== null) this.wake(queue);
    }
    let deltas = this.stateDeltas.get(queue);
    if (!deltas) this.stateDeltas.set(queue, (deltas = new Map()));
    if (from !== null) deltas.set(from, (deltas.get(from) ?? 0) - tasks);
    if (to !== null) deltas.set(to, (deltas.get(to) ?? 0) + tasks);
  }

  /**
   * How many of the queue's tasks wait (queued, scheduled, retrying), as counted: state_counts
   * and this transaction's moves not written yet.
   */
  waiting(queue: string): number {
    const stored = this.get<{ n: number }>(
      "SELECT COALESCE(SUM(n), 0) AS n FROM state_counts WHERE queue = ? AND state IN ('queued', 'scheduled', 'retrying')", queue,
    )!.n;
    const deltas = this.stateDeltas.get(queue);
    return stored + (deltas?.get('queued') ?? 0) + (deltas?.get('scheduled') ?? 0) + (deltas?.get('retrying') ?? 0);
  }

  /** Counts afresh how many tasks the queue holds in each state (state_counts). */
  recountStates(queue: string): void {
    this.stateDeltas.delete(queue);
    this.run('DELETE FROM state_counts WHERE queue = ?', queue);
    this.run('INSERT INTO state_counts (queue, state, n) SELECT queue, state, COUNT(*) FROM tasks WHERE queue = ? GROUP BY state', queue);
  }

  /**
   * A task of the queue entered (+1) or left (-1) `state`: counted when the state is final and its
   * bound is above 0. Every move into a final state goes through emitFinished, every move out
   * through here (a run again, a deletion); written at flush().
   */
  countKept(queue: string, state: string, delta: number): void {
    if (state !== 'completed' && state !== 'dead' && state !== 'cancelled') return;
    const bound = this.queueState(queue).keep[state];
    if (bound === null || bound === 0) return;
    let deltas = this.keptDeltas.get(queue);
    if (!deltas) this.keptDeltas.set(queue, (deltas = new Map()));
    deltas.set(state, (deltas.get(state) ?? 0) + delta);
  }

  /** How many tasks of the queue are in `state`, as counted (a bound above 0 only). */
  keptCount(queue: string, state: KeptState): number {
    const stored = this.get<{ n: number }>('SELECT n FROM kept_counts WHERE queue = ? AND state = ?', queue, state)?.n ?? 0;
    return stored + (this.keptDeltas.get(queue)?.get(state) ?? 0);
  }

  /** Wakes the workers waiting on this queue (in every process) once the transaction commits. */
  wake(queue: string): void {
    if (this.woken.has(queue)) return;
    const state = this.queueState(queue);
    state.signal += 1;
    state.dirty = true;
    this.woken.add(queue);
  }

  /** Counts finished attempts (processed) and failed ones, in totals and per day/minute. */
  count(queue: string, processed: number, failed: number): void {
    if (processed === 0 && failed === 0) return;
    const state = this.queueState(queue);
    state.processed += processed;
    state.failed += failed;
    state.dirty = true;
    const counted = this.counted.get(queue);
    if (counted) {
      counted.processed += processed;
      counted.failed += failed;
    } else this.counted.set(queue, { processed, failed });
  }

  /** Bounds on the finished tasks the queue keeps (registering the queue). */
  keepBounds(queue: string): Readonly<QueueKeep> {
    return this.queueState(queue).keep;
  }

  /** Announces a task's move to a final state; the state is trimmed to its keep bound at flush(). */
  emitFinished(queue: string, id: string, state: KeptState, type: string | null = null, result?: string): void {
    this.finishedTasks.push({ id, state, result });
    let states = this.finishedIn.get(queue);
    if (!states) this.finishedIn.set(queue, (states = new Set()));
    states.add(state);
    this.countKept(queue, state, 1);
    this.emit('finished', queue, id, state, type);
  }

  /** A workflow was created, retried (running) or finished. */
  emitWorkflow(id: string, state: string): void {
    this.emit('workflow', '', id, state, '');
  }

  emitCancelRequested(queue: string, id: string): void {
    this.emit('cancel-requested', queue, id, null, null);
  }

  /**
   * A lifecycle event for the task center (notifier.ts): `detail` is the new state (enqueued),
   * the attempt (started) or `attempt,due` (retrying); `type` when the caller has it at hand
   * (see emit).
   */
  emitLifecycle(kind: 'enqueued' | 'started' | 'retrying', queue: string, id: string, detail: string, type: string | null = null): void {
    this.emit(kind, queue, id, detail, type);
  }

  /**
   * Writes an event with the task's type (given, or read from the task row, which is there until
   * the transaction's end): a subscriber may read it after the task was deleted (a keep bound).
   */
  private emit(kind: string, queue: string, id: string, state: string | null, type: string | null): void {
    const { lastInsertRowid } =
      type === null
        ? this.run('INSERT INTO events (at, kind, queue, task_id, state, type) VALUES (?, ?, ?, ?, ?, (SELECT type FROM tasks WHERE id = ?))', this.now, kind, queue, id, state, id)
        : this.run('INSERT INTO events (at, kind, queue, task_id, state, type) VALUES (?, ?, ?, ?, ?, ?)', this.now, kind, queue, id, state, type);
    this.events += 1;
    if (Number(lastInsertRowid) % EVENT_PRUNE_EVERY === 0) this.pruneEvents = true;
  }

  /** Writes the gathered queue rows and counters; called once, last, inside the transaction. */
  flush(): void {
    for (const [queue, states] of this.finishedIn) {
      for (const state of states) trimKept(this, queue, state, TRIM_LIMIT);
    }
    for (const [queue, deltas] of this.keptDeltas) {
      for (const [state, delta] of deltas) {
        if (delta !== 0) this.run('UPDATE kept_counts SET n = n + ? WHERE queue = ? AND state = ?', delta, queue, state);
      }
    }
    this.keptDeltas.clear();
    for (const [queue, deltas] of this.stateDeltas) {
      for (const [state, delta] of deltas) {
        if (delta === 0) continue;
        this.run(
          'INSERT INTO state_counts (queue, state, n) VALUES (?, ?, ?) ON CONFLICT (queue, state) DO UPDATE SET n = n + excluded.n',
          queue, state, delta,
        );
      }
    }
    this.stateDeltas.clear();
    for (const [name, q] of this.queues) {
      if (!q.dirty) continue;
      this.run(
        'UPDATE queues SET paused = ?, signal = ?, position = ?, turn = ?, processed = ?, failed = ? WHERE name = ?',
        q.paused ? 1 : 0, q.signal, q.position, q.turn, q.processed, q.failed, name,
      );
    }
    const day = Math.floor(this.now / DAY_MS);
    const minute = Math.floor(this.now / MINUTE_MS);
    for (const [queue, { processed, failed }] of this.counted) {
      for (const [period, number] of [['day', day], ['minute', minute]] as const) {
        this.run(
          `INSERT INTO stats (queue, period, number, processed, failed) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (queue, period, number) DO UPDATE SET processed = processed + excluded.processed, failed = failed + excluded.failed`,
          queue, period, number, processed, failed,
        );
      }
    }
    if (this.pruneEvents) pruneEvents(this);
  }
}

/**
 * Deletes the queue's tasks in `state` past its keep bound, those whose retention ends first (at
 * most `limit`). Returns how many were deleted.
 */
export function trimKept(t: Transition, queue: string, state: KeptState, limit: number): number {
  const bound = t.keepBounds(queue)[state];
  if (bound === null) return 0;
  // A bound of 0 keeps none (no count is kept for it); another is compared with the count.
  const excess = bound === 0 ? limit : t.keptCount(queue, state) - bound;
  if (excess <= 0) return 0;
  const ids = t.all<{ id: string }>('SELECT id FROM tasks WHERE queue = ? AND state = ? ORDER BY sort_key LIMIT ?', queue, state, Math.min(excess, limit));
  for (const { id } of ids) deleteTaskRows(t, id, queue, state);
  return ids.length;
}

/** Deletes a task of `queue` in `state` (as the caller read it). */
export function deleteTaskRows(t: Transition, id: string, queue: string, state: string): void {
  t.run('DELETE FROM tasks WHERE id = ?', id);
  t.run('DELETE FROM payloads WHERE id = ?', id);
  t.countKept(queue, state, -1);
  t.moved(queue, state, null);
}

/** Deletes events older than EVENT_RETENTION_MS. Cost: the rows deleted. */
export function pruneEvents(t: Transition): void {
  const firstKept = t.get<{ id: number }>('SELECT id FROM events WHERE at >= ? ORDER BY id LIMIT 1', t.now - EVENT_RETENTION_MS);
  if (firstKept) t.run('DELETE FROM events WHERE id < ?', firstKept.id);
  else t.run('DELETE FROM events');
}
