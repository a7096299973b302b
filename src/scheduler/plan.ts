/**
 * Which fires of a schedule are due now and what to do with each: pure, so
 * the catch-up rules are tested without a store or a clock.
 */
import type { FireBatch, FireRequest, SchedulerDowntime } from '../backend/contract.js';
import { isTasklineError } from '../core/errors.js';
import { normalizeEnqueue } from '../core/options.js';
import type { NewTask } from '../core/task.js';
import type { CronSchedule } from './cron.js';
import { fireId, isPaused, templateOptions, type Schedule } from '../core/schedule.js';

export interface PlannedFire {
  nominalAt: number;
  action: 'enqueue' | 'missed';
}

export interface FirePlan {
  fires: PlannedFire[];
  /** The latest nominal time handled by this plan (unchanged when nothing was due). */
  watermark: number;
  /** The next fire after now, or null (paused, ended, never again). */
  nextRunAt: number | null;
}

export interface PlanOptions {
  /** A fire later than this many ms may be a missed one (see planFires). */
  graceMs: number;
  /** catchUp `all` enqueues at most this many missed fires (the most recent). */
  maxCatchUp: number;
  /** At most this many due fires are looked at per plan; the rest wait for the next plan. */
  maxFires: number;
}

export const DEFAULT_PLAN_OPTIONS: PlanOptions = { graceMs: 2_000, maxCatchUp: 100, maxFires: 10_000 };

/** Whether a nominal time lies in scheduler downtime: before what the store knows, or in one of its gaps. */
export function inDowntime(t: number, downtime: SchedulerDowntime): boolean {
  if (t <= downtime.since) return true;
  for (const [from, until] of downtime.gaps) if (t > from && t <= until) return true;
  return false;
}

/**
 * The due fires of a schedule as of `now` (store time) and what to do with each. A fire more than `graceMs` late is *missed* when no scheduler ran at its time (it lies
 * in `downtime`; without it, every late fire counts as missed) or the schedule was paused then;
 * missed fires go to the catch-up policy within its window and are recorded `missed` otherwise.
 * Any other late fire was delayed (a failover, a busy leader): it is enqueued, late.
 */
export function planFires(schedule: Schedule, cron: CronSchedule, now: number, options: PlanOptions = DEFAULT_PLAN_OPTIONS, downtime?: SchedulerDowntime): FirePlan {
  const { watermark } = schedule.state;
  if (isPaused(schedule, now)) return { fires: [], watermark, nextRunAt: null };
  const start = schedule.startAt === null ? watermark : Math.max(watermark, schedule.startAt - 1);
  const end = schedule.endAt === null ? now : Math.min(now, schedule.endAt);
  const due: number[] = [];
  let cursor = start;
  while (due.length < options.maxFires) {
    const next = cron.next(cursor);
    if (next === null || next > end) break;
    due.push(next);
    cursor = next;
  }
  const pauseEnd = pauseEndOf(schedule);
  const missed = (t: number) => t < now - options.graceMs && (downtime === undefined || inDowntime(t, downtime) || t <= pauseEnd);
  const window = schedule.catchUp.window;
  const policy = schedule.catchUp.policy;
  const missedInWindow = due.filter((t) => missed(t) && t >= now - window);
  let caughtUp: Set<number>;
  if (policy === 'skip') caughtUp = new Set();
  else if (policy === 'latest') caughtUp = new Set(missedInWindow.slice(-1));
  else caughtUp = new Set(missedInWindow.slice(-options.maxCatchUp));
  const fires = due.map((t): PlannedFire => ({ nominalAt: t, action: !missed(t) || caughtUp.has(t) ? 'enqueue' : 'missed' }));
  const handled = due.length > 0 ? due[due.length - 1] : watermark;
  return { fires, watermark: handled, nextRunAt: nextAfter(schedule, cron, Math.max(now, handled)) };
}

/** The end of the schedule's latest pause that is over (fires up to it were missed), or -Infinity. */
function pauseEndOf(schedule: Schedule): number {
  let end = schedule.resumedAt ?? -Infinity;
  if (schedule.paused && schedule.pausedUntil !== null) end = Math.max(end, schedule.pausedUntil);
  return end;
}

