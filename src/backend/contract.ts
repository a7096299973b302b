/**
 * The backend contract: every operation the core needs from a store. Core code (client, worker,
 * scheduler, server) talks only to this interface. Each state transition is atomic inside the
 * backend (one Lua script on Redis, one `BEGIN IMMEDIATE` transaction on SQLite).
 *
 * Every backend passes the same conformance suite (`conformance/`), run against a real store.
 */
import type { AttemptRecord, NewTask, TaskInfo, TaskLinks, TaskLogLine, TaskRecord, TaskState, BackoffSpec } from '../core/task.js';
import type { TaskFilter } from '../core/task-query.js';
import type { AuditEntry, AuditPage } from './audit-contract.js';
import type { LockStore, ScheduleStore } from './schedule-contract.js';
import type { SearchPageOptions, TaskSearchPage } from './search-contract.js';
import type { WorkflowInputs, WorkflowState, WorkflowStore } from './workflow-contract.js';
import type { QueueLimits, QueueLimitsUpdate } from './limits-contract.js';

export * from './schedule-contract.js';
export * from './search-contract.js';
export * from './audit-contract.js';
export * from './workflow-contract.js';
export * from './limits-contract.js';

/** Default retention of finished tasks. */
export const DEFAULT_RETENTION = {
  completed: 24 * 3_600_000,
  dead: 30 * 24 * 3_600_000,
  cancelled: 30 * 24 * 3_600_000,
} as const;

/** The final states whose tasks a queue may keep a bounded number of. */
export const KEPT_STATES = ['completed', 'dead', 'cancelled'] as const;
export type KeptState = (typeof KEPT_STATES)[number];

/**
 * How many finished tasks of each final state a queue keeps at most (bounded counts
 * per queue); null: no bound, only retention. Past a bound, the tasks whose retention ends first
 * (with one retention for all: the oldest) are deleted as others finish; 0 deletes a task as
 * soon as it finishes. Retention still applies within the bound.
 */
export type QueueKeep = Record<KeptState, number | null>;

/** Largest bound accepted (a bound is a count of tasks kept, not a time). */
export const MAX_KEEP = 1_000_000_000;

/** The outcome of storing one task of an enqueue batch. */
export type EnqueueOutcome =
  | { ok: true; info: TaskInfo }
  | { ok: false; id: string; reason: 'id-conflict' | 'unique-conflict'; holder?: string }
  /** The queue's maxLength refused the task's batch; `limit` is the bound, `waiting` the tasks waiting then. */
  | { ok: false; id: string; reason: 'queue-full'; queue: string; limit: number; waiting: number };

export interface ClaimRequest {
  queue: string;
  /** How many tasks at most. */
  count: number;
}

/** A task handed to a worker, with the lease it holds. */
export interface ClaimedTask {
  id: string;
  type: string;
  queue: string;
  /** The payload as stored (JSON text). */
  payload: string;
  /** The attempt this run is (1 for the first). */
  attempt: number;
  maxRetries: number;
  timeout: number;
  deadline: number | null;
  createdAt: number;
  startedAt: number;
  headers: Record<string, string>;
  links: TaskLinks;
  backoff: BackoffSpec | null;
  /** The task's group in its queue, when it has one. */
  group?: string;
  /** The lease token every write back must carry. */
  token: string;
  leaseExpiresAt: number;
  /**
   * A workflow node's parents' outcomes, when the store hands them over with the claim (else the
   * worker reads them with workflowInputs).
   */
  inputs?: WorkflowInputs;
}

export interface AckAndClaimResult {
  acks: AckResult[];
  claims: ClaimResult[];
}

export interface ClaimResult {
  queue: string;
  tasks: ClaimedTask[];
  paused: boolean;
  /** Tasks were left queued after this claim. */
  more: boolean;
  /** When the earliest scheduled or retrying task of the queue is due, or null. */
  nextDueAt: number | null;
  /**
   * Why the claim took fewer tasks than it could have, when a limit held it back: 'rate',
   * 'concurrency' or 'group' (a slot frees when one of the queue's — or the full group's —
   * running tasks ends; the store wakes waiting workers then). Null: none.
   */
  limited: 'rate' | 'concurrency' | 'group' | null;
  /**
   * When the limit may let a task start, at the latest without an ack: a rate's next allowed
   * start; for 'concurrency' the expiry of the queue's earliest live lease, for 'group' that of
   * the first full group's (an expired lease frees its slot at once, also a crashed worker's,
   * which no ack frees). Null: not known, or no limit held the claim back.
   */
  limitedUntil: number | null;
  /** The store's clock at the claim. */
  now: number;
}

