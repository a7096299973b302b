/**
 * The embedded store: one SQLite file (WAL mode, via better-sqlite3), shared safely by several
 * processes on one host. Every state transition is one `BEGIN IMMEDIATE` transaction, with the
 * same semantics as the Redis backend's Lua scripts. The pieces:
 * - database.ts   opening, pragmas, durability, busy handling;   schema.ts + migrations/  the schema
 * - transition.ts the bookkeeping of one write transaction;      lifecycle.ts  moves between states
 * - enqueue.ts, claim.ts, ack.ts, maintenance.ts, operate.ts     the transitions
 * - inspect.ts, workers.ts                                       reading; the worker registry
 * - schedules.ts, fires.ts, schedulers.ts, locks.ts              schedules, their fires, the scheduler instances; locks
 * - notifier.ts   waking waiting workers and subscribers, across processes
 */
import type Database from 'better-sqlite3';
import { TasklineError } from '../../core/errors.js';
import { validateQueueName } from '../../core/options.js';
import type { NewTask, TaskLogLine, TaskRecord, TaskState } from '../../core/task.js';
import type { Schedule, ScheduleDefinition } from '../../core/schedule.js';
import type {
  Ack, AckAndClaimResult, AckResult, BackendEvent, BulkState, ClaimRequest, ClaimResult, DailyStat, EnqueueOutcome, LeaseRef, MinuteStat,
  QueueInfo, QueueKeep, RenewResult, TaskPage, Unsubscribe, WorkerInfo, TaskTypeInfo, SubscribeOptions,
  FireBatch, FireRecord, FireResult, ScheduleUpdate, SchedulingBackend, SchedulerCheckIn, SchedulerInstance, SchedulerList, ScheduleChanges,
} from '../contract.js';
import { EnqueueGroups } from '../enqueue-groups.js';
import { checkStorableTasks, validateLockKey, validateQueueKeep } from '../shared.js';
import { ackAttempts } from './ack.js';
import { renewLeases } from './leases.js';
import { reportProgress } from './progress.js';
import { claimTasks } from './claim.js';
import { openDatabase, retryBusy, StatementCache, type Synchronous } from './database.js';
import { enqueueTasks } from './enqueue.js';
import { fireBatches, listFires } from './fires.js';
import * as inspect from './inspect.js';
import { forwardDue } from './lifecycle.js';
import { acquireLock, extendLock, releaseLock } from './locks.js';
import { deleteExpiredTasks, recoverExpiredLeases } from './maintenance.js';
import { Notifier } from './notifier.js';
import { BULK_BATCH, operateBatch, operateTask, type Action } from './operate.js';
import * as schedulers from './schedulers.js';
import * as schedules from './schedules.js';
import { HostClock } from './host-clock.js';
import { Transition } from './transition.js';
import { listTaskTypes, recordTaskTypes } from './task-types.js';
import { listWorkers, pruneWorkers, recordHeartbeat, removeWorker } from './workers.js';

export interface SqliteBackendOptions {
  /** Test only: ms added to the store's clock, to simulate a skewed clock. Default 0. */
  clockOffsetMs?: number;
  /**
   * `NORMAL`: a commit survives the crash or SIGKILL of any process, not an OS crash or power
   * loss; `FULL`: also those, with an fsync per commit. Default `NORMAL`.
   */
  synchronous?: Synchronous;
  /** ms a transaction waits inside SQLite for another process's write lock. Default 2000. */
  busyTimeoutMs?: number;
  /**
   * Commits of other processes are noticed through a watch on the WAL file (see notifier.ts);
   * this is the interval of the safety-net check in ms. Default 100 (5 where the file cannot be
   * watched: an in-memory database, or `watchFile: false`).
   */
  pollIntervalMs?: number;
  /** Watch the WAL file for commits of other processes. Default true. */
  watchFile?: boolean;
}

/** How often cleanup counts a queue's kept tasks afresh (the transitions keep the counts between). */
const KEPT_RECOUNT_MS = 60_000;

export class SqliteBackend implements SchedulingBackend {
  readonly kind = 'sqlite' as const;
  readonly remote = false;
  private readonly sql: StatementCache;
  private readonly notifier: Notifier;
  private readonly offset: number;
  private readonly hostClock = new HostClock();
  private readonly transaction: Database.Transaction<(work: () => unknown) => unknown>;
  /** Each queue's signal as of this backend's last claim from it or wait on it (see Notifier.waitForSignal). */
  private readonly seenSignals = new Map<string, number>();
  /** When cleanup last counted each queue's kept tasks afresh (store time). */
  private readonly keptRecountedAt = new Map<string, number>();
  private closed = false;
  /** One transaction for the enqueues of a tick (EnqueueGroups). */
  private readonly enqueues = new EnqueueGroups((tasks) => this.write((t) => enqueueTasks(t, tasks)));

