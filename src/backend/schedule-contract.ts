/**
 * The backend contract's schedule half: schedules and their fires, the scheduler instances, and
 * locks. Backend (contract.ts) extends ScheduleStore and LockStore; contract.ts re-exports all of
 * this, so code imports both halves from there.
 */
import type { NewTask, TaskState } from '../core/task.js';
import type { OverlapPolicy, Schedule, ScheduleDefinition, ScheduleState } from '../core/schedule.js';
// ── schedules and locks ──────────────────────────────────────

/** One fire to record, and for `enqueue` its task to store (the task id is the fire id). */
export interface FireRequest {
  fireId: string;
  nominalAt: number;
  action: 'enqueue' | 'missed' | 'skipped';
  /** Why it was skipped (`skipped` only). */
  reason?: string;
  /** The task, for `enqueue`. */
  task?: NewTask;
}

/** Fires of one schedule into one queue, applied in order in one atomic step. */
export interface FireBatch {
  scheduleId: string;
  queue: string;
  overlap: OverlapPolicy;
  /** The task of the schedule's previous enqueued fire, for the overlap policy. */
  previousTaskId: string | null;
  fires: FireRequest[];
  /** Fire records kept per schedule (older ones are pruned but stay no-ops). */
  keepHistory: number;
}

/**
 * `exists`: this fire was handled before (by any scheduler) — nothing was done.
 * `busy`: bufferOne and the previous run is unfinished — nothing was recorded.
 */
export type FireOutcome = 'enqueued' | 'missed' | `skipped:${string}` | 'exists' | 'busy';

export interface FireResult {
  fireId: string;
  outcome: FireOutcome;
  taskId: string | null;
}

/** A fire as history shows it. */
export interface FireRecord {
  fireId: string;
  nominalAt: number;
  enqueuedAt: number | null;
  lagMs: number | null;
  outcome: string;
  taskId: string | null;
  /** The task's current state; null when there is no task or it was deleted. */
  taskState: TaskState | null;
}

export interface ScheduleUpdate {
  id: string;
  generation: number;
  /** The schedule's `updatedAt` as the leader read it: a schedule changed since is not written (the leader reads it again). */
  updatedAt: number;
  state: ScheduleState;
}

// ── scheduler instances ─────────────────────────────────────────

/** What a scheduler instance reports of itself at each check-in. */
export interface SchedulerInstance {
  id: string;
  host: string;
  pid: number;
  version: string;
  /** Store time the instance started. */
  startedAt: number;
  /** Store time of its latest loop (a fire tick or a look at the leader). */
  lastTickAt: number;
  /** Fires it recorded (enqueued, missed, skipped) in the last minute. */
  firesLastMinute: number;
}

/** The leader lease: who holds it, with which fencing epoch, until when. */
export interface SchedulerLease {
  holder: string;
  epoch: number;
  expiresAt: number;
  /** Store time up to which the holder has handled every due fire (written with its run state); null before its first write. */
  firedThrough: number | null;
}

/**
 * When no scheduler instance ran, as far as the store knows: fires whose nominal time lies in a
 * gap (or before `since`) were missed and go to their schedule's catch-up policy; any other fire
 * found due late was delayed (by a failover, a busy leader) and is enqueued, late.
 */
export interface SchedulerDowntime {
  /** Nothing is known before this store time (the first check-in ever, or the end of the oldest gap forgotten). */
  since: number;
  /** Intervals (from, until] with no check-in for longer than the lease, oldest first (at most MAX_DOWNTIME_GAPS). */
  gaps: [number, number][];
}

/** Gaps of scheduler downtime the store remembers. */
export const MAX_DOWNTIME_GAPS = 100;

export interface SchedulerCheckIn {
  /** The store's clock at the check-in. */
  now: number;
  /** The caller's fencing epoch when it leads after this check-in; else null. */
  epoch: number | null;
  /** The valid lease after the check-in (any holder), or null when none is valid. */
  lease: SchedulerLease | null;
  /** Changes whenever a schedule is created, changed, paused, resumed or deleted. */
  schedulesVersion: number;
  downtime: SchedulerDowntime;
}

export interface SchedulerList {
  instances: SchedulerStatus[];
  lease: SchedulerLease | null;
  downtime: SchedulerDowntime | null;
}