interface AckBase {
  id: string;
  queue: string;
  token: string;
  /** The record of the attempt that just ended. */
  attempt: AttemptRecord;
}

/** What a worker reports when an attempt ends. */
export type Ack =
  | (AckBase & { kind: 'complete'; result: string })
  /** Back to `retrying`, due after `delay` ms. `consumed: false` gives the attempt back (isFailure said no). */
  | (AckBase & { kind: 'retry'; error: string; delay: number; consumed: boolean })
  | (AckBase & { kind: 'dead'; error: string })
  | (AckBase & { kind: 'cancelled'; error: string })
  /** Graceful shutdown: back to `queued`, the attempt is not counted. */
  | (AckBase & { kind: 'requeue' })
  /**
   * No handler for the type in this worker: back to `retrying`, due after `delay`
   * ms, for a worker that has one; the attempt, its records, the last error and the queue's
   * counts stay as they were before the claim (`attempt` is not stored).
   */
  | (AckBase & { kind: 'hand-back'; delay: number });

/** `stale`: the lease token no longer matches (the task was recovered); nothing was written. */
export type AckResult = 'ok' | 'stale';

export interface LeaseRef {
  id: string;
  queue: string;
  token: string;
}

export interface RenewResult {
  /** Leases that are no longer held by the caller. */
  lost: string[];
  /** Running tasks an operator asked to cancel. */
  cancelRequested: string[];
}

export interface WorkerInfo {
  id: string;
  host: string;
  pid: number;
  queues: string[];
  concurrency: number;
  running: string[];
  startedAt: number;
  version: string;
  /** The task types and prefix patterns (`email:*`) this worker has handlers for. */
  types?: string[];
  /** Set by the store when read back. */
  lastHeartbeatAt?: number;
}

/**
 * A task type a worker handles, as recorded in the store (typed at every door). The
 * task center and the CLI validate payloads of a type that has a schema before storing them.
 */
export interface TaskTypeInfo {
  /** The type, or a prefix pattern ending in `*`. */
  type: string;
  /** JSON Schema (draft-07) of the payload, from the defined task's zod schema; null when none is known. */
  schema: Record<string, unknown> | null;
  /** The queues of the worker that recorded it last. */
  queues: string[];
  /** When a worker last recorded it (the store's clock); set by the store. */
  recordedAt?: number;
}

/**
 * A change a backend announces to subscribers (possibly in other processes). Every subscriber
 * hears `finished`, `cancel-requested` and `workflow`; only `lifecycle` subscribers (the task center) hear
 * `enqueued`, `started` and `retrying`, and get the task `type` on every task event.
 */
export type BackendEvent =
  | { kind: 'finished'; id: string; queue: string; state: 'completed' | 'dead' | 'cancelled'; type?: string }
  | { kind: 'cancel-requested'; id: string; queue: string }
  /** A workflow was created or retried (`running`), or finished. */
  | { kind: 'workflow'; id: string; state: WorkflowState }
  | LifecycleEvent;

/** Task lifecycle events for `lifecycle` subscribers. */
export type LifecycleEvent =
  | { kind: 'enqueued'; id: string; queue: string; type: string; state: 'queued' | 'scheduled' }
  | { kind: 'started'; id: string; queue: string; type: string; attempt: number }
  /** An attempt failed and the task waits for its next one at `nextRunAt`. */
  | { kind: 'retrying'; id: string; queue: string; type: string; attempt: number; nextRunAt: number };

export interface SubscribeOptions {
  /** Also deliver enqueued/started/retrying events, with task types. Default false (workers need only finished and cancel requests). */
  lifecycle?: boolean;
  /** Deliver only `cancel-requested` events (what a worker needs), not every finished task. Default false. */
  cancelsOnly?: boolean;
}

export type Unsubscribe = () => Promise<void>;

export const STATE_COUNT_KEYS = ['scheduled', 'queued', 'running', 'retrying', 'completed', 'dead', 'cancelled'] as const;

export interface QueueInfo {
  name: string;
  paused: boolean;
  /** Bounds on the finished tasks kept (all null unless set with setQueueKeep). */
  keep: QueueKeep;
  /** The queue's controls (all null unless set with setQueueLimits). */
  limits: QueueLimits;
  /**
   * The limit that holds the queue's waiting tasks back now (a claim would start none): its rate
   * (with `until`, when it allows the next start) or its concurrency. Null: none does.
   */
  held: { limit: 'rate' | 'concurrency'; until: number | null } | null;
  counts: Record<TaskState, number>;
  /** Attempts finished (successful or not), since the queue was created. */
  processed: number;
  /** Attempts failed, since the queue was created. */
  failed: number;
  /** Enqueued tasks its maxLength refused, since the queue was created. */
  refused: number;
  /** Age in ms of the oldest queued task (0 when none). */
  latency: number;
  /**
   * The queue's groups (the enqueue option `group`): how many have queued tasks, and how many
   * tasks run with a live lease in each group that has one (at most 1,000 groups listed).
   */
  groups: QueueGroups;
}

