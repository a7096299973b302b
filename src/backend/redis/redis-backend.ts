/**
 * The Redis store: every state transition is one Lua script (lua/), run through one shared
 * context (connection.ts). This class only wires the modules:
 * - enqueue.ts    storing new tasks;                  ack-claim.ts  a worker's acks and claims
 * - leases.ts, progress.ts   lease renewal, a running task's logs and progress
 * - wait.ts       blocking waits for work;            events.ts     pub/sub notifications
 * - maintenance.ts  forwarding, lease recovery, cleanup
 * - operate.ts    an operator's actions;              inspect.ts    reading queues and tasks
 * - search.ts     searching tasks across queues and states; audit.ts  the audit log
 * - workers.ts    the worker registry and task types; schedule-store.ts  schedules, fires, schedulers, locks
 * - keys.ts, codec.ts, scripts.ts, batches.ts   key names, record encoding, the script loader, batching
 */
import type { NewTask, TaskLogLine, TaskRecord, TaskState } from '../../core/task.js';
import type { Schedule, ScheduleDefinition } from '../../core/schedule.js';
import type {
  Ack, AckAndClaimResult, AckResult, BackendEvent, BulkState, ClaimRequest, ClaimResult, DailyStat, EnqueueOutcome, LeaseRef, MinuteStat,
  QueueInfo, QueueKeep, QueueLimits, QueueLimitsUpdate, RenewResult, TaskPage, TaskFilter, SearchPageOptions, TaskSearchPage, AuditEntry, AuditPage, Unsubscribe, WorkerInfo, TaskTypeInfo, SchedulingBackend, SubscribeOptions, FireBatch,
  FireRecord, FireResult, ScheduleUpdate, SchedulerCheckIn, SchedulerInstance, SchedulerList, ScheduleChanges,
  NewWorkflow, WorkflowInputs, WorkflowPage, WorkflowRecord, WorkflowState,
} from '../contract.js';
import { EnqueueGroups } from '../enqueue-groups.js';
import { checkGroup, checkStorableTasks } from '../shared.js';
import { ackAndClaim } from './ack-claim.js';
import * as audit from './audit.js';
import { quit, RedisConnection, type RedisBackendOptions } from './connection.js';
import { enqueueTasks } from './enqueue.js';
import { RedisEvents } from './events.js';
import * as inspect from './inspect.js';
import type { RedisKeys } from './keys.js';
import { renewLeases } from './leases.js';
import { cleanup, forwardDue, recoverExpired } from './maintenance.js';
import * as operate from './operate.js';
import { reportProgress } from './progress.js';
import { RedisScheduleStore } from './schedule-store.js';
import { searchTasks } from './search.js';
import { WorkWaiter } from './wait.js';
import * as workers from './workers.js';
import * as workflows from './workflows.js';

export type { RedisBackendOptions } from './connection.js';

export class RedisBackend implements SchedulingBackend {
  readonly kind = 'redis' as const;
  readonly remote = true;
  readonly keys: RedisKeys;
  private readonly events: RedisEvents;
  private readonly waiter: WorkWaiter;
  private readonly scheduling: RedisScheduleStore;
  /** Enqueues of a tick go together: one script call per queue. */
  private readonly enqueues = new EnqueueGroups((tasks, sizes) => enqueueTasks(this.c, tasks, sizes));
  /** Workflows created in the same tick: one script call (bounded by their nodes), as for enqueues. */
  private readonly workflowCreates = new EnqueueGroups<workflows.PreparedWorkflow, string>(
    (prepared) => workflows.storeWorkflows(this.c, prepared), 10_000, (p) => p.workflow.nodes.length,
  );

  private constructor(private readonly c: RedisConnection) {
    this.keys = c.keys;
    this.events = new RedisEvents(c);
    this.waiter = new WorkWaiter(c);
    this.scheduling = new RedisScheduleStore(c);
  }

  /** Connects and checks that Redis answers; throws TL_STORE_UNAVAILABLE when it does not. */
  static async connect(url: string, options: RedisBackendOptions = {}): Promise<RedisBackend> {
    return new RedisBackend(await RedisConnection.connect(url, options));
  }

  now(): Promise<number> {
    return this.c.now();
  }

  // ── producing and working ───────────────────────────────────────────────────

  async enqueue(tasks: NewTask[]): Promise<EnqueueOutcome[]> {
    // Before grouping: one caller's bad task must not fail the others of its group.
    checkStorableTasks(tasks);
    return this.enqueues.enqueue(tasks);
  }

  async claim(workerId: string, requests: ClaimRequest[], leaseMs: number): Promise<ClaimResult[]> {
    return (await ackAndClaim(this.c, [], workerId, requests, leaseMs)).claims;
  }

  async ack(acks: Ack[]): Promise<AckResult[]> {
    return (await ackAndClaim(this.c, acks, '', [], 0)).acks;
  }