  private constructor(private readonly db: Database.Database, options: SqliteBackendOptions) {
    this.offset = options.clockOffsetMs ?? 0;
    this.sql = new StatementCache(db);
    const walFile = options.watchFile === false || db.memory ? null : `${db.name}-wal`;
    this.notifier = new Notifier(this.sql, { walFile, intervalMs: options.pollIntervalMs ?? (walFile === null ? 5 : 100) });
    this.transaction = db.transaction((work: () => unknown) => work());
  }

  /** Opens (creating when missing) the database file at `path` and migrates its schema. */
  static async open(path: string, options: SqliteBackendOptions = {}): Promise<SqliteBackend> {
    const db = openDatabase(path, { busyTimeoutMs: options.busyTimeoutMs ?? 2000, synchronous: options.synchronous ?? 'NORMAL' });
    return new SqliteBackend(db, options);
  }

  /** The store's clock: the host kernel's (see host-clock.ts), plus a test offset. */
  private clock(): number {
    return this.hostClock.now() + this.offset;
  }

  private ensureOpen(): void {
    if (this.closed) throw new TasklineError('TL_CLOSED', 'the SQLite backend is closed');
  }

  /** Runs one state transition in one BEGIN IMMEDIATE transaction, then announces what it changed. */
  private async write<T>(work: (t: Transition) => T): Promise<T> {
    this.ensureOpen();
    const [result, t] = await retryBusy(() => {
      this.ensureOpen();
      return this.transaction.immediate(() => {
        const transition = new Transition(this.sql, this.clock());
        const value = work(transition);
        transition.flush();
        return [value, transition] as const;
      }) as readonly [T, Transition];
    });
    this.notifier.committed(t.woken, t.events);
    return result;
  }

  /** Runs reads in one deferred (read-only) transaction: a consistent snapshot. */
  private async read<T>(work: (now: number) => T): Promise<T> {
    this.ensureOpen();
    return retryBusy(() => {
      this.ensureOpen();
      return this.transaction.deferred(() => work(this.clock())) as T;
    });
  }

  async now(): Promise<number> {
    this.ensureOpen();
    return this.clock();
  }

  // ── producing ───────────────────────────────────────────────────────────────

  /** Enqueues of a tick go together, in one transaction (EnqueueGroups). */
  async enqueue(tasks: NewTask[]): Promise<EnqueueOutcome[]> {
    checkStorableTasks(tasks);
    return this.enqueues.enqueue(tasks);
  }

  // ── working ─────────────────────────────────────────────────────────────────

  async claim(workerId: string, requests: ClaimRequest[], leaseMs: number): Promise<ClaimResult[]> {
    return (await this.ackAndClaim([], workerId, requests, leaseMs)).claims;
  }

  async ack(acks: Ack[]): Promise<AckResult[]> {
    return (await this.ackAndClaim(acks, '', [], 0)).acks;
  }

  /** The acks, then the claim, in one transaction. */
  async ackAndClaim(acks: Ack[], workerId: string, requests: ClaimRequest[], leaseMs: number): Promise<AckAndClaimResult> {
    if (acks.length === 0 && requests.length === 0) return { acks: [], claims: [] };
    const { acked, claimed } = await this.write((t) => ({
      acked: acks.length > 0 ? ackAttempts(t, acks) : [],
      claimed: requests.length > 0 ? claimTasks(t, workerId, requests, leaseMs) : null,
    }));
    if (!claimed) return { acks: acked, claims: [] };
    for (const [queue, signal] of claimed.signals) this.seenSignals.set(queue, Math.max(signal, this.seenSignals.get(queue) ?? 0));
    return { acks: acked, claims: claimed.results };
  }

  async renewLeases(leases: LeaseRef[], leaseMs: number): Promise<RenewResult> {
    if (leases.length === 0) return { lost: [], cancelRequested: [] };
    return this.write((t) => renewLeases(t, leases, leaseMs));
  }