export interface QueueGroups {
  waiting: number;
  running: Record<string, number>;
}

export interface DailyStat {
  /** UTC day as YYYY-MM-DD. */
  day: string;
  processed: number;
  failed: number;
}

export interface MinuteStat {
  /** Start of the minute, epoch ms. */
  at: number;
  processed: number;
  failed: number;
}

export interface TaskPage {
  tasks: TaskRecord[];
  /** Pass back (to the same queue and state) to get the next page; null at the end. Opaque: its form is the store's. */
  nextCursor: string | null;
}

/** States an operator may act on in bulk. */
export type BulkState = Exclude<TaskState, 'running'>;

/**
 * Everything a store provides: the task operations below, schedules (ScheduleStore) and locks
 * (LockStore), so that core code can run the scheduler and take locks on any backend.
 */
export interface Backend extends ScheduleStore, LockStore, WorkflowStore {
  readonly kind: 'redis' | 'sqlite';
  /**
   * Whether the store is a server that works on a request while this process runs: then a
   * worker splits its slots into two lanes (and keeps up to two ack batches in flight) so both
   * sides work at once. An in-process store (SQLite) runs each call to its end before
   * returning, so it gains nothing.
   */
  readonly remote: boolean;
  /** The store's clock, epoch ms. */
  now(): Promise<number>;

  // ── producing ───────────────────────────────────────────────────────────────
  /**
   * Stores tasks; one round trip per batch. Conflicts are reported per task; the others are
   * stored. A type, header or unique key holding a lone UTF-16 surrogate throws
   * TL_INVALID_ARGUMENT naming the field, and nothing of the call is stored.
   */
  enqueue(tasks: NewTask[]): Promise<EnqueueOutcome[]>;

  // ── working ─────────────────────────────────────────────────────────────────
  /** Claims up to `count` tasks from each requested queue, in one round trip; moves due tasks first. */
  claim(workerId: string, requests: ClaimRequest[], leaseMs: number): Promise<ClaimResult[]>;
  /** Applies a batch of acks (pipelined); each is checked against its lease token. */
  ack(acks: Ack[]): Promise<AckResult[]>;
  /**
   * `ack(acks)` then `claim(…)`, in one round trip: a worker's acks ride with its next claim
   * (Redis: one script call per queue that has both; SQLite: one transaction). The results are
   * those the two calls would give.
   */
  ackAndClaim(acks: Ack[], workerId: string, requests: ClaimRequest[], leaseMs: number): Promise<AckAndClaimResult>;
  /** Extends the leases of all the caller's running tasks in one call. */
  renewLeases(leases: LeaseRef[], leaseMs: number): Promise<RenewResult>;
  /**
   * Waits until one of the queues may have work, or the timeout passes, or the signal aborts.
   * `exact`: the timeout is a moment work falls due (a rate limit's next start, a task's time),
   * so the wait ends then and not later (a blocked Redis command times out up to ~100 ms late).
   */
  waitForWork(queues: string[], timeoutMs: number, signal: AbortSignal, exact?: boolean): Promise<void>;
  /** Moves due scheduled and retrying tasks to queued. Returns how many moved. */
  forwardDue(queue: string, limit: number): Promise<number>;
  /** Fails the attempts of tasks whose lease expired (`lease expired (worker lost)`), then retry or dead. */
  recoverExpired(queue: string, limit: number): Promise<number>;
  /** Deletes finished tasks past their retention, and past the queue's keep bounds (at most `limit` per final state each). Returns how many were deleted. */
  cleanup(queue: string, limit: number): Promise<number>;
  /** Appends log lines and/or sets progress of a running task (checked against its token). */
  reportProgress(lease: LeaseRef, update: { logs?: TaskLogLine[]; progress?: unknown }): Promise<AckResult>;

  // ── notifications ───────────────────────────────────────────────────────────
  subscribe(listener: (event: BackendEvent) => void, options?: SubscribeOptions): Promise<Unsubscribe>;

  // ── workers ─────────────────────────────────────────────────────────────────
  heartbeat(info: WorkerInfo, ttlMs: number): Promise<void>;
  removeWorker(id: string): Promise<void>;
  listWorkers(): Promise<WorkerInfo[]>;
  /** Records the types a worker handles (each replaces the type's earlier record). */
  recordTaskTypes(types: TaskTypeInfo[]): Promise<void>;
  /** Every recorded type, by type. */
  listTaskTypes(): Promise<TaskTypeInfo[]>;