  ackAndClaim(acks: Ack[], workerId: string, requests: ClaimRequest[], leaseMs: number): Promise<AckAndClaimResult> {
    return ackAndClaim(this.c, acks, workerId, requests, leaseMs);
  }

  renewLeases(leases: LeaseRef[], leaseMs: number): Promise<RenewResult> {
    return renewLeases(this.c, leases, leaseMs);
  }

  reportProgress(lease: LeaseRef, update: { logs?: TaskLogLine[]; progress?: unknown }): Promise<AckResult> {
    return reportProgress(this.c, lease, update);
  }

  waitForWork(queues: string[], timeoutMs: number, signal: AbortSignal, exact = false): Promise<void> {
    return this.waiter.waitForWork(queues, timeoutMs, signal, exact);
  }

  forwardDue(queue: string, limit: number): Promise<number> {
    return forwardDue(this.c, queue, limit);
  }

  recoverExpired(queue: string, limit: number): Promise<number> {
    return recoverExpired(this.c, queue, limit);
  }

  cleanup(queue: string, limit: number): Promise<number> {
    return cleanup(this.c, queue, limit);
  }

  subscribe(listener: (event: BackendEvent) => void, options?: SubscribeOptions): Promise<Unsubscribe> {
    return this.events.subscribe(listener, options);
  }

  // ── workers ─────────────────────────────────────────────────────────────────

  heartbeat(info: WorkerInfo, ttlMs: number): Promise<void> {
    return workers.heartbeat(this.c, info, ttlMs);
  }

  removeWorker(id: string): Promise<void> {
    return workers.removeWorker(this.c, id);
  }

  listWorkers(): Promise<WorkerInfo[]> {
    return workers.listWorkers(this.c);
  }

  recordTaskTypes(types: TaskTypeInfo[]): Promise<void> {
    return workers.recordTaskTypes(this.c, types);
  }

  listTaskTypes(): Promise<TaskTypeInfo[]> {
    return workers.listTaskTypes(this.c);
  }

  // ── operating ───────────────────────────────────────────────────────────────

  pauseQueue(queue: string): Promise<void> {
    return operate.pauseQueue(this.c, queue);
  }

  resumeQueue(queue: string): Promise<void> {
    return operate.resumeQueue(this.c, queue);
  }

  setQueueKeep(queue: string, keep: Partial<QueueKeep>): Promise<QueueKeep> {
    return operate.setQueueKeep(this.c, queue, keep);
  }

  setQueueLimits(queue: string, limits: QueueLimitsUpdate): Promise<QueueLimits> {
    return operate.setQueueLimits(this.c, queue, limits);
  }

  async cancelTask(id: string): Promise<'cancelled' | 'cancel-requested'> {
    return (await operate.operateTask(this.c, id, 'cancel')) === 'requested' ? 'cancel-requested' : 'cancelled';
  }

  async runTask(id: string): Promise<void> {
    await operate.operateTask(this.c, id, 'run');
  }

  async archiveTask(id: string): Promise<void> {
    await operate.operateTask(this.c, id, 'archive');
  }

  async deleteTask(id: string): Promise<void> {
    await operate.operateTask(this.c, id, 'delete');
  }

  runAll(queue: string, state: BulkState): Promise<number> {
    return operate.operateAll(this.c, queue, state, 'run');
  }

  archiveAll(queue: string, state: BulkState): Promise<number> {
    return operate.operateAll(this.c, queue, state, 'archive');
  }

  deleteAll(queue: string, state: BulkState): Promise<number> {
    return operate.operateAll(this.c, queue, state, 'delete');
  }

  // ── inspecting ──────────────────────────────────────────────────────────────

  // ── workflows (workflows.ts) ────────────────────────────────────────────────

  async createWorkflow(workflow: NewWorkflow): Promise<{ id: string; state: WorkflowState }> {
    for (const node of workflow.nodes) checkGroup(node.taskId, node.task.group);
    if (workflow.onFinish) checkGroup(workflow.onFinish.taskId, workflow.onFinish.task.group);
    const prepared = workflows.prepareWorkflow(workflow);
    await workflows.refuseTakenIds(this.c, workflow);
    const [reply] = await this.workflowCreates.enqueue([prepared]);
    return workflows.created(workflow, reply);
  }

  getWorkflow(id: string): Promise<WorkflowRecord | null> {
    return workflows.getWorkflow(this.c, id);
  }

  listWorkflows(options: { state?: WorkflowState; limit?: number; cursor?: string } = {}): Promise<WorkflowPage> {
    return workflows.listWorkflows(this.c, options);
  }

  cancelWorkflow(id: string): Promise<WorkflowRecord | null> {
    return workflows.cancelWorkflow(this.c, id);
  }

  retryWorkflow(id: string, onFinishTaskId: string | null): Promise<WorkflowRecord | null> {
    return workflows.retryWorkflow(this.c, id, onFinishTaskId);
  }

