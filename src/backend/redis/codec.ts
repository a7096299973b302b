/** Encoding of task records in Redis: a compact JSON object with short field names (lua/lib/queue.lua). */
import { isTaskState, type AttemptRecord, type BackoffSpec, type NewTask, type TaskLinks, type TaskLogLine, type TaskRecord, type TaskState } from '../../core/task.js';
import type { ClaimedTask } from '../contract.js';
import type { WorkflowInputs, WorkflowNodeState } from '../workflow-contract.js';
import { normalizeAttempt, noteUnreadable, parseStoredJson, parseStoredObject } from '../shared.js';

/** The stored record, as the Lua scripts write it. */
export interface StoredMeta {
  t: string;
  s: TaskState;
  a?: number;
  m: number;
  o: number;
  d?: number;
  c: number;
  e?: number;
  sa?: number;
  f?: number;
  n?: number;
  w?: string;
  le?: string;
  u?: string;
  r?: number;
  b?: BackoffSpec;
  h?: Record<string, string>;
  l?: TaskLinks;
  p?: unknown;
  x?: number;
  /** The task's group (the enqueue option `group`; lua/lib/groups.lua). */
  g?: string;
  /** A workflow node's inputs, as lua/lib/workflow.lua node_inputs writes them (its claim hands them over). */
  wi?: unknown;
}

/** What a new task's record fragment holds. */
export type FragmentSource = Pick<NewTask, 'type' | 'maxRetries' | 'timeout' | 'deadline' | 'retention' | 'backoff' | 'headers' | 'group'> & {
  uniqueKey?: string | null;
  links?: TaskLinks | null;
};

/**
 * The immutable part of a new task's record, as JSON object members without braces, in the
 * order t, m, o, g, d, u, r, b, h, l (the Lua scripts read the type as the first member, and a
 * group right after the timeout, lua/lib/groups.lua). Written
 * member by member: a bulk enqueue or a workflow makes one per task.
 */
export function encodeRecordFragment(task: FragmentSource, links: TaskLinks | null = task.links ?? null): string {
  let text = `"t":${JSON.stringify(task.type)},"m":${JSON.stringify(task.maxRetries)},"o":${JSON.stringify(task.timeout)}`;
  if (task.group != null) text += `,"g":${JSON.stringify(task.group)}`;
  if (task.deadline != null) text += `,"d":${JSON.stringify(task.deadline)}`;
  if (task.uniqueKey != null) text += `,"u":${JSON.stringify(task.uniqueKey)}`;
  if (task.retention != null) text += `,"r":${JSON.stringify(task.retention)}`;
  if (task.backoff != null) text += `,"b":${JSON.stringify(task.backoff)}`;
  if (task.headers != null) text += `,"h":${JSON.stringify(task.headers)}`;
  if (links != null) text += `,"l":${JSON.stringify(links)}`;
  return text;
}

/**
 * Attempt records are stored with short keys and without null members — n attempt, s startedAt,
 * f finishedAt, o outcome (c completed, f failed, x cancelled, i interrupted), e error, k stack,
 * w workerId — about half the bytes of the long form, which is one per processed task on the
 * wire, in the ack script's string work and in memory. Records in the long form (written by
 * earlier versions) are read as well.
 */
const OUTCOME_CODES: Record<AttemptRecord['outcome'], string> = { completed: 'c', failed: 'f', cancelled: 'x', interrupted: 'i' };
const OUTCOMES: Record<string, AttemptRecord['outcome']> = { c: 'completed', f: 'failed', x: 'cancelled', i: 'interrupted' };

export function encodeAttempt(attempt: AttemptRecord): string {
  const short: Record<string, string | number> = { n: attempt.attempt, s: attempt.startedAt, o: OUTCOME_CODES[attempt.outcome] };
  if (attempt.finishedAt !== null) short.f = attempt.finishedAt;
  if (attempt.error !== null) short.e = attempt.error;
  if (attempt.stack !== null) short.k = attempt.stack;
  if (attempt.workerId !== null) short.w = attempt.workerId;
  return JSON.stringify(short);
}

interface ShortAttempt {
  n?: number;
  s?: number;
  f?: number;
  o?: string;
  e?: string;
  k?: string;
  w?: string;
}

function decodeAttempt(raw: Partial<AttemptRecord> & ShortAttempt): AttemptRecord {
  if (raw.o === undefined) return normalizeAttempt(raw);
  return normalizeAttempt({
    attempt: raw.n, startedAt: raw.s, finishedAt: raw.f ?? null, outcome: OUTCOMES[raw.o] ?? 'failed', error: raw.e ?? null, stack: raw.k ?? null,
    workerId: raw.w ?? null,
  });
}

function objectOrEmpty<T extends object>(value: T | undefined): T {
  // cjson writes an empty Lua table as {} — and may also write it as [] — so accept both.
  return value && !Array.isArray(value) ? value : ({} as T);
}

/**
 * A workflow node's parents' outcomes as lua/lib/workflow.lua node_inputs writes them (JSON: per
 * parent id, state, result, error, false for none); undefined when unreadable: the worker then
 * reads them itself.
 */
export function decodeInputs(raw: string): WorkflowInputs | undefined {
  let flat: unknown;
  try {
    flat = JSON.parse(raw);
  } catch {
    return undefined;
  }
  return inputsOf(flat);
}

