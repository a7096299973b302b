/**
 * Which fires of a schedule are due now and what to do with each (DESIGN §6.2): pure, so the
 * catch-up rules are tested without a store or a clock.
 */
import type { FireBatch, FireRequest } from '../backend/contract.js';
import { normalizeEnqueue } from '../core/options.js';
import type { CronSchedule } from './cron.js';
import { fireId, isPaused, templateOptions, type Schedule } from './schedule.js';

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
  /** A fire later than this many ms is "missed" and subject to the catch-up policy. */
  graceMs: number;
  /** catchUp `all` enqueues at most this many missed fires (the most recent). */
  maxCatchUp: number;
  /** At most this many due fires are looked at per plan; the rest wait for the next plan. */
  maxFires: number;
}

export const DEFAULT_PLAN_OPTIONS: PlanOptions = { graceMs: 2_000, maxCatchUp: 100, maxFires: 10_000 };

export function planFires(schedule: Schedule, cron: CronSchedule, now: number, options: PlanOptions = DEFAULT_PLAN_OPTIONS): FirePlan {
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
  const window = schedule.catchUp.window;
  const policy = schedule.catchUp.policy;
  const late = (t: number) => t < now - options.graceMs;
  const lateInWindow = due.filter((t) => late(t) && t >= now - window);
  let caughtUp: Set<number>;
  if (policy === 'skip') caughtUp = new Set();
  else if (policy === 'latest') caughtUp = new Set(lateInWindow.slice(-1));
  else caughtUp = new Set(lateInWindow.slice(-options.maxCatchUp));
  const fires = due.map((t): PlannedFire => ({ nominalAt: t, action: !late(t) || caughtUp.has(t) ? 'enqueue' : 'missed' }));
  const handled = due.length > 0 ? due[due.length - 1] : watermark;
  let nextRunAt = cron.next(Math.max(now, handled));
  if (nextRunAt !== null && schedule.endAt !== null && nextRunAt > schedule.endAt) nextRunAt = null;
  if (nextRunAt !== null && schedule.startAt !== null && nextRunAt < schedule.startAt) nextRunAt = cron.next(schedule.startAt - 1);
  return { fires, watermark: handled, nextRunAt };
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

/** The fire record (and for `enqueue` its task) of one nominal time of a schedule. */
export function fireRequest(
  schedule: Schedule,
  nominalAt: number,
  action: 'enqueue' | 'missed',
  id: string = fireId(schedule.id, schedule.generation, nominalAt),
): FireRequest {
  if (action === 'missed') return { fireId: id, nominalAt, action };
  const task = normalizeEnqueue(schedule.task.type, schedule.task.payload, { ...templateOptions(schedule.task, id), links: { scheduleFireId: id } }, {
    maxPayloadBytes: Number.MAX_SAFE_INTEGER,
    defaults: {},
  });
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
