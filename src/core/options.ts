import { createHash } from 'node:crypto';
import { TasklineError } from './errors.js';
import { uuidv7 } from './ids.js';
import { validateBackoffSpec } from './backoff.js';
import { duration, headers as validHeaders, isWellFormed, quote, text, time, wholeNumber } from './validate.js';
import type { BackoffSpec, NewTask, TaskLinks } from './task.js';

/** Options of one enqueue. Each default is given in its comment. */
export interface EnqueueOptions {
  /** Queue name: letters, digits and `_ . : -`, up to 100 characters. Default `default`. */
  queue?: string;
  /** A custom id; enqueueing an id that exists in any state is a conflict. Default: a UUIDv7. */
  id?: string;
  /** Retries after the first attempt. Default 3. */
  maxRetries?: number;
  /** ms one attempt may run before it is aborted and counted as failed. Default 30 min. */
  timeout?: number;
  /** Absolute time (epoch ms, Date or ISO-8601 text) after which no attempt may run. Default: none. */
  deadline?: number | Date | string;
  /** Run after this many ms (the task is `scheduled` until then). Default: run now. */
  delay?: number;
  /** Run at this time (epoch ms, Date or ISO-8601 text). Default: run now. */
  runAt?: number | Date | string;
  /** Reject another task with the same type + queue + payload (or `uniqueKey`) for this many ms while this one is unfinished. Default: no uniqueness. */
  uniqueFor?: number;
  /** The key uniqueness is judged by, instead of the payload. Needs `uniqueFor`. */
  uniqueKey?: string;
  /** ms to keep the task after it finishes. Default: 24 h when completed, 30 d when dead or cancelled. */
  retention?: number;
  /** Backoff between attempts. Default exponential, base 10 s, max 1 h, 25 % jitter. */
  backoff?: BackoffSpec;
  /** String headers carried to the handler (e.g. trace context). Default: none. */
  headers?: Record<string, string>;
  /**
   * The task's group in its queue (e.g. a tenant id): with the queue's `groupConcurrency`, at
   * most that many of a group run at once, and groups with waiting tasks take turns. 1–200
   * characters of letters, digits and _ . : @ / + = -. Default: none.
   */
  group?: string;
}

/** Internal: links set by the scheduler and workflows, not by users. */
export interface InternalEnqueueOptions extends EnqueueOptions {
  links?: TaskLinks;
}

const KNOWN_OPTIONS = new Set([
  'queue', 'id', 'maxRetries', 'timeout', 'deadline', 'delay', 'runAt', 'uniqueFor', 'uniqueKey',
  'retention', 'backoff', 'headers', 'group', 'links',
]);

export const DEFAULT_QUEUE = 'default';
export const DEFAULT_MAX_RETRIES = 3;
export const DEFAULT_TIMEOUT_MS = 30 * 60_000;
export const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;
const MAX_TIMEOUT_MS = 2 ** 31 - 1;
const UNIQUE_KEY = { max: 500, accepted: 'a string of 1–500 characters without control characters' };

const QUEUE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$/;
const TASK_ID = /^[A-Za-z0-9_.:@/+=-]{1,200}$/;
// A "." or ".." path segment: a URL resolves it away, so the task could never be addressed.
const DOT_SEGMENT = /(^|\/)\.{1,2}(\/|$)/;
// eslint-disable-next-line no-control-regex
const TASK_TYPE = /^[^\u0000-\u001f\u007f]{1,200}$/;

/** What a group is (validateGroup; the stores read it as plain text, the HTTP schema checks it too). */
export const GROUP_PATTERN = /^[A-Za-z0-9_.:@/+=-]{1,200}$/;

/** A task's group: text the stores read and write as is, without escapes (lua/lib/groups.lua). */
export function validateGroup(group: unknown, where = 'group'): string {
  if (typeof group !== 'string' || !GROUP_PATTERN.test(group)) {
    throw new TasklineError(
      'TL_INVALID_OPTION',
      `invalid ${where} ${quote(group)}: a group is 1–200 characters of letters, digits and _ . : @ / + = -`,
    );
  }
  return group;
}

