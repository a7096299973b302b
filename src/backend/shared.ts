/** Small pieces every backend shares. */
import { TasklineError } from '../core/errors.js';
import { GROUP_PATTERN } from '../core/options.js';
import { isWellFormed, malformedStringPath, quote, wholeNumber } from '../core/validate.js';
import { TASK_STATES, type AttemptRecord, type NewTask, type TaskLinks, type TaskState } from '../core/task.js';
import { acceptedStatesText, type OperatorAction } from '../core/transitions.js';
import type { ScheduleDefinition } from '../core/schedule.js';
import {
  KEPT_STATES, LIMIT_NAMES, MAX_CONCURRENCY_LIMIT, MAX_KEEP, MAX_QUEUE_LENGTH, MAX_RATE_INTERVAL_MS, MAX_RATE_LIMIT, WORKFLOW_STATES,
  type KeptState, type QueueKeep, type QueueLimits, type SchedulerInstance, type WorkerInfo, type WorkflowState,
} from './contract.js';

/** Due scheduled/retrying tasks moved to queued per claim call, at most. */
export const FORWARD_LIMIT = 1000;
/** Log lines kept per task (the oldest are dropped). */
export const MAX_LOG_LINES = 200;

export function emptyCounts(): Record<TaskState, number> {
  return Object.fromEntries(TASK_STATES.map((s) => [s, 0])) as Record<TaskState, number>;
}

/**
 * Checks a setQueueKeep argument: an object whose members are final states, each a whole count
 * (0 … MAX_KEEP) or null. Returns the bounds it sets.
 */
export function validateQueueKeep(keep: unknown): Partial<QueueKeep> {
  const accepted = `{ completed?, dead?, cancelled? }, each a whole number of tasks 0 … ${MAX_KEEP} or null (no bound)`;
  if (typeof keep !== 'object' || keep === null || Array.isArray(keep)) {
    throw new TasklineError('TL_INVALID_ARGUMENT', `keep bounds must be an object ${accepted}; got ${quote(keep)}`);
  }
  const out: Partial<QueueKeep> = {};
  for (const [state, value] of Object.entries(keep)) {
    if (value === undefined) continue;
    if (!(KEPT_STATES as readonly string[]).includes(state)) {
      throw new TasklineError('TL_INVALID_ARGUMENT', `keep bounds have no state ${quote(state)}: they are ${accepted}`);
    }
    if (value !== null && (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_KEEP)) {
      throw new TasklineError('TL_INVALID_ARGUMENT', `keep bound ${state} must be a whole number of tasks 0 … ${MAX_KEEP} or null (no bound); got ${quote(value)}`);
    }
    out[state as KeptState] = value as number | null;
  }
  return out;
}

const LIMITS_ACCEPTED =
  `{ rate?: { limit: 1 … ${MAX_RATE_LIMIT}, intervalMs: 1 … ${MAX_RATE_INTERVAL_MS} }, concurrency?: 1 … ${MAX_CONCURRENCY_LIMIT}, ` +
  `groupConcurrency?: 1 … ${MAX_CONCURRENCY_LIMIT}, maxLength?: 1 … ${MAX_QUEUE_LENGTH} }, whole numbers, each also null or "none" (no limit)`;

/**
 * Checks a setQueueLimits argument (QueueLimitsUpdate): known limits only, each a whole number
 * in its range, a rate { limit, intervalMs }, or null / 'none' to remove it. Returns the limits
 * it sets (null: removed). TL_INVALID_ARGUMENT names the first bad one.
 */
