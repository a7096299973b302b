/**
 * Schedules: the validation of a definition (the schedule model is core/schedule.ts).
 *
 * Glossary
 * - schedule: a stable id, a cron expression in a time zone, and the template of the task each
 *   fire enqueues.
 * - fire: one nominal time of a schedule. Its id is `schedule:<id>:<generation>:<nominal UTC ms>`
 *   and is also the id of the task it enqueues, so a fire can never enqueue twice.
 * - generation: bumped when a schedule is deleted and created again, so the new schedule's fires
 *   never collide with the old one's.
 * - watermark: the latest nominal time the scheduler has handled; fires after it are due.
 */
import { TasklineError } from '../core/errors.js';
import { normalizeEnqueue, validateQueueName, validateTaskType } from '../core/options.js';
import { CATCH_UP_POLICIES, DEFAULT_CATCH_UP_WINDOW, OVERLAP_POLICIES, templateOptions, type CatchUpPolicy, type OverlapPolicy, type ScheduleDefinition, type ScheduleSource, type TaskTemplate } from '../core/schedule.js';
import { parseCron, parseDuration } from './cron.js';
import { MAX_DURATION_MS, quote, text, time } from '../core/validate.js';

const SCHEDULE_ID = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$/;
const KNOWN_FIELDS = new Set(['id', 'cron', 'timezone', 'task', 'overlap', 'catchUp', 'jitter', 'startAt', 'endAt', 'paused', 'pauseNote']);
/** A pause note: free text, one line or several. */
// eslint-disable-next-line no-control-regex
export const PAUSE_NOTE = { min: 0, max: 1000, pattern: /^[^\u0000]*$/, accepted: 'a text of at most 1,000 characters' };
const KNOWN_TASK_FIELDS = new Set(['type', 'payload', 'queue', 'maxRetries', 'timeout', 'retention', 'headers', 'group']);

function fail(message: string): never {
  throw new TasklineError('TL_INVALID_SCHEDULE', message);
}

export function validateScheduleId(id: unknown): string {
  if (typeof id !== 'string' || !SCHEDULE_ID.test(id)) {
    fail(`invalid schedule id ${quote(id)}: 1–128 characters of letters, digits and _ . @ -, starting with a letter or digit`);
  }
  return id;
}

function instant(name: string, value: unknown): number | null {
  if (value === undefined || value === null) return null;
  return time('TL_INVALID_SCHEDULE', name, value, { strings: true });
}

function milliseconds(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  const ms = typeof value === 'string' ? parseDuration(value) : value;
  if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0 || ms > MAX_DURATION_MS) {
    fail(`${name} must be ms from 0 to ${MAX_DURATION_MS} (100 years) or a duration such as "30s", "5m", "1h", got ${quote(value)}`);
  }
  return ms;
}

/** Validates a schedule as given by a user; throws TL_INVALID_SCHEDULE / TL_INVALID_CRON / TL_INVALID_TIMEZONE. */
export function validateSchedule(input: unknown, source: ScheduleSource = 'api'): ScheduleDefinition {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) fail('a schedule must be an object { id, cron, timezone?, task: { type, … }, … }');
  const raw = input as Record<string, unknown>;
  for (const key of Object.keys(raw)) {
    if (!KNOWN_FIELDS.has(key)) fail(`unknown schedule field ${quote(key)}; accepted: ${[...KNOWN_FIELDS].join(', ')}`);
  }
  const id = validateScheduleId(raw.id);
  const timezone = (raw.timezone as string | undefined) ?? 'UTC';
  const startAt = instant('startAt', raw.startAt);
  const endAt = instant('endAt', raw.endAt);
  if (startAt !== null && endAt !== null && endAt <= startAt) fail(`endAt (${new Date(endAt).toISOString()}) must be after startAt (${new Date(startAt).toISOString()})`);
  const cron = parseCron(raw.cron, timezone, { anchor: startAt ?? 0 });
  if (startAt !== null) {
    const first = cron.next(startAt - 1);
    if (first === null) fail('the schedule never fires after startAt');
    if (endAt !== null && first > endAt) fail('the schedule has no fire between startAt and endAt');
  }
  const task = validateTemplate(raw.task);
  const overlap = (raw.overlap ?? 'skip') as OverlapPolicy;
  if (!OVERLAP_POLICIES.includes(overlap)) fail(`overlap must be one of ${OVERLAP_POLICIES.join(', ')}, got ${quote(raw.overlap)}`);
  const catchUpRaw = raw.catchUp ?? {};
  if (typeof catchUpRaw !== 'object' || catchUpRaw === null || Array.isArray(catchUpRaw)) fail('catchUp must be an object { policy?, window? }');
  const { policy = 'latest', window, ...rest } = catchUpRaw as { policy?: CatchUpPolicy; window?: unknown };
  if (Object.keys(rest).length > 0) fail(`unknown catchUp field ${quote(Object.keys(rest)[0])}; accepted: policy, window`);
  if (!CATCH_UP_POLICIES.includes(policy)) fail(`catchUp.policy must be one of ${CATCH_UP_POLICIES.join(', ')}, got ${quote(policy)}`);
  const paused = raw.paused ?? false;
  if (typeof paused !== 'boolean') fail(`paused must be true or false, got ${quote(raw.paused)}`);
  if (raw.pauseNote !== undefined && raw.pauseNote !== null) text('TL_INVALID_SCHEDULE', 'pauseNote', raw.pauseNote, PAUSE_NOTE);
  return {
    id,
    cron: cron.expression,
    timezone,
    task,
    overlap,
    catchUp: { policy, window: milliseconds('catchUp.window', window, DEFAULT_CATCH_UP_WINDOW) },
    jitter: milliseconds('jitter', raw.jitter, 0),
    startAt,
    endAt,
    paused,
    pauseNote: paused ? ((raw.pauseNote as string | undefined) ?? null) : null,
    pausedUntil: null,
    source,
  };
}

function validateTemplate(value: unknown): ScheduleDefinition['task'] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail('task must be an object { type, payload?, queue?, maxRetries?, timeout?, retention?, headers?, group? }');
  const raw = value as Record<string, unknown>;
  for (const key of Object.keys(raw)) {
    if (!KNOWN_TASK_FIELDS.has(key)) fail(`unknown task field ${quote(key)}; accepted: ${[...KNOWN_TASK_FIELDS].join(', ')}`);
  }
  const type = validateTaskType(raw.type);
  const queue = validateQueueName(raw.queue ?? 'default', 'task.queue');
  const template = { ...(raw as unknown as TaskTemplate), type, queue };
  // Validate the rest exactly as an enqueue would (payload size and JSON, retries, timeout …).
  normalizeEnqueue(type, template.payload, templateOptions(template, 'validation'), { maxPayloadBytes: 1024 * 1024, defaults: {} });
  return template;
}