  // ── operating ───────────────────────────────────────────────────────────────
  pauseQueue(queue: string): Promise<void>;
  resumeQueue(queue: string): Promise<void>;
  /**
   * Sets the bounds on the finished tasks the queue keeps (registering the queue); a state left
   * out keeps its bound, null removes it. Returns the bounds now in force. Tasks already past a
   * lowered bound go at the next finish in that state or janitor pass (cleanup), in batches.
   */
  setQueueKeep(queue: string, keep: Partial<QueueKeep>): Promise<QueueKeep>;
  /**
   * Sets the queue's controls (registering the queue); a limit left out keeps its value, null or
   * 'none' removes it. Returns the limits now in force. TL_INVALID_ARGUMENT names a bad one, and
   * nothing is stored then.
   */
  setQueueLimits(queue: string, limits: QueueLimitsUpdate): Promise<QueueLimits>;
  // The states each of cancel, run, archive and delete takes are core/transitions.ts's table
  // (ACCEPTED_STATES); a task in another state throws TL_INVALID_STATE, or, in bulk, is left alone.
  /** → cancelled; a running task gets a cancel request instead (REQUEST_STATES: the handler's signal aborts). */
  cancelTask(id: string): Promise<'cancelled' | 'cancel-requested'>;
  /** → queued; a dead or cancelled task starts again with all its retries. */
  runTask(id: string): Promise<void>;
  /** → dead. */
  archiveTask(id: string): Promise<void>;
  /** Deletes the task (a workflow node's task not finished yet: the node ends cancelled). */
  deleteTask(id: string): Promise<void>;
  runAll(queue: string, state: BulkState): Promise<number>;
  archiveAll(queue: string, state: BulkState): Promise<number>;
  deleteAll(queue: string, state: BulkState): Promise<number>;

  // ── inspecting ──────────────────────────────────────────────────────────────
  // A stored value that cannot be decoded never fails a read (validation keeps such values out;
  // a store may hold older ones): a payload, result or progress that is not JSON is given as its
  // text, a record that is not JSON as a task without type or times; shared.ts
  // unreadableFields(record) names what was so read, for the task center to mark.
  listQueues(): Promise<QueueInfo[]>;
  getQueue(queue: string): Promise<QueueInfo | null>;
  /**
   * One page of the queue's tasks in a state. `limit`: 1 … 1000 (page-cursor.ts MAX_PAGE_LIMIT),
   * default 50. `cursor`: left out for the first page, else the `nextCursor` of the page before,
   * of this same queue and state; any other value (junk, an edited cursor, another listing's)
   * throws TL_INVALID_ARGUMENT naming the cursor — never read as the first page. So does a
   * limit out of range.
   */
  listTasks(queue: string, state: TaskState, page?: { limit?: number; cursor?: string }): Promise<TaskPage>;
  getTask(id: string): Promise<TaskRecord | null>;
  /**
   * One page of the tasks matching a filter, across queues and states (search-contract.ts): it
   * examines at most `scanLimit` tasks through the store's indexes (`id:` is one lookup; a
   * queue and state, one list) and answers a cursor to go on. Limit, scan limit and cursor as
   * listTasks: out of range, or a cursor of another search, throws TL_INVALID_ARGUMENT.
   */
  searchTasks(filter: TaskFilter, page?: SearchPageOptions): Promise<TaskSearchPage>;
  /** The last `days` UTC days, oldest first; `days` 1 … MAX_STAT_DAYS (shared.ts), else TL_INVALID_ARGUMENT. */
  dailyStats(queue: string, days: number): Promise<DailyStat[]>;
  /** The last `minutes` minutes, oldest first; `minutes` 1 … MAX_STAT_MINUTES (shared.ts), else TL_INVALID_ARGUMENT. */
  minuteStats(queue: string, minutes: number): Promise<MinuteStat[]>;

  // ── audit log (audit-contract.ts) ──────────────────────────────────────────
  /** Appends an entry, then deletes the oldest past `keep` (1 … 1,000,000; default DEFAULT_AUDIT_KEEP). */
  recordAudit(entry: AuditEntry, keep?: number): Promise<void>;
  /** One page of entries, newest first; `limit` and `cursor` as listTasks (TL_INVALID_ARGUMENT). */
  listAudit(page?: { limit?: number; cursor?: string }): Promise<AuditPage>;

  close(): Promise<void>;
}

/** Every backend has the scheduler's and the locks' operations; kept as a name for code that says so. */
export type SchedulingBackend = Backend;