export function validateQueueLimits(limits: unknown): Partial<QueueLimits> {
  if (typeof limits !== 'object' || limits === null || Array.isArray(limits)) {
    throw new TasklineError('TL_INVALID_ARGUMENT', `queue limits must be an object ${LIMITS_ACCEPTED}; got ${quote(limits)}`);
  }
  const out: Partial<QueueLimits> = {};
  for (const [name, value] of Object.entries(limits)) {
    if (value === undefined) continue;
    if (!(LIMIT_NAMES as readonly string[]).includes(name)) {
      throw new TasklineError('TL_INVALID_ARGUMENT', `queue limits have no ${quote(name)}: they are ${LIMITS_ACCEPTED}`);
    }
    const limit = name as keyof QueueLimits;
    if (value === null || value === 'none') {
      out[limit] = null;
    } else if (limit === 'rate') {
      out.rate = validateRate(value);
    } else {
      const max = limit === 'maxLength' ? MAX_QUEUE_LENGTH : MAX_CONCURRENCY_LIMIT;
      out[limit] = wholeLimit(limit, value, max);
    }
  }
  return out;
}

function wholeLimit(name: string, value: unknown, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw new TasklineError('TL_INVALID_ARGUMENT', `queue limit ${name} must be a whole number 1 … ${max}, or null or "none" (no limit); got ${quote(value)}`);
  }
  return value;
}

function validateRate(value: unknown): QueueLimits['rate'] {
  const accepted = `{ limit: 1 … ${MAX_RATE_LIMIT}, intervalMs: 1 … ${MAX_RATE_INTERVAL_MS} } (whole numbers: at most limit starts in any intervalMs), or null or "none"`;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TasklineError('TL_INVALID_ARGUMENT', `queue limit rate must be ${accepted}; got ${quote(value)}`);
  }
  const { limit, intervalMs, ...rest } = value as Record<string, unknown>;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined) throw new TasklineError('TL_INVALID_ARGUMENT', `queue limit rate has no ${quote(unknown)}: it is ${accepted}`);
  for (const [part, v, max] of [['limit', limit, MAX_RATE_LIMIT], ['intervalMs', intervalMs, MAX_RATE_INTERVAL_MS]] as const) {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > max) {
      throw new TasklineError('TL_INVALID_ARGUMENT', `queue limit rate.${part} must be a whole number 1 … ${max}; got ${quote(v)}`);
    }
  }
  return { limit: limit as number, intervalMs: intervalMs as number };
}

/** Most days dailyStats returns (ten years). */
export const MAX_STAT_DAYS = 3660;
/** Most minutes minuteStats returns (a day). */
export const MAX_STAT_MINUTES = 1440;

/** A count argument of a read (a page size, a number of days …): a whole number 1 … max, else TL_INVALID_ARGUMENT. */
export function countWithin(name: string, value: unknown, max: number): number {
  return wholeNumber('TL_INVALID_ARGUMENT', name, value, 1, max);
}

/**
 * Refuses a task whose type, unique key, a header or a link holds a lone UTF-16 surrogate, with
 * TL_INVALID_ARGUMENT naming the field. The validation layer (core/validate.ts) refuses these
 * first; this is the stores' own guard for callers of the backend: Redis's Lua (cjson) cannot
 * decode such a record, and no store can keep the text as UTF-8.
 */
export function checkStorableTasks(tasks: ReadonlyArray<Pick<NewTask, 'id' | 'type' | 'uniqueKey' | 'headers' | 'links' | 'group'>>): void {
  for (const task of tasks) {
    checkStorableTask(task.id, task.type, task.uniqueKey, task.headers, task.links);
    checkGroup(task.id, task.group);
  }
}

/**
 * Refuses a group that is not what the enqueue option accepts (core/options.ts validateGroup),
 * with TL_INVALID_ARGUMENT: the stores read a group as plain text (Redis's scripts, without JSON
 * escapes), so one that only a direct caller of the backend could pass is not stored.
 */
export function checkGroup(id: string, group: string | null | undefined): void {
  if (group == null || (typeof group === 'string' && GROUP_PATTERN.test(group))) return;
  throw new TasklineError('TL_INVALID_ARGUMENT', `task ${quote(id)}: group must be 1–200 characters of letters, digits and _ . : @ / + = -, got ${quote(group)}`);
}

