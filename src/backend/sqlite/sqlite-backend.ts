/**
 * The embedded store: one SQLite file (WAL mode, via better-sqlite3), shared safely by several
 * processes on one host. Every state transition is one `BEGIN IMMEDIATE` transaction, with the
 * same semantics as the Redis backend's Lua scripts. This class only wires the modules:
 * - store.ts      the shared context: the database, the clock, write and read transactions
 * - database.ts   opening, pragmas, durability, busy handling;   schema.ts + migrations/  the schema
 * - transition.ts the bookkeeping of one write transaction;      lifecycle.ts  moves between states
 * - enqueue.ts, claim.ts, ack.ts, leases.ts, progress.ts, maintenance.ts, operate.ts   the transitions
 * - groups.ts     task groups: their lines, their turns in the claim, groupConcurrency
 * - inspect.ts, rows.ts, workers.ts, task-types.ts               reading; the worker registry and task types
 * - search.ts     searching tasks across queues and states;    audit.ts  the audit log
 * - schedules.ts, fires.ts, schedulers.ts, locks.ts              schedules, their fires, the scheduler instances
 *                                                                and leader lease; locks
 * - notifier.ts   waking waiting workers and subscribers, across processes; host-clock.ts  the clock
 */
import { validateQueueName } from '../../core/options.js';
import type { OperatorAction } from '../../core/transitions.js';
import type { NewTask, TaskLogLine, TaskRecord, TaskState } from '../../core/task.js';
import type { Schedule, ScheduleDefinition } from '../../core/schedule.js';
import type {
  Ack, AckAndClaimResult, AckResult, BackendEvent, BulkState, ClaimRequest, ClaimResult, DailyStat, EnqueueOutcome, LeaseRef, MinuteStat,
  QueueInfo, QueueKeep, QueueLimits, QueueLimitsUpdate, RenewResult, TaskPage, TaskFilter, SearchPageOptions, TaskSearchPage, AuditEntry, AuditPage, Unsubscribe, WorkerInfo, TaskTypeInfo, SubscribeOptions,
  NewWorkflow, WorkflowInputs, WorkflowPage, WorkflowRecord, WorkflowState,
  FireBatch, FireRecord, FireResult, ScheduleUpdate, SchedulingBackend, SchedulerCheckIn, SchedulerInstance, SchedulerList, ScheduleChanges,
} from '../contract.js';
import { EnqueueGroups } from '../enqueue-groups.js';
import { checkGroup, checkStorableTasks, validateLockKey, validateQueueKeep, validateQueueLimits } from '../shared.js';
import { ackAttempts } from './ack.js';
import * as audit from './audit.js';
import { renewLeases } from './leases.js';
import { reportProgress } from './progress.js';
import { claimTasks } from './claim.js';
import { enqueueCalls } from './enqueue.js';
import { fireBatches, listFires } from './fires.js';
import * as inspect from './inspect.js';
import { unparkAll } from './groups.js';
import { forwardDue } from './lifecycle.js';
import { acquireLock, extendLock, releaseLock } from './locks.js';
import { deleteExpiredTasks, recoverExpiredLeases } from './maintenance.js';
import { BULK_BATCH, operateBatch, operateTask } from './operate.js';
import * as schedulers from './schedulers.js';
import * as schedules from './schedules.js';
import { searchTasks } from './search.js';
import { SqliteStore, type SqliteBackendOptions } from './store.js';
import { Transition } from './transition.js';
import { listTaskTypes, recordTaskTypes } from './task-types.js';
import { listWorkers, pruneWorkers, recordHeartbeat, removeWorker } from './workers.js';
import * as workflows from './workflows.js';
import * as workflowReads from './workflow-reads.js';

export type { SqliteBackendOptions } from './store.js';

/** How often cleanup counts a queue's kept tasks afresh (the transitions keep the counts between). */
const KEPT_RECOUNT_MS = 60_000;

export class SqliteBackend implements SchedulingBackend {
  readonly kind = 'sqlite' as const;
  readonly remote = false;
  /** Each queue's signal as of this backend's last claim from it or wait on it (see Notifier.waitForSignal). */
  private readonly seenSignals = new Map<string, number>();
  /** When cleanup last counted each queue's kept tasks afresh (store time). */
  private readonly keptRecountedAt = new Map<string, number>();
  /** One transaction for the enqueues of a tick (EnqueueGroups). */
  private readonly enqueues = new EnqueueGroups((tasks, sizes) => this.store.write((t) => enqueueCalls(t, tasks, sizes)));

