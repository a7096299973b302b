/**
 * The API's view of stored things: snake_case fields and ISO-8601 times.
 *
 * A stored value that cannot be presented never makes a read fail: validation keeps such values
 * out of the store, but a store may hold ones written by an older version or by hand, and one bad
 * task must not break a listing for everyone. Such a value is presented in one way everywhere:
 * - a time that is not a number Date holds (9007199254740991, 1e300, text) is `null`;
 * - a count that is not a whole number is `0`;
 * - a payload, result or progress stored as text that is not JSON is that text, as a string;
 * - a schedule whose stored definition is not one shows with an empty cron (it never fires);
 * - a task log entry that is not a line object shows with no time and its JSON text as message;
 * and the view lists the fields so presented in `invalid`, by name (`definition`, `record` … for
 * a stored part that could not be read at all), e.g.
 * `"invalid": ["next_run_at", "attempts[0].started_at"]`. Views with nothing invalid have no
 * `invalid` member. (Strings with a lone UTF-16 surrogate need no marker: JSON escapes them
 * losslessly, as `\ud800`.)
 */
import type { FireRecord, QueueInfo, QueueLimits, SchedulerLease, SchedulerStatus, WorkerInfo } from '../backend/contract.js';
import { unreadableFields } from '../backend/shared.js';
import type { TaskRecord } from '../core/task.js';
import { scheduleOfFire, type Schedule } from '../core/schedule.js';
import type { Waiting } from '../core/why-waiting.js';