/** checkStorableTasks for one task, given by its fields (a workflow's nodes are checked without an object each). */
export function checkStorableTask(id: string, type: string, uniqueKey: string | null | undefined, headers: Record<string, string> | null | undefined, links: TaskLinks | null | undefined): void {
  const at = typeof type === 'string' && !isWellFormed(type)
    ? 'type'
    : typeof uniqueKey === 'string' && !isWellFormed(uniqueKey)
      ? 'uniqueKey'
      : (headers != null ? prefixed('headers', malformedStringPath(headers)) : null) ?? (links != null ? prefixed('links', malformedStringPath(links)) : null);
  if (at !== null) throw unstorableText(id, at);
}

/** TL_INVALID_ARGUMENT for a task whose field `at` holds a lone surrogate (checkStorableTask). */
export function unstorableText(id: string, at: string): TasklineError {
  return new TasklineError('TL_INVALID_ARGUMENT', `task ${quote(id)}: ${at} must be well-formed Unicode, without a lone UTF-16 surrogate (a store cannot keep one)`);
}

const prefixed = (field: string, path: string | null): string | null => (path === null ? null : path === '(value)' ? field : `${field}.${path}`);

/** A UTC day number (days since the epoch) as YYYY-MM-DD. */
export function dayString(dayNumber: number): string {
  return new Date(dayNumber * 86_400_000).toISOString().slice(0, 10);
}

/** TL_INVALID_STATE for an action refused by a task's state, naming the states it takes (core/transitions.ts). */
export function operationError(action: OperatorAction, id: string, state: string): TasklineError {
  return new TasklineError(
    'TL_INVALID_STATE',
    `cannot ${action} task ${id}: it is ${state}; ${action} works on a task that is ${acceptedStatesText(action)}`,
  );
}

/** A workflow state filter: one of WORKFLOW_STATES, else TL_INVALID_ARGUMENT. */
export function validateWorkflowState(state: unknown): WorkflowState {
  if (typeof state !== 'string' || !(WORKFLOW_STATES as readonly string[]).includes(state)) {
    throw new TasklineError('TL_INVALID_ARGUMENT', `invalid workflow state ${quote(state)}: one of ${WORKFLOW_STATES.join(', ')}`);
  }
  return state as WorkflowState;
}

/** Running a workflow node's task again is the workflow's to do. */
export function workflowNodeError(id: string): TasklineError {
  return new TasklineError('TL_INVALID_STATE', `cannot run task ${id}: it runs a node of a workflow; retry the workflow (retryWorkflow, POST /api/v1/workflows/{id}/retry) to run its failed nodes again`);
}

const LOCK_KEY = /^[^{}\s]{1,200}$/;

/** A lock key: 1–200 characters without spaces or braces (the same on every backend). Throws TL_INVALID_ARGUMENT. */
export function validateLockKey(key: string): void {
  if (typeof key !== 'string' || !LOCK_KEY.test(key)) {
    throw new TasklineError('TL_INVALID_ARGUMENT', `invalid lock key ${quote(key)}: 1–200 characters without spaces or braces`);
  }
}

/** An attempt record as stored (fields may be missing), with every field present. */
export function normalizeAttempt(raw: Partial<AttemptRecord>): AttemptRecord {
  return {
    attempt: raw.attempt ?? 0,
    startedAt: raw.startedAt ?? 0,
    finishedAt: raw.finishedAt ?? null,
    outcome: raw.outcome ?? 'failed',
    error: raw.error ?? null,
    stack: raw.stack ?? null,
    workerId: raw.workerId ?? null,
  };
}

/**
 * Fields of records a store read that held stored text it could not decode (a payload, result
 * or progress that is not JSON is given as the text itself). Kept beside the records, not in
 * them: the record types are public, and only a presenter needs to know (server/present.ts).
 */
const unreadable = new WeakMap<object, string[]>();

/** Notes that `field` of a record just decoded held text that is not JSON. */
export function noteUnreadable(record: object, field: string): void {
  const fields = unreadable.get(record);
  if (fields) fields.push(field);
  else unreadable.set(record, [field]);
}

/** The fields of a record that held text the store could not decode (noteUnreadable). */
export function unreadableFields(record: object): readonly string[] {
  return unreadable.get(record) ?? [];
}