  async waitForWork(queues: string[], timeoutMs: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted || queues.length === 0) return;
    this.ensureOpen();
    await this.notifier.waitForSignal(queues, this.seenSignals, timeoutMs, signal);
  }

  async forwardDue(queue: string, limit: number): Promise<number> {
    return this.write((t) => forwardDue(t, queue, limit));
  }

  async recoverExpired(queue: string, limit: number): Promise<number> {
    return this.write((t) => recoverExpiredLeases(t, queue, limit));
  }

  async cleanup(queue: string, limit: number): Promise<number> {
    return this.write((t) => {
      // The keep counts are recounted at most once a minute per queue: the janitor calls again
      // at once while a call deletes a full batch.
      const recount = t.now - (this.keptRecountedAt.get(queue) ?? -Infinity) >= KEPT_RECOUNT_MS;
      const deleted = deleteExpiredTasks(t, queue, limit, recount);
      if (recount) this.keptRecountedAt.set(queue, t.now);
      return deleted;
    });
  }

  async reportProgress(lease: LeaseRef, update: { logs?: TaskLogLine[]; progress?: unknown }): Promise<AckResult> {
    return this.write((t) => reportProgress(t, lease, update));
  }

  // ── notifications ───────────────────────────────────────────────────────────

  async subscribe(listener: (event: BackendEvent) => void, options: SubscribeOptions = {}): Promise<Unsubscribe> {
    this.ensureOpen();
    const unsubscribe = this.notifier.subscribe(listener, options.lifecycle === true);
    return async () => unsubscribe();
  }

  // ── workers ─────────────────────────────────────────────────────────────────

  async heartbeat(info: WorkerInfo, ttlMs: number): Promise<void> {
    await this.write((t) => {
      recordHeartbeat(t, info, ttlMs);
      pruneWorkers(t);
    });
  }

  async removeWorker(id: string): Promise<void> {
    await this.write((t) => removeWorker(t, id));
  }

  async listWorkers(): Promise<WorkerInfo[]> {
    return this.read((now) => listWorkers(this.sql, now));
  }

  async recordTaskTypes(types: TaskTypeInfo[]): Promise<void> {
    if (types.length > 0) await this.write((t) => recordTaskTypes(t, types));
  }

  async listTaskTypes(): Promise<TaskTypeInfo[]> {
    return this.read(() => listTaskTypes(this.sql));
  }

  // ── operating ───────────────────────────────────────────────────────────────

  async pauseQueue(queue: string): Promise<void> {
    await this.write((t) => t.setPaused(queue, true));
  }

  async resumeQueue(queue: string): Promise<void> {
    await this.write((t) => {
      // Resuming a queue never used registers nothing (as on Redis).
      if (!t.get('SELECT 1 FROM queues WHERE name = ?', queue)) return;
      t.setPaused(queue, false);
      t.wake(queue);
    });
  }

  async setQueueKeep(queue: string, keep: Partial<QueueKeep>): Promise<QueueKeep> {
    validateQueueName(queue);
    const bounds = validateQueueKeep(keep);
    return this.write((t) => t.setKeepBounds(queue, bounds));
  }

  async cancelTask(id: string): Promise<'cancelled' | 'cancel-requested'> {
    return (await this.write((t) => operateTask(t, id, 'cancel'))) === 'requested' ? 'cancel-requested' : 'cancelled';
  }

  async runTask(id: string): Promise<void> {
    await this.write((t) => operateTask(t, id, 'run'));
  }

  async archiveTask(id: string): Promise<void> {
    await this.write((t) => operateTask(t, id, 'archive'));
  }

  async deleteTask(id: string): Promise<void> {
    await this.write((t) => operateTask(t, id, 'delete'));
  }

  /** In batches, one transaction each, so that other processes get the lock in between. */
  private async operateAll(queue: string, state: BulkState, action: Action): Promise<number> {
    let total = 0;
    for (;;) {
      const { done, seen } = await this.write((t) => operateBatch(t, queue, state, action));
      total += done;
      // Tasks that cannot take the action stay where they are: stop when a batch changed nothing.
      if (done === 0 || seen < BULK_BATCH) return total;
    }
  }

  runAll(queue: string, state: BulkState): Promise<number> {
    return this.operateAll(queue, state, 'run');
  }

  archiveAll(queue: string, state: BulkState): Promise<number> {
    return this.operateAll(queue, state, 'archive');
  }

  deleteAll(queue: string, state: BulkState): Promise<number> {
    return this.operateAll(queue, state, 'delete');
  }

  // ── inspecting ──────────────────────────────────────────────────────────────

  async listQueues(): Promise<QueueInfo[]> {
    return this.read((now) => inspect.listQueues(this.sql, now));
  }

  async getQueue(queue: string): Promise<QueueInfo | null> {
    return this.read((now) => inspect.getQueue(this.sql, queue, now));
  }

  async listTasks(queue: string, state: TaskState, page: { limit?: number; cursor?: string } = {}): Promise<TaskPage> {
    return this.read(() => inspect.listTasks(this.sql, queue, state, page));
  }

  async getTask(id: string): Promise<TaskRecord | null> {
    return this.read(() => inspect.getTask(this.sql, id));
  }

  async dailyStats(queue: string, days: number): Promise<DailyStat[]> {
    return this.read((now) => inspect.dailyStats(this.sql, queue, days, now));
  }

  async minuteStats(queue: string, minutes: number): Promise<MinuteStat[]> {
    return this.read((now) => inspect.minuteStats(this.sql, queue, minutes, now));
  }

  // ── schedules (schedules.ts, fires.ts) and locks (locks.ts) ─────────────────

  async createSchedule(definition: ScheduleDefinition): Promise<Schedule> {
    return this.write((t) => schedules.saveSchedule(t, 'create', definition));
  }

  async updateSchedule(definition: ScheduleDefinition): Promise<Schedule> {
    return this.write((t) => schedules.saveSchedule(t, 'update', definition));
  }

  async upsertSchedule(definition: ScheduleDefinition): Promise<Schedule> {
    return this.write((t) => schedules.saveSchedule(t, 'upsert', definition));
  }

  async deleteSchedule(id: string): Promise<boolean> {
    return this.write((t) => schedules.deleteSchedule(t, id));
  }

  async getSchedule(id: string): Promise<Schedule | null> {
    return this.read(() => schedules.getSchedule(this.sql, id));
  }

  async listSchedules(): Promise<Schedule[]> {
    return this.read(() => schedules.listSchedules(this.sql));
  }

  async listScheduleChanges(since: number): Promise<ScheduleChanges> {
    return this.read(() => schedules.listScheduleChanges(this.sql, since));
  }

  async pauseSchedule(id: string, options: { note?: string | null; until?: number | null } = {}): Promise<Schedule> {
    return this.write((t) => schedules.setSchedulePaused(t, id, true, options));
  }

  async resumeSchedule(id: string): Promise<Schedule> {
    return this.write((t) => schedules.setSchedulePaused(t, id, false));
  }

  async acquireLeadership(holder: string, ttlMs: number): Promise<number | null> {
    return this.write((t) => schedulers.acquireLeadership(t, holder, ttlMs));
  }

  async releaseLeadership(holder: string): Promise<void> {
    await this.write((t) => schedulers.releaseLeadership(t, holder));
  }

  async checkInScheduler(instance: SchedulerInstance, options: { leaseMs: number; bid: boolean }): Promise<SchedulerCheckIn> {
    return this.write((t) => schedulers.checkInScheduler(t, instance, options));
  }

  async leaveSchedulers(id: string): Promise<void> {
    await this.write((t) => schedulers.leaveSchedulers(t, id));
  }

  async listSchedulers(): Promise<SchedulerList> {
    return this.read((now) => schedulers.listSchedulers(new Transition(this.sql, now)));
  }

  /** All batches in one transaction: each fire is recorded and its task enqueued together. */
  async fire(batches: FireBatch[]): Promise<FireResult[][]> {
    if (batches.length === 0) return [];
    return this.write((t) => fireBatches(t, batches));
  }

  async advanceSchedules(holder: string, epoch: number, updates: ScheduleUpdate[], firedThrough?: number): Promise<boolean> {
    return this.write((t) => schedules.advanceSchedules(t, holder, epoch, updates, firedThrough));
  }

  async listFires(scheduleId: string, queue: string, limit: number): Promise<FireRecord[]> {
    return this.read(() => listFires(this.sql, scheduleId, queue, limit));
  }

  async acquireLock(key: string, owner: string, ttlMs: number): Promise<number | null> {
    validateLockKey(key);
    return this.write((t) => acquireLock(t, key, owner, ttlMs));
  }

  async extendLock(key: string, owner: string, token: number, ttlMs: number): Promise<boolean> {
    validateLockKey(key);
    return this.write((t) => extendLock(t, key, owner, token, ttlMs));
  }

  async releaseLock(key: string, owner: string, token: number): Promise<boolean> {
    validateLockKey(key);
    return this.write((t) => releaseLock(t, key, owner, token));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.hostClock.close();
    this.notifier.close();
    this.db.close();
  }
}