  private constructor(private readonly store: SqliteStore) {}

  /** Opens (creating when missing) the database file at `path` and migrates its schema. */
  static async open(path: string, options: SqliteBackendOptions = {}): Promise<SqliteBackend> {
    return new SqliteBackend(SqliteStore.open(path, options));
  }

  async now(): Promise<number> {
    this.store.ensureOpen();
    return this.store.clock();
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
    const { acked, claimed } = await this.store.write((t) => ({
      acked: acks.length > 0 ? ackAttempts(t, acks) : [],
      claimed: requests.length > 0 ? claimTasks(t, workerId, requests, leaseMs) : null,
    }));
    if (!claimed) return { acks: acked, claims: [] };
    for (const [queue, signal] of claimed.signals) this.seenSignals.set(queue, Math.max(signal, this.seenSignals.get(queue) ?? 0));
    return { acks: acked, claims: claimed.results };
  }

  async renewLeases(leases: LeaseRef[], leaseMs: number): Promise<RenewResult> {
    if (leases.length === 0) return { lost: [], cancelRequested: [] };
    return this.store.write((t) => renewLeases(t, leases, leaseMs));
  }

  async waitForWork(queues: string[], timeoutMs: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted || queues.length === 0) return;
    this.store.ensureOpen();
    await this.store.notifier.waitForSignal(queues, this.seenSignals, timeoutMs, signal);
  }

  async forwardDue(queue: string, limit: number): Promise<number> {
    return this.store.write((t) => forwardDue(t, queue, limit));
  }

  async recoverExpired(queue: string, limit: number): Promise<number> {
    return this.store.write((t) => recoverExpiredLeases(t, queue, limit));
  }

  async cleanup(queue: string, limit: number): Promise<number> {
    return this.store.write((t) => {
      // The keep counts are recounted at most once a minute per queue: the janitor calls again
      // at once while a call deletes a full batch.
      const recount = t.now - (this.keptRecountedAt.get(queue) ?? -Infinity) >= KEPT_RECOUNT_MS;
      const deleted = deleteExpiredTasks(t, queue, limit, recount);
      if (recount) this.keptRecountedAt.set(queue, t.now);
      return deleted;
    });
  }

  async reportProgress(lease: LeaseRef, update: { logs?: TaskLogLine[]; progress?: unknown }): Promise<AckResult> {
    return this.store.write((t) => reportProgress(t, lease, update));
  }

  // ── notifications ───────────────────────────────────────────────────────────

  async subscribe(listener: (event: BackendEvent) => void, options: SubscribeOptions = {}): Promise<Unsubscribe> {
    this.store.ensureOpen();
    const unsubscribe = this.store.notifier.subscribe(listener, options.lifecycle === true);
    return async () => unsubscribe();
  }

  // ── workers ─────────────────────────────────────────────────────────────────

  async heartbeat(info: WorkerInfo, ttlMs: number): Promise<void> {
    await this.store.write((t) => {
      recordHeartbeat(t, info, ttlMs);
      pruneWorkers(t);
    });
  }

  async removeWorker(id: string): Promise<void> {
    await this.store.write((t) => removeWorker(t, id));
  }

  async listWorkers(): Promise<WorkerInfo[]> {
    return this.store.read((now) => listWorkers(this.store.sql, now));
  }

  async recordTaskTypes(types: TaskTypeInfo[]): Promise<void> {
    if (types.length > 0) await this.store.write((t) => recordTaskTypes(t, types));
  }

  async listTaskTypes(): Promise<TaskTypeInfo[]> {
    return this.store.read(() => listTaskTypes(this.store.sql));
  }

  // ── operating ───────────────────────────────────────────────────────────────

  async pauseQueue(queue: string): Promise<void> {
    await this.store.write((t) => t.setPaused(queue, true));
  }

  async resumeQueue(queue: string): Promise<void> {
    await this.store.write((t) => {
      // Resuming a queue never used registers nothing (as on Redis).
      if (!t.get('SELECT 1 FROM queues WHERE name = ?', queue)) return;
      t.setPaused(queue, false);
      t.wake(queue);
    });
  }

  async setQueueKeep(queue: string, keep: Partial<QueueKeep>): Promise<QueueKeep> {
    validateQueueName(queue);
    const bounds = validateQueueKeep(keep);
    return this.store.write((t) => t.setKeepBounds(queue, bounds));
  }

  async setQueueLimits(queue: string, limits: QueueLimitsUpdate): Promise<QueueLimits> {
    validateQueueName(queue);
    const changes = validateQueueLimits(limits);
    return this.store.write((t) => {
      const set = t.setLimits(queue, changes);
      // Groups parked under the old groupConcurrency are judged against the new one (groups.ts).
      if ('groupConcurrency' in changes) unparkAll(t, queue);
      return set;
    });
  }

  async cancelTask(id: string): Promise<'cancelled' | 'cancel-requested'> {
    return (await this.store.write((t) => operateTask(t, id, 'cancel'))) === 'requested' ? 'cancel-requested' : 'cancelled';
  }

  async runTask(id: string): Promise<void> {
    await this.store.write((t) => operateTask(t, id, 'run'));
  }

  async archiveTask(id: string): Promise<void> {
    await this.store.write((t) => operateTask(t, id, 'archive'));
  }

  async deleteTask(id: string): Promise<void> {
    await this.store.write((t) => operateTask(t, id, 'delete'));
  }

  /** In batches, one transaction each, so that other processes get the lock in between. */
  private async operateAll(queue: string, state: BulkState, action: OperatorAction): Promise<number> {
    let total = 0;
    for (;;) {
      const { done, seen } = await this.store.write((t) => operateBatch(t, queue, state, action));
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

  // ── workflows (workflows.ts: the transitions; workflow-reads.ts) ───────────

  async createWorkflow(workflow: NewWorkflow): Promise<{ id: string; state: WorkflowState }> {
    for (const node of workflow.nodes) checkGroup(node.taskId, node.task.group);
    if (workflow.onFinish) checkGroup(workflow.onFinish.taskId, workflow.onFinish.task.group);
    await this.store.write((t) => workflows.createWorkflow(t, workflow));
    return { id: workflow.id, state: 'running' };
  }

  async getWorkflow(id: string): Promise<WorkflowRecord | null> {
    return this.store.read(() => workflowReads.getWorkflow(this.store.sql, id));
  }

  async listWorkflows(options: { state?: WorkflowState; limit?: number; cursor?: string } = {}): Promise<WorkflowPage> {
    return this.store.read(() => workflowReads.listWorkflows(this.store.sql, options));
  }

  async cancelWorkflow(id: string): Promise<WorkflowRecord | null> {
    return (await this.store.write((t) => workflows.cancelWorkflow(t, id))) ? this.getWorkflow(id) : null;
  }

  async retryWorkflow(id: string, onFinishTaskId: string | null): Promise<WorkflowRecord | null> {
    return (await this.store.write((t) => workflows.retryWorkflow(t, id, onFinishTaskId))) ? this.getWorkflow(id) : null;
  }

  async workflowInputs(nodes: Array<{ workflowId: string; node: string }>): Promise<Array<WorkflowInputs | null>> {
    return nodes.length === 0 ? [] : this.store.read(() => workflowReads.workflowInputs(this.store.sql, nodes));
  }

  async cleanupWorkflows(limit: number): Promise<number> {
    return this.store.write((t) => workflows.deleteExpiredWorkflows(t, limit));
  }

  // ── inspecting ──────────────────────────────────────────────────────────────

  async listQueues(): Promise<QueueInfo[]> {
    return this.store.read((now) => inspect.listQueues(this.store.sql, now));
  }

  async getQueue(queue: string): Promise<QueueInfo | null> {
    return this.store.read((now) => inspect.getQueue(this.store.sql, queue, now));
  }

  async listTasks(queue: string, state: TaskState, page: { limit?: number; cursor?: string } = {}): Promise<TaskPage> {
    return this.store.read(() => inspect.listTasks(this.store.sql, queue, state, page));
  }

  async getTask(id: string): Promise<TaskRecord | null> {
    return this.store.read(() => inspect.getTask(this.store.sql, id));
  }

  async searchTasks(filter: TaskFilter, page?: SearchPageOptions): Promise<TaskSearchPage> {
    return this.store.read(() => searchTasks(this.store.sql, filter, page));
  }

  async dailyStats(queue: string, days: number): Promise<DailyStat[]> {
    return this.store.read((now) => inspect.dailyStats(this.store.sql, queue, days, now));
  }

  async minuteStats(queue: string, minutes: number): Promise<MinuteStat[]> {
    return this.store.read((now) => inspect.minuteStats(this.store.sql, queue, minutes, now));
  }

  // ── schedules (schedules.ts, fires.ts) and locks (locks.ts) ─────────────────

  async createSchedule(definition: ScheduleDefinition): Promise<Schedule> {
    return this.store.write((t) => schedules.saveSchedule(t, 'create', definition));
  }

  async updateSchedule(definition: ScheduleDefinition): Promise<Schedule> {
    return this.store.write((t) => schedules.saveSchedule(t, 'update', definition));
  }

  async upsertSchedule(definition: ScheduleDefinition): Promise<Schedule> {
    return this.store.write((t) => schedules.saveSchedule(t, 'upsert', definition));
  }

  async deleteSchedule(id: string): Promise<boolean> {
    return this.store.write((t) => schedules.deleteSchedule(t, id));
  }

  async getSchedule(id: string): Promise<Schedule | null> {
    return this.store.read(() => schedules.getSchedule(this.store.sql, id));
  }

  async listSchedules(): Promise<Schedule[]> {
    return this.store.read(() => schedules.listSchedules(this.store.sql));
  }

  async listScheduleChanges(since: number): Promise<ScheduleChanges> {
    return this.store.read(() => schedules.listScheduleChanges(this.store.sql, since));
  }

  async pauseSchedule(id: string, options: { note?: string | null; until?: number | null } = {}): Promise<Schedule> {
    return this.store.write((t) => schedules.setSchedulePaused(t, id, true, options));
  }

  async resumeSchedule(id: string): Promise<Schedule> {
    return this.store.write((t) => schedules.setSchedulePaused(t, id, false));
  }

  async acquireLeadership(holder: string, ttlMs: number): Promise<number | null> {
    return this.store.write((t) => schedulers.acquireLeadership(t, holder, ttlMs));
  }

  async releaseLeadership(holder: string): Promise<void> {
    await this.store.write((t) => schedulers.releaseLeadership(t, holder));
  }

  async checkInScheduler(instance: SchedulerInstance, options: { leaseMs: number; bid: boolean }): Promise<SchedulerCheckIn> {
    return this.store.write((t) => schedulers.checkInScheduler(t, instance, options));
  }

  async leaveSchedulers(id: string): Promise<void> {
    await this.store.write((t) => schedulers.leaveSchedulers(t, id));
  }

  async listSchedulers(): Promise<SchedulerList> {
    return this.store.read((now) => schedulers.listSchedulers(new Transition(this.store.sql, now)));
  }

  /** All batches in one transaction: each fire is recorded and its task enqueued together. */
  async fire(batches: FireBatch[]): Promise<FireResult[][]> {
    if (batches.length === 0) return [];
    return this.store.write((t) => fireBatches(t, batches));
  }

  async advanceSchedules(holder: string, epoch: number, updates: ScheduleUpdate[], firedThrough?: number): Promise<boolean> {
    return this.store.write((t) => schedules.advanceSchedules(t, holder, epoch, updates, firedThrough));
  }

  async listFires(scheduleId: string, queue: string, limit: number): Promise<FireRecord[]> {
    return this.store.read(() => listFires(this.store.sql, scheduleId, queue, limit));
  }

  async acquireLock(key: string, owner: string, ttlMs: number): Promise<number | null> {
    validateLockKey(key);
    return this.store.write((t) => acquireLock(t, key, owner, ttlMs));
  }

  async extendLock(key: string, owner: string, token: number, ttlMs: number): Promise<boolean> {
    validateLockKey(key);
    return this.store.write((t) => extendLock(t, key, owner, token, ttlMs));
  }

  async releaseLock(key: string, owner: string, token: number): Promise<boolean> {
    validateLockKey(key);
    return this.store.write((t) => releaseLock(t, key, owner, token));
  }

  // ── audit log (audit.ts) ────────────────────────────────────────────────────

  async recordAudit(entry: AuditEntry, keep?: number): Promise<void> {
    return this.store.write((t) => audit.recordAudit(t, entry, keep));
  }

  async listAudit(page?: { limit?: number; cursor?: string }): Promise<AuditPage> {
    return this.store.read(() => audit.listAudit(this.store.sql, page));
  }

  async close(): Promise<void> {
    this.store.close();
  }
}