/**
 * Stored JSON text as its value: null for none; text that is not JSON (a corrupt write, an older
 * version's plain text) is the text itself, and `onUnreadable` hears of it.
 */
export function parseStoredJson(text: string | null | undefined, onUnreadable?: () => void): unknown {
  if (text === null || text === undefined || text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    onUnreadable?.();
    return text;
  }
}

/** A schedule definition as stored (the pause lives beside it). */
export type StoredDefinition = Omit<ScheduleDefinition, 'paused' | 'pauseNote' | 'pausedUntil'>;

/**
 * A stored schedule definition (JSON text). One that is not a JSON object with a cron, a task
 * and a catch-up policy still reads, as a schedule with an empty cron (which no scheduler fires,
 * and a reader shows marked), so one such schedule never fails a listing; `onUnreadable` hears
 * of it.
 */
export function parseStoredDefinition(id: string, text: string, onUnreadable: () => void): StoredDefinition {
  let noted = false;
  const note = () => {
    if (!noted) onUnreadable();
    noted = true;
  };
  const stored = parseStoredObject<StoredDefinition>(text, note);
  if (typeof stored.cron === 'string' && isObject(stored.task) && isObject(stored.catchUp)) return stored as StoredDefinition;
  note();
  return {
    timezone: 'UTC', overlap: 'skip', jitter: 0, startAt: null, endAt: null, source: 'api', ...stored,
    // An empty cron marks it unreadable (isUnreadable in core/schedule.ts).
    id, cron: '', task: { type: '', queue: '' }, catchUp: { policy: 'skip', window: 0 },
  };
}

/** Stored JSON text that should hold an object (a schedule's meta or run state): {} when it does not. */
export function parseStoredObject<T extends object>(text: string | null | undefined, onUnreadable?: () => void): Partial<T> {
  let json = true;
  const parsed = parseStoredJson(text, () => (json = false));
  if (isObject(parsed)) return parsed as Partial<T>;
  // Not JSON, or JSON that is not an object: unreadable either way (once).
  if (!json || parsed !== null) onUnreadable?.();
  return {};
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A worker's registry entry as stored (JSON written by its heartbeat); null when it cannot be
 * read as one, so that one corrupt entry never fails a listing (it is left out).
 */
export function decodeWorkerInfo(text: string | null | undefined): WorkerInfo | null {
  const info = parseStoredObject<WorkerInfo>(text);
  if (typeof info.id !== 'string' || !Array.isArray(info.queues)) return null;
  return {
    id: info.id,
    host: typeof info.host === 'string' ? info.host : '',
    pid: typeof info.pid === 'number' ? info.pid : 0,
    queues: info.queues.filter((q): q is string => typeof q === 'string'),
    concurrency: typeof info.concurrency === 'number' ? info.concurrency : 0,
    running: Array.isArray(info.running) ? info.running.filter((id): id is string => typeof id === 'string') : [],
    startedAt: typeof info.startedAt === 'number' ? info.startedAt : 0,
    version: typeof info.version === 'string' ? info.version : '',
    ...(Array.isArray(info.types) ? { types: info.types.filter((t): t is string => typeof t === 'string') } : {}),
    ...(typeof info.lastHeartbeatAt === 'number' ? { lastHeartbeatAt: info.lastHeartbeatAt } : {}),
  };
}

/** A scheduler instance's check-in record as stored; null when it cannot be read as one (left out of listings). */
export function decodeSchedulerInstance(value: unknown): SchedulerInstance | null {
  if (typeof value !== 'object' || value === null) return null;
  const s = value as Partial<SchedulerInstance>;
  if (typeof s.id !== 'string') return null;
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  return {
    id: s.id, host: typeof s.host === 'string' ? s.host : '', pid: n(s.pid), version: typeof s.version === 'string' ? s.version : '',
    startedAt: n(s.startedAt), lastTickAt: n(s.lastTickAt), firesLastMinute: n(s.firesLastMinute),
  };
}