export function validateQueueName(queue: unknown, where = 'queue'): string {
  if (typeof queue !== 'string' || !QUEUE_NAME.test(queue)) {
    throw new TasklineError(
      'TL_INVALID_ARGUMENT',
      `invalid ${where} ${quote(queue)}: a queue name is 1–100 characters of letters, digits and _ . : - starting with a letter or digit`,
    );
  }
  return queue;
}

export function validateTaskId(id: unknown, where = 'task id'): string {
  if (typeof id !== 'string' || !TASK_ID.test(id) || DOT_SEGMENT.test(id)) {
    throw new TasklineError(
      'TL_INVALID_ARGUMENT',
      `invalid ${where} ${quote(id)}: an id is 1–200 characters of letters, digits and _ . : @ / + = -, without a "." or ".." between slashes`,
    );
  }
  return id;
}

/** Types are free text within reason: well-formed, no control characters, 1–200 characters. */
export function validateTaskType(type: unknown, where = 'task type'): string {
  if (typeof type !== 'string' || !TASK_TYPE.test(type) || !isWellFormed(type)) {
    throw new TasklineError('TL_INVALID_ARGUMENT', `invalid ${where} ${quote(type)}: a type is a string of 1–200 characters without control characters`);
  }
  return type;
}

/**
 * Serialises a payload as JSON, rejecting values that JSON would silently change or drop
 * (functions, symbols, bigint, NaN/Infinity, cycles) so the handler sees what the caller sent,
 * and strings with a lone UTF-16 surrogate (not Unicode text: every string stored is).
 */
export function serializePayload(payload: unknown, maxBytes: number): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(payload === undefined ? null : payload);
  } catch (error) {
    // A cycle makes JSON.stringify throw; a walk would not end, so only other throws are walked.
    const message = (error as Error).message;
    const problem = /circular/i.test(message) ? null : describeJsonProblem(payload);
    throw new TasklineError('TL_PAYLOAD_NOT_JSON', `payload is not JSON-serialisable: ${problem ?? message}`, { cause: error });
  }
  // JSON.stringify drops or changes some values silently; a walk finds them (it is several
  // times cheaper than a replacer function, which the engine calls back for every value).
  const problem = describeJsonProblem(payload) ?? (json === undefined ? 'undefined' : null);
  if (problem !== null || json === undefined) {
    throw new TasklineError('TL_PAYLOAD_NOT_JSON', `payload is not JSON-serialisable: ${problem ?? 'undefined'} (payloads are JSON: objects, arrays, strings, finite numbers, booleans, null)`);
  }
  const bytes = json.length * 3 > maxBytes ? Buffer.byteLength(json) : json.length;
  if (bytes > maxBytes) {
    throw new TasklineError('TL_PAYLOAD_TOO_LARGE', `payload is ${Buffer.byteLength(json)} bytes; the maximum is ${maxBytes} bytes`);
  }
  return json;
}

/**
 * The first value JSON would drop or change — a function, symbol or bigint, NaN or Infinity —
 * or a string with a lone surrogate (every stored string is well-formed Unicode),
 * as "<kind> at <key>", or null. Objects with toJSON (Date…) are taken as they serialise.
 * Never called on a value with a cycle (JSON.stringify rejects those first).
 */
function describeJsonProblem(value: unknown, key = '', depth = 0): string | null {
  const kind = typeof value;
  // Where, in words, only once a problem is found: this walk runs for every enqueue.
  const at = () => (key === '' ? 'the top level' : quote(key));
  if (kind === 'string') return isWellFormed(value as string) ? null : `a string with a lone UTF-16 surrogate at ${at()}`;
  if (kind === 'number') return Number.isFinite(value) ? null : `${String(value)} at ${at()}`;
  if (kind === 'function' || kind === 'symbol' || kind === 'bigint') return `${kind} at ${at()}`;
  if (kind !== 'object' || value === null || depth > 200) return null;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const problem = describeJsonProblem(value[i], String(i), depth + 1);
      if (problem !== null) return problem;
    }
    return null;
  }
  for (const k in value) {
    if (!Object.prototype.hasOwnProperty.call(value, k)) continue;
    if (!isWellFormed(k)) return `a key with a lone UTF-16 surrogate at ${at()}`;
    const problem = describeJsonProblem((value as Record<string, unknown>)[k], k, depth + 1);
    if (problem !== null) return problem;
  }
  return null;
}