  workflowInputs(nodes: Array<{ workflowId: string; node: string }>): Promise<Array<WorkflowInputs | null>> {
    return workflows.workflowInputs(this.c, nodes);
  }

  cleanupWorkflows(limit: number): Promise<number> {
    return workflows.cleanupWorkflows(this.c, limit);
  }

  listQueues(): Promise<QueueInfo[]> {
    return inspect.listQueues(this.c);
  }

  getQueue(queue: string): Promise<QueueInfo | null> {
    return inspect.getQueue(this.c, queue);
  }

  listTasks(queue: string, state: TaskState, page?: { limit?: number; cursor?: string }): Promise<TaskPage> {
    return inspect.listTasks(this.c, queue, state, page);
  }

  getTask(id: string): Promise<TaskRecord | null> {
    return inspect.getTask(this.c, id);
  }

  searchTasks(filter: TaskFilter, page?: SearchPageOptions): Promise<TaskSearchPage> {
    return searchTasks(this.c, filter, page);
  }

  dailyStats(queue: string, days: number): Promise<DailyStat[]> {
    return inspect.dailyStats(this.c, queue, days);
  }

  minuteStats(queue: string, minutes: number): Promise<MinuteStat[]> {
    return inspect.minuteStats(this.c, queue, minutes);
  }

  // ── schedules and locks (schedule-store.ts) ─────────────────────────────────

  createSchedule(definition: ScheduleDefinition): Promise<Schedule> {
    return this.scheduling.createSchedule(definition);
  }

  updateSchedule(definition: ScheduleDefinition): Promise<Schedule> {
    return this.scheduling.updateSchedule(definition);
  }

  upsertSchedule(definition: ScheduleDefinition): Promise<Schedule> {
    return this.scheduling.upsertSchedule(definition);
  }

  deleteSchedule(id: string): Promise<boolean> {
    return this.scheduling.deleteSchedule(id);
  }

  getSchedule(id: string): Promise<Schedule | null> {
    return this.scheduling.getSchedule(id);
  }

  listSchedules(): Promise<Schedule[]> {
    return this.scheduling.listSchedules();
  }

  listScheduleChanges(since: number): Promise<ScheduleChanges> {
    return this.scheduling.listScheduleChanges(since);
  }

  pauseSchedule(id: string, options?: { note?: string | null; until?: number | null }): Promise<Schedule> {
    return this.scheduling.pauseSchedule(id, options);
  }

  resumeSchedule(id: string): Promise<Schedule> {
    return this.scheduling.resumeSchedule(id);
  }

  acquireLeadership(holder: string, ttlMs: number): Promise<number | null> {
    return this.scheduling.acquireLeadership(holder, ttlMs);
  }

  releaseLeadership(holder: string): Promise<void> {
    return this.scheduling.releaseLeadership(holder);
  }

  checkInScheduler(instance: SchedulerInstance, options: { leaseMs: number; bid: boolean }): Promise<SchedulerCheckIn> {
    return this.scheduling.checkInScheduler(instance, options);
  }

  leaveSchedulers(id: string): Promise<void> {
    return this.scheduling.leaveSchedulers(id);
  }

  listSchedulers(): Promise<SchedulerList> {
    return this.scheduling.listSchedulers();
  }

  fire(batches: FireBatch[]): Promise<FireResult[][]> {
    return this.scheduling.fire(batches);
  }

  advanceSchedules(holder: string, epoch: number, updates: ScheduleUpdate[], firedThrough?: number): Promise<boolean> {
    return this.scheduling.advanceSchedules(holder, epoch, updates, firedThrough);
  }

  listFires(scheduleId: string, queue: string, limit: number): Promise<FireRecord[]> {
    return this.scheduling.listFires(scheduleId, queue, limit);
  }

  acquireLock(key: string, owner: string, ttlMs: number): Promise<number | null> {
    return this.scheduling.acquireLock(key, owner, ttlMs);
  }

  extendLock(key: string, owner: string, token: number, ttlMs: number): Promise<boolean> {
    return this.scheduling.extendLock(key, owner, token, ttlMs);
  }

  releaseLock(key: string, owner: string, token: number): Promise<boolean> {
    return this.scheduling.releaseLock(key, owner, token);
  }

  recordAudit(entry: AuditEntry, keep?: number): Promise<void> {
    return audit.recordAudit(this.c, entry, keep);
  }

  listAudit(page?: { limit?: number; cursor?: string }): Promise<AuditPage> {
    return audit.listAudit(this.c, page);
  }

  async close(): Promise<void> {
    if (!this.c.markClosed()) return;
    // Not QUIT on the blocking connection: it would wait out its BZPOPMIN.
    this.waiter.close();
    await Promise.all([this.events.close(), quit(this.c.redis)]);
  }
}