/**
 * Node inputs from their flat form, parsed; undefined for anything else. An empty object is
 * an empty list, as cjson writes one when a script re-encodes the record (a root's later
 * attempts).
 */
function inputsOf(flat: unknown): WorkflowInputs | undefined {
  if (typeof flat === 'object' && flat !== null && !Array.isArray(flat) && Object.keys(flat).length === 0) return { parents: [] };
  if (!Array.isArray(flat)) return undefined;
  const parents: WorkflowInputs['parents'] = [];
  for (let i = 0; i + 3 < flat.length; i += 4) {
    parents.push({ id: String(flat[i]), state: flat[i + 1] as WorkflowNodeState, result: flat[i + 2] || null, error: flat[i + 3] || null });
  }
  return { parents };
}

/**
 * A claimed task from the claim's reply: its running record, or, for a first attempt, the record
 * as it was queued (the claim's time `now` is then its start; lua/lib/claim-batch.lua).
 */
export function decodeClaimed(queue: string, id: string, rawMeta: string, payload: string, token: string, leaseMs: number, now: number): ClaimedTask {
  const m = JSON.parse(rawMeta) as StoredMeta;
  const startedAt = m.sa ?? now;
  const task: ClaimedTask = {
    id,
    type: m.t,
    queue,
    payload,
    attempt: m.a ?? 1,
    maxRetries: m.m,
    timeout: m.o,
    deadline: m.d ?? null,
    createdAt: m.c,
    startedAt,
    headers: objectOrEmpty(m.h),
    links: objectOrEmpty(m.l),
    backoff: m.b ?? null,
    token,
    leaseExpiresAt: startedAt + leaseMs,
  };
  if (typeof m.g === 'string') task.group = m.g;
  // A workflow node's inputs, unless unreadable (its worker then reads them from the workflow).
  const inputs = m.wi === undefined ? undefined : inputsOf(m.wi);
  if (inputs !== undefined) task.inputs = inputs;
  return task;
}

/** Whether a stored record is a JSON object (else decodeRecord needs its state from elsewhere). */
export function readableMeta(rawMeta: string): boolean {
  let readable = true;
  parseStoredObject(rawMeta, () => (readable = false));
  return readable;
}

/**
 * A task's record as read. A stored record that is not a JSON object (corrupt) still reads, noted
 * unreadable (`record`), with the state `state` (the structure holding the id says it) and no
 * times; its payload, result, attempts and logs are stored apart and read as they are.
 */
export function decodeRecord(
  queue: string,
  id: string,
  rawMeta: string,
  extras: { payload?: string | null; result?: string | null; attempts?: string | null; logs?: string | null },
  state: TaskState | null = null,
): TaskRecord {
  const unreadable: string[] = [];
  const m = parseStoredObject<StoredMeta>(rawMeta, () => unreadable.push('record'));
  const attempts = (parseStoredJson(extras.attempts) as (Partial<AttemptRecord> & ShortAttempt)[] | null) ?? [];
  const logs = (parseStoredJson(extras.logs) as TaskLogLine[] | null) ?? [];
  const record: TaskRecord = {
    id,
    type: m.t ?? '',
    payload: parseStoredJson(extras.payload, () => unreadable.push('payload')),
    queue,
    state: m.s !== undefined && isTaskState(m.s) ? m.s : (state ?? 'dead'),
    attempt: m.a ?? 0,
    maxRetries: m.m ?? 0,
    timeout: m.o ?? 0,
    deadline: m.d ?? null,
    lastError: m.le ?? null,
    result: parseStoredJson(extras.result, () => unreadable.push('result')),
    createdAt: m.c ?? Number.NaN,
    enqueuedAt: m.e ?? null,
    startedAt: m.sa ?? null,
    finishedAt: m.f ?? null,
    nextRunAt: m.n ?? null,
    workerId: m.w ?? null,
    uniqueKey: m.u ?? null,
    retention: m.r ?? null,
    backoff: m.b ?? null,
    headers: objectOrEmpty(m.h),
    links: objectOrEmpty(m.l),
    group: typeof m.g === 'string' ? m.g : null,
    // Stored as JSON text (lua/progress.lua).
    progress: typeof m.p === 'string' ? parseStoredJson(m.p, () => unreadable.push('progress')) : (m.p ?? null),
    cancelRequested: m.x === 1,
    attempts: withCompletingAttempt(m as StoredMeta, Array.isArray(attempts) ? attempts.map(decodeAttempt) : []),
    logs: Array.isArray(logs) ? logs : [],
  };
  for (const field of unreadable) noteUnreadable(record, field);
  return record;
}

/**
 * The attempt that completed a task is not stored in the attempts hash (lua/ack.lua): everything
 * it says is in the record (attempt number, start, finish, worker). It is put back here, so a
 * completed task reads as it did when every attempt was stored — and as on SQLite.
 */
function withCompletingAttempt(m: StoredMeta, attempts: AttemptRecord[]): AttemptRecord[] {
  if (m.s !== 'completed' || attempts.at(-1)?.outcome === 'completed') return attempts;
  const startedAt = m.sa ?? m.f ?? 0;
  attempts.push({ attempt: m.a ?? 1, startedAt, finishedAt: m.f ?? startedAt, outcome: 'completed', error: null, stack: null, workerId: m.w ?? null });
  return attempts;
}