/** JSON with object keys sorted, so equal payloads hash equally. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export interface NormalizeContext {
  maxPayloadBytes: number;
  defaults: EnqueueOptions;
}

/** Validates one enqueue and returns the task to store. Throws TasklineError; stores nothing. */
export function normalizeEnqueue(type: unknown, payload: unknown, options: InternalEnqueueOptions | undefined, context: NormalizeContext): NewTask {
  if (options !== undefined && (typeof options !== 'object' || options === null || Array.isArray(options))) {
    throw new TasklineError('TL_INVALID_OPTION', `enqueue options must be an object, got ${quote(options)}`);
  }
  const merged: InternalEnqueueOptions = { ...context.defaults, ...options };
  for (const key of Object.keys(merged)) {
    if (!KNOWN_OPTIONS.has(key)) {
      throw new TasklineError(
        'TL_INVALID_OPTION',
        `unknown enqueue option ${quote(key)}; accepted: ${[...KNOWN_OPTIONS].filter((k) => k !== 'links').join(', ')}`,
      );
    }
  }
  const taskType = validateTaskType(type);
  const queue = validateQueueName(merged.queue ?? DEFAULT_QUEUE);
  const id = merged.id === undefined ? uuidv7() : validateTaskId(merged.id);
  const json = serializePayload(payload, context.maxPayloadBytes);
  const bad = 'TL_INVALID_OPTION';
  const maxRetries = merged.maxRetries === undefined ? DEFAULT_MAX_RETRIES : wholeNumber(bad, 'maxRetries', merged.maxRetries, 0, 1000);
  const timeout = merged.timeout === undefined ? DEFAULT_TIMEOUT_MS : wholeNumber(bad, 'timeout', merged.timeout, 1, MAX_TIMEOUT_MS, ' of milliseconds');
  const deadline = merged.deadline === undefined ? null : time(bad, 'deadline', merged.deadline, { strings: true });
  const delay = merged.delay === undefined ? null : duration(bad, 'delay', merged.delay);
  const runAt = merged.runAt === undefined ? null : time(bad, 'runAt', merged.runAt, { strings: true });
  if (delay !== null && runAt !== null) {
    throw new TasklineError('TL_INVALID_OPTION', 'options delay and runAt cannot both be given; use one');
  }
  const uniqueFor = merged.uniqueFor === undefined ? null : duration(bad, 'uniqueFor', merged.uniqueFor, 1);
  if (merged.uniqueKey !== undefined && uniqueFor === null) {
    throw new TasklineError('TL_INVALID_OPTION', 'option uniqueKey needs uniqueFor (the ms the key is held)');
  }
  if (merged.uniqueKey !== undefined) text(bad, 'uniqueKey', merged.uniqueKey, UNIQUE_KEY);
  const uniqueKey =
    uniqueFor === null
      ? null
      : createHash('sha1')
          .update(merged.uniqueKey !== undefined ? `k\u0000${taskType}\u0000${merged.uniqueKey}` : `p\u0000${taskType}\u0000${canonicalJson(JSON.parse(json))}`)
          .digest('hex');
  const retention = merged.retention === undefined ? null : duration(bad, 'retention', merged.retention);
  const backoff = merged.backoff === undefined ? null : validateBackoffSpec(merged.backoff, 'enqueue option');
  let headers: Record<string, string> | null = null;
  if (merged.headers !== undefined) {
    const valid = validHeaders(bad, 'headers', merged.headers);
    headers = Object.keys(valid).length > 0 ? valid : null;
  }
  const group = merged.group === undefined ? null : validateGroup(merged.group);
  return {
    id,
    type: taskType,
    payload: json,
    queue,
    maxRetries,
    timeout,
    deadline,
    delay,
    runAt,
    uniqueKey,
    uniqueFor,
    retention,
    backoff,
    headers,
    group,
    links: merged.links ?? null,
    generatedId: merged.id === undefined,
  };
}