/** A live scheduler instance as listed (GET /api/v1/schedulers). */
export interface SchedulerStatus extends SchedulerInstance {
  /** Store time of its latest check-in. */
  lastSeenAt: number;
  /** It holds the valid lease. */
  leader: boolean;
  /** Its epoch while it leads; else null. */
  epoch: number | null;
}

export interface ScheduleChanges {
  /** The schedules' version this brings the reader up to (changes after it come next time). */
  version: number;
  schedules: Schedule[];
  removed: string[];
}

/** Schedule storage, the fire operation and the scheduler's leader lease. */
export interface ScheduleStore {
  /** Throws TL_SCHEDULE_CONFLICT if the id exists. */
  createSchedule(definition: ScheduleDefinition): Promise<Schedule>;
  /** Throws TL_SCHEDULE_NOT_FOUND. The change applies to fires after it. */
  updateSchedule(definition: ScheduleDefinition): Promise<Schedule>;
  upsertSchedule(definition: ScheduleDefinition): Promise<Schedule>;
  /** Returns false when there was no such schedule. */
  deleteSchedule(id: string): Promise<boolean>;
  /** A schedule whose stored definition cannot be read comes with an empty cron (never fired), noted by unreadableFields. */
  getSchedule(id: string): Promise<Schedule | null>;
  listSchedules(): Promise<Schedule[]>;
  /**
   * What changed since the schedules' version `since` (see SchedulerCheckIn.schedulesVersion):
   * the schedules created, changed, paused or resumed since, as they are now, and the ids of the
   * ones deleted since; with the version they bring a reader up to. Costs what changed, not
   * what is held.
   */
  listScheduleChanges(since: number): Promise<ScheduleChanges>;
  pauseSchedule(id: string, options?: { note?: string | null; until?: number | null }): Promise<Schedule>;
  resumeSchedule(id: string): Promise<Schedule>;
  /** Takes or renews the leader lease; returns the fencing epoch, or null when another instance leads. */
  acquireLeadership(holder: string, ttlMs: number): Promise<number | null>;
  releaseLeadership(holder: string): Promise<void>;
  /**
   * One look of a scheduler instance at the others, in one atomic step: records its heartbeat
   * (kept `leaseMs`), notes a gap when no instance checked in for longer than `leaseMs`, takes or
   * renews the lease when `bid` (as acquireLeadership), and returns the lease, the schedules'
   * version and the downtime.
   */
  checkInScheduler(instance: SchedulerInstance, options: { leaseMs: number; bid: boolean }): Promise<SchedulerCheckIn>;
  /** Removes the instance from the registry and releases its lease. */
  leaveSchedulers(id: string): Promise<void>;
  /** The live scheduler instances (oldest first), the valid lease and the downtime (null before any check-in). */
  listSchedulers(): Promise<SchedulerList>;
  /**
   * Records fires and enqueues their tasks, each fire at most once across all schedulers; the
   * fires of one queue go to the store in one call. A fire handled before answers `exists` with
   * the task it enqueued then (null when it enqueued none or its record was pruned).
   */
  fire(batches: FireBatch[]): Promise<FireResult[][]>;
  /**
   * Writes run state if the caller still leads with `epoch` (updates of a schedule changed since
   * the leader read it are skipped), and with `firedThrough` the store time up to which it has
   * handled every due fire; false when fenced out.
   */
  advanceSchedules(holder: string, epoch: number, updates: ScheduleUpdate[], firedThrough?: number): Promise<boolean>;
  /** Fire history of a schedule, newest first; `limit` 1 … 1000, else TL_INVALID_ARGUMENT. */
  listFires(scheduleId: string, queue: string, limit: number): Promise<FireRecord[]>;
}

/** Distributed locks with fencing tokens. */
export interface LockStore {
  /** Returns a fencing token (strictly increasing per key), or null when the lock is held. */
  acquireLock(key: string, owner: string, ttlMs: number): Promise<number | null>;
  /** Extends the lock if `owner` still holds it with `token`. */
  extendLock(key: string, owner: string, token: number, ttlMs: number): Promise<boolean>;
  /** Releases the lock if `owner` still holds it with `token`. */
  releaseLock(key: string, owner: string, token: number): Promise<boolean>;
}
