/**
 * Why a task that is not running has not started yet, in words an operator acts on: its queue is
 * paused, it waits for its time (scheduled, retrying), a limit of its queue holds it back (rate,
 * concurrency, its group's concurrency), no live worker serves its queue or handles its type, or
 * every worker that could run it is busy. Pure: the caller reads the queue and the live workers;
 * a finished or running task has no reason (null).
 */
import { handlesType, type TaskState } from './task.js';

export const WAITING_REASONS = [
  'paused', 'scheduled', 'retrying', 'rate-limited', 'concurrency-full', 'group-concurrency-full',
  'no-worker-for-queue', 'no-worker-for-type', 'workers-busy',
] as const;
export type WaitingReason = (typeof WAITING_REASONS)[number];

export interface Waiting {
  reason: WaitingReason;
  message: string;
  /** When the wait ends by itself (scheduled, retrying, rate-limited), epoch ms; else null. */
  until: number | null;
}

export interface WaitingTask {
  type: string;
  queue: string;
  state: TaskState;
  nextRunAt: number | null;
  attempt: number;
  maxRetries: number;
  /** The task's group in its queue (the enqueue option `group`); null or absent: none. */
  group?: string | null;
}

export interface WaitingWorker {
  queues: string[];
  concurrency: number;
  running: string[];
  /** The types and patterns it handles; undefined when the worker did not say (an older version). */
  types?: string[];
}

/** An interval in the units the CLI's --rate takes: 1h, 5m, 1s, 250ms. */
export function intervalText(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1_000 === 0) return `${ms / 1_000}s`;
  return `${ms}ms`;
}

/** A rate limit in words: `at most 1 start per 5s`, `at most 100 starts per 1s`. */
export function rateText(rate: { limit: number; intervalMs: number }): string {
  return `at most ${rate.limit} ${rate.limit === 1 ? 'start' : 'starts'} per ${intervalText(rate.intervalMs)}`;
}

/** A time in a message; a stored value that is no time Date holds says so rather than throwing. */
function at(ms: number): string {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? 'a time that cannot be read' : date.toISOString();
}

/** A limit of the task's queue that holds its waiting tasks back now (QueueInfo.held), with the limits' values for the message. */
export interface WaitingLimit {
  limit: 'rate' | 'concurrency';
  until: number | null;
  rate: { limit: number; intervalMs: number } | null;
  concurrency: number | null;
}

/**
 * The task's group's share of its queue's groupConcurrency: the limit and how many of the group
 * run now (QueueInfo.groups.running). Absent: the queue has no group concurrency, or the task no group.
 */
export interface WaitingGroup {
  groupConcurrency: number;
  running: number;
}

export interface WaitingContext {
  queuePaused: boolean;
  held?: WaitingLimit | null;
  group?: WaitingGroup | null;
  workers: WaitingWorker[];
}

export function whyWaiting(task: WaitingTask, context: WaitingContext): Waiting | null {
  if (task.state !== 'queued' && task.state !== 'scheduled' && task.state !== 'retrying') return null;
  // A wait for a time in a paused queue says both: the time alone would promise a start.
  const paused = context.queuePaused ? `; the queue ${task.queue} is paused` : '';
  if (task.state === 'scheduled' && task.nextRunAt !== null) {
    return { reason: 'scheduled', message: `scheduled for ${at(task.nextRunAt)}${paused}`, until: task.nextRunAt };
  }
  if (task.state === 'retrying' && task.nextRunAt !== null) {
    return { reason: 'retrying', message: `retrying at ${at(task.nextRunAt)} (attempt ${task.attempt + 1} of ${task.maxRetries + 1})${paused}`, until: task.nextRunAt };
  }
  if (context.queuePaused) return { reason: 'paused', message: `the queue ${task.queue} is paused`, until: null };
  const held = context.held ?? null;
  if (held?.limit === 'rate' && held.rate !== null) {
    const until = held.until === null ? '' : ` until ${at(held.until)}`;
    return { reason: 'rate-limited', message: `the queue ${task.queue} is rate-limited${until} (${rateText(held.rate)})`, until: held.until };
  }
  if (held?.limit === 'concurrency' && held.concurrency !== null) {
    return { reason: 'concurrency-full', message: `the queue ${task.queue} runs as many tasks as its concurrency allows (${held.concurrency})`, until: null };
  }
  const group = context.group ?? null;
  if (typeof task.group === 'string' && group !== null && group.running >= group.groupConcurrency) {
    return {
      reason: 'group-concurrency-full',
      message: `the group ${task.group} of the queue ${task.queue} runs as many tasks as its group concurrency allows (${group.groupConcurrency})`,
      until: null,
    };
  }
  const serving = context.workers.filter((w) => w.queues.includes(task.queue));
  if (serving.length === 0) return { reason: 'no-worker-for-queue', message: `no live worker serves the queue ${task.queue}`, until: null };
  const able = serving.filter((w) => w.types === undefined || handlesType(w.types, task.type));
  if (able.length === 0) return { reason: 'no-worker-for-type', message: `no live worker of the queue ${task.queue} handles the type ${task.type}`, until: null };
  if (able.every((w) => w.running.length >= w.concurrency)) {
    return { reason: 'workers-busy', message: `every live worker that handles it is busy (${able.length} worker(s), all slots taken)`, until: null };
  }
  return null;
}
