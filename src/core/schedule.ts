/**
 * The schedule model: what a schedule is, its run state and the ids of its fires —
 * shared by the scheduler, the stores and the task center. Validating a schedule given by a
 * user is scheduler/schedule.ts.
 */
import type { EnqueueOptions } from './options.js';

export const OVERLAP_POLICIES = ['skip', 'allow', 'bufferOne', 'cancelPrevious'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];
export const CATCH_UP_POLICIES = ['skip', 'latest', 'all'] as const;
export type CatchUpPolicy = (typeof CATCH_UP_POLICIES)[number];

/** The task each fire enqueues. */
export interface TaskTemplate {
  type: string;
  payload?: unknown;
  /** Default `default`. */
  queue?: string;
  /** Default 3. */
  maxRetries?: number;
  /** ms. Default 30 min. */
  timeout?: number;
  /** ms to keep the finished task. Default as for any task. */
  retention?: number;
  headers?: Record<string, string>;
  /** The fired tasks' group in their queue (the enqueue option `group`). Default: none. */
  group?: string;
}

/** A schedule as users give it (API, CLI, config file). */
export interface ScheduleInput {
  id: string;
  cron: string;
  /** IANA zone. Default `UTC`. */
  timezone?: string;
  task: TaskTemplate;
  /** What to do when the previous run is still queued or running. Default `skip`. */
  overlap?: OverlapPolicy;
  /** What to do with fires missed while every scheduler was down or the schedule paused. Default `{ policy: 'latest', window: 1 h }`. */
  catchUp?: { policy?: CatchUpPolicy; window?: number | string };
  /** Up to this many ms of delay added to each fire (the same for every scheduler). Default 0. */
  jitter?: number | string;
  /** No fires before this time (epoch ms, Date or ISO string). Default: none. */
  startAt?: number | Date | string | null;
  /** No fires after this time. Default: none. */
  endAt?: number | Date | string | null;
  /** Create paused. Default false. */
  paused?: boolean;
  /** Why it is paused. */
  pauseNote?: string | null;
}

/** A validated definition. */
export interface ScheduleDefinition {
  id: string;
  cron: string;
  timezone: string;
  task: Required<Pick<TaskTemplate, 'type' | 'queue'>> & Omit<TaskTemplate, 'type' | 'queue'>;
  overlap: OverlapPolicy;
  catchUp: { policy: CatchUpPolicy; window: number };
  jitter: number;
  startAt: number | null;
  endAt: number | null;
  paused: boolean;
  pauseNote: string | null;
  /** Paused until this time, then resumes by itself; null: until resumed. */
  pausedUntil: number | null;
  /** Who owns it: `api` (API, CLI, code), `config` (reconciled from the config file) or `dev` (`taskline dev`'s examples). */
  source: ScheduleSource;
}

/** The scheduler's progress on a schedule. */
export interface ScheduleState {
  watermark: number;
  nextRunAt: number | null;
  lastFireAt: number | null;
  lastOutcome: string | null;
  /** The task of the latest enqueued fire (for overlap policies). */
  lastTaskId: string | null;
  /** bufferOne: a fire held until the previous run finishes. */
  buffered: { fireId: string; nominalAt: number } | null;
}

export interface Schedule extends ScheduleDefinition {
  generation: number;
  createdAt: number;
  updatedAt: number;
  /** When it was last resumed from a pause (fires up to then go to the catch-up policy); null if never. */
  resumedAt: number | null;
  state: ScheduleState;
}

/** Who owns a schedule: only its owner's reconcile changes or removes it. */
export type ScheduleSource = 'api' | 'config' | 'dev';

export const DEFAULT_CATCH_UP_WINDOW = 3_600_000;

/** The enqueue options a fire uses. */
export function templateOptions(task: TaskTemplate, fireId: string): EnqueueOptions {
  const options: EnqueueOptions = { queue: task.queue ?? 'default', id: fireId };
  if (task.maxRetries !== undefined) options.maxRetries = task.maxRetries;
  if (task.timeout !== undefined) options.timeout = task.timeout;
  if (task.retention !== undefined) options.retention = task.retention;
  if (task.headers !== undefined) options.headers = task.headers;
  if (task.group !== undefined) options.group = task.group;
  return options;
}

export function fireId(scheduleId: string, generation: number, nominalAt: number): string {
  return `schedule:${scheduleId}:${generation}:${nominalAt}`;
}

/**
 * The schedule id inside a fire id (`fireId`'s inverse), or null for an id not of that form. A
 * manual fire's id is a fire id with `:manual` after it (scheduler/service.ts trigger).
 */
export function scheduleOfFire(id: string): string | null {
  const match = /^schedule:(.+):\d+:-?\d+(?::manual)?$/.exec(id);
  return match ? match[1] : null;
}

/**
 * Whether a stored definition could not be read: the stores return it with an empty cron
 * (backend/shared.ts parseStoredDefinition), so it is listed but never fires.
 */
export function isUnreadable(schedule: Pick<ScheduleDefinition, 'cron'>): boolean {
  return schedule.cron === '';
}

export function isPaused(schedule: Pick<ScheduleDefinition, 'paused' | 'pausedUntil'>, now: number): boolean {
  return schedule.paused && (schedule.pausedUntil === null || now < schedule.pausedUntil);
}