/** An ISO-8601 time, or null for none — and for a value that is not a time Date holds. */
export function iso(ms: unknown): string | null {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return null;
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/** Collects the fields of one view that could not be presented as stored. */
class Marks {
  readonly invalid: string[] = [];

  constructor(readonly prefix = '') {}

  /** A stored time (null: none) as ISO-8601; a value that is not a time is null, and marked. */
  time(field: string, ms: unknown): string | null {
    if (ms === null || ms === undefined) return null;
    const text = iso(ms);
    if (text === null) this.invalid.push(this.prefix + field);
    return text;
  }

  /** A stored count; a value that is not a whole number is 0, and marked. */
  count(field: string, n: unknown): number {
    if (typeof n === 'number' && Number.isSafeInteger(n)) return n;
    this.invalid.push(this.prefix + field);
    return 0;
  }

  note(fields: Iterable<string>): void {
    for (const field of fields) this.invalid.push(this.prefix + field);
  }

  /** The view, with `invalid` when anything was marked. */
  view<T extends object>(view: T): T & { invalid?: string[] } {
    return this.invalid.length === 0 ? view : { ...view, invalid: this.invalid };
  }
}

/** Stored JSON fields of a task and their names in the view. */
const JSON_FIELDS: Record<string, string> = { payload: 'payload', result: 'result', progress: 'progress' };

export function taskStatus(task: TaskRecord) {
  const marks = new Marks();
  marks.note(unreadableFields(task).map((field) => JSON_FIELDS[field] ?? field));
  const attempts = Array.isArray(task.attempts) ? task.attempts : [];
  return marks.view({
    id: task.id,
    type: task.type,
    queue: task.queue,
    state: task.state,
    payload: task.payload,
    result: task.result,
    error: task.lastError,
    attempt: marks.count('attempt', task.attempt),
    max_retries: marks.count('max_retries', task.maxRetries),
    created_at: marks.time('created_at', task.createdAt),
    enqueued_at: marks.time('enqueued_at', task.enqueuedAt),
    started_at: marks.time('started_at', task.startedAt),
    finished_at: marks.time('finished_at', task.finishedAt),
    next_run_at: marks.time('next_run_at', task.nextRunAt),
    worker_id: task.workerId,
    progress: task.progress ?? null,
    cancel_requested: task.cancelRequested === true,
    group: typeof task.group === 'string' ? task.group : null,
    logs: (Array.isArray(task.logs) ? task.logs : []).map((line, i) => logLineView(marks, i, line)),
    links: linksView(task.links),
    attempts: attempts.map((a, i) => {
      const at = new Marks(`attempts[${i}].`);
      const view = {
        attempt: at.count('attempt', a.attempt),
        started_at: at.time('started_at', a.startedAt),
        finished_at: at.time('finished_at', a.finishedAt),
        outcome: a.outcome,
        error: a.error,
        worker_id: a.workerId,
      };
      marks.note(at.invalid);
      return view;
    }),
  });
}

/** A stored log line; an entry that is not a line object shows with no time and its text, marked `logs[i]`. */
function logLineView(marks: Marks, i: number, line: unknown): { at: string | null; message: string } {
  if (typeof line === 'object' && line !== null && !Array.isArray(line)) {
    const { at, message } = line as Partial<Record<keyof TaskRecord['logs'][number], unknown>>;
    return { at: marks.time(`logs[${i}].at`, at), message: typeof message === 'string' ? message : String(message) };
  }
  marks.note([`logs[${i}]`]);
  return { at: null, message: typeof line === 'string' ? line : (JSON.stringify(line) ?? String(line)) };
}

/** Why a task waits (core/why-waiting.ts), its time as ISO-8601. */
export function waitingView(waiting: Waiting | null) {
  return waiting && { ...waiting, until: iso(waiting.until) };
}

function linksView(links: TaskRecord['links'] | null | undefined) {
  const fire = typeof links?.scheduleFireId === 'string' ? links.scheduleFireId : null;
  return {
    schedule_id: fire === null ? null : scheduleOfFire(fire),
    schedule_fire_id: fire,
    workflow_id: typeof links?.workflowId === 'string' ? links.workflowId : null,
    workflow_node: typeof links?.workflowNode === 'string' ? links.workflowNode : null,
    parent_id: typeof links?.parentId === 'string' ? links.parentId : null,
  };
}

export function limitsView(limits: QueueLimits) {
  return {
    rate: limits.rate === null ? null : { limit: limits.rate.limit, interval_ms: limits.rate.intervalMs },
    concurrency: limits.concurrency,
    group_concurrency: limits.groupConcurrency,
    max_length: limits.maxLength,
  };
}

export function queueView(queue: QueueInfo) {
  const marks = new Marks();
  const counts = Object.fromEntries(Object.entries(queue.counts).map(([state, n]) => [state, marks.count(`counts.${state}`, n)]));
  return marks.view({
    name: queue.name,
    paused: queue.paused,
    keep: queue.keep,
    limits: limitsView(queue.limits),
    counts,
    size: Object.values(counts).reduce((a, b) => a + b, 0),
    processed: marks.count('processed', queue.processed),
    failed: marks.count('failed', queue.failed),
    latency_ms: marks.count('latency_ms', queue.latency),
    groups: groupsView(marks, queue.groups),
  });
}

/** How many groups wait, and the running tasks of each group that has some. */
function groupsView(marks: Marks, groups: QueueInfo['groups'] | undefined) {
  const running = Object.entries(groups?.running ?? {}).map(([group, n]) => [group, marks.count(`groups.running.${group}`, n)] as const);
  return { waiting: groups === undefined ? 0 : marks.count('groups.waiting', groups.waiting), running: Object.fromEntries(running) };
}

export function scheduleView(s: Schedule) {
  const marks = new Marks();
  // A definition that could not be read shows with an empty cron (it never fires).
  marks.note(unreadableFields(s));
  return marks.view({
    id: s.id,
    cron: s.cron,
    timezone: s.timezone,
    task: s.task,
    overlap: s.overlap,
    catch_up: { policy: s.catchUp.policy, window_ms: s.catchUp.window },
    jitter_ms: s.jitter,
    start_at: marks.time('start_at', s.startAt),
    end_at: marks.time('end_at', s.endAt),
    paused: s.paused,
    pause_note: s.pauseNote,
    paused_until: marks.time('paused_until', s.pausedUntil),
    source: s.source,
    generation: marks.count('generation', s.generation),
    created_at: marks.time('created_at', s.createdAt),
    updated_at: marks.time('updated_at', s.updatedAt),
    next_run_at: marks.time('next_run_at', s.state.nextRunAt),
    last_fire_at: marks.time('last_fire_at', s.state.lastFireAt),
    last_outcome: s.state.lastOutcome,
  });
}

export function fireView(f: FireRecord) {
  const marks = new Marks();
  marks.note(unreadableFields(f));
  return marks.view({
    fire_id: f.fireId,
    nominal_at: marks.time('nominal_at', f.nominalAt),
    enqueued_at: marks.time('enqueued_at', f.enqueuedAt),
    lag_ms: f.lagMs === null || Number.isFinite(f.lagMs) ? f.lagMs : null,
    outcome: f.outcome,
    task_id: f.taskId,
    task_state: f.taskState,
  });
}

export function workerView(w: WorkerInfo) {
  const marks = new Marks();
  return marks.view({
    id: w.id,
    host: w.host,
    pid: w.pid,
    queues: w.queues,
    concurrency: w.concurrency,
    running: w.running,
    started_at: marks.time('started_at', w.startedAt),
    last_heartbeat_at: marks.time('last_heartbeat_at', w.lastHeartbeatAt),
    version: w.version,
  });
}

export function schedulerView(s: SchedulerStatus) {
  const marks = new Marks();
  return marks.view({
    id: s.id,
    host: s.host,
    pid: s.pid,
    leader: s.leader,
    epoch: s.epoch,
    started_at: marks.time('started_at', s.startedAt),
    last_tick_at: marks.time('last_tick_at', s.lastTickAt),
    last_seen_at: marks.time('last_seen_at', s.lastSeenAt),
    fires_last_minute: s.firesLastMinute,
    version: s.version,
  });
}

export function leaseView(lease: SchedulerLease | null) {
  if (!lease) return null;
  const marks = new Marks();
  return marks.view({ id: lease.holder, epoch: lease.epoch, expires_at: marks.time('expires_at', lease.expiresAt), fired_through: marks.time('fired_through', lease.firedThrough) });
}