/** The schedule's first fire strictly after `after` within startAt/endAt, or null. */
function nextAfter(schedule: Schedule, cron: CronSchedule, after: number): number | null {
  const next = cron.next(schedule.startAt === null ? after : Math.max(after, schedule.startAt - 1));
  if (next === null || (schedule.endAt !== null && next > schedule.endAt)) return null;
  return next;
}

/**
 * When the schedule next has something to do, handling everything up to `floor` as done: its
 * first fire after its watermark and the floor, or the end of its pause (then it plans again);
 * null while paused without an end, or when it never fires again.
 */
export function firstDue(schedule: Schedule, cron: CronSchedule, floor = -Infinity): number | null {
  if (schedule.paused && schedule.pausedUntil === null) return null;
  const next = nextAfter(schedule, cron, Math.max(schedule.state.watermark, floor));
  if (next === null) return null;
  return schedule.paused && schedule.pausedUntil !== null ? Math.max(next, schedule.pausedUntil) : next;
}

/** The delay a schedule's jitter adds to a fire: the same for every scheduler (a hash of the fire id). */
export function jitterFor(fireId: string, jitterMs: number): number {
  if (jitterMs <= 0) return 0;
  let hash = 2166136261;
  for (let i = 0; i < fireId.length; i++) {
    hash ^= fireId.charCodeAt(i);
    hash = Math.imul(hash, 16777619);
  }
  return (hash >>> 0) % (jitterMs + 1);
}

/** The skip reason of a fire whose stored task template is no longer accepted. */
export const INVALID_TASK = 'invalid-task';

/** The fire record (and for `enqueue` its task) of one nominal time of a schedule. */
export function fireRequest(
  schedule: Schedule,
  nominalAt: number,
  action: 'enqueue' | 'missed',
  id: string = fireId(schedule.id, schedule.generation, nominalAt),
): FireRequest {
  if (action === 'missed') return { fireId: id, nominalAt, action };
  let task: NewTask;
  try {
    task = normalizeEnqueue(schedule.task.type, schedule.task.payload, { ...templateOptions(schedule.task, id), links: { scheduleFireId: id } }, {
      maxPayloadBytes: Number.MAX_SAFE_INTEGER,
      defaults: {},
    });
  } catch (error) {
    // A task stored under older rules that these refuse: this schedule's fires are recorded as
    // skipped (its fire history says so), and every other schedule fires as usual. Anything
    // but such a refusal is a bug, not a skipped fire.
    if (!isTasklineError(error)) throw error;
    return { fireId: id, nominalAt, action: 'skipped', reason: INVALID_TASK };
  }
  const delay = jitterFor(id, schedule.jitter);
  if (delay > 0) task.runAt = nominalAt + delay;
  return { fireId: id, nominalAt, action, task };
}

/** A batch of one schedule's fires, for the store's atomic fire operation. */
export function fireBatch(schedule: Schedule, fires: FireRequest[], options: { overlap?: FireBatch['overlap']; keepHistory?: number } = {}): FireBatch {
  return {
    scheduleId: schedule.id,
    queue: schedule.task.queue,
    overlap: options.overlap ?? schedule.overlap,
    previousTaskId: schedule.state.lastTaskId,
    fires,
    keepHistory: options.keepHistory ?? 1_000,
  };
}

/** Most fires of one queue in one store call. */
export const MAX_FIRES_PER_CALL = 5_000;

/** The batches of a tick, split into store calls so that no queue's call carries more than MAX_FIRES_PER_CALL fires. */
export function fireCalls(batches: FireBatch[]): FireBatch[][] {
  const out: FireBatch[][] = [];
  let current: FireBatch[] = [];
  const perQueue = new Map<string, number>();
  for (const batch of batches) {
    const n = (perQueue.get(batch.queue) ?? 0) + batch.fires.length;
    if (n > MAX_FIRES_PER_CALL && current.length > 0) {
      out.push(current);
      current = [];
      perQueue.clear();
    }
    current.push(batch);
    perQueue.set(batch.queue, (perQueue.get(batch.queue) ?? 0) + batch.fires.length);
  }
  if (current.length > 0) out.push(current);
  return out;
}
