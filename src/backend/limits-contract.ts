/** The queue controls of the backend contract (Backend.setQueueLimits, QueueInfo.limits; contract.ts). */

/**
 * A queue's controls (setQueueLimits), held by the store and applied by it in every claim and
 * enqueue, so they hold across any number of workers and producers; null: no limit.
 * - rate: at most `limit` tasks of the queue start in any `intervalMs` (a sliding window).
 * - concurrency: at most this many of the queue's tasks run at once (live leases).
 * - groupConcurrency: at most this many tasks of one group (the enqueue option `group`) run at
 *   once; the groups with waiting tasks take turns.
 * - maxLength: an enqueue that would make the queue's waiting tasks (queued, scheduled,
 *   retrying) more than this is refused (TL_QUEUE_FULL), a batch whole.
 */
export interface QueueLimits {
  rate: QueueRate | null;
  concurrency: number | null;
  groupConcurrency: number | null;
  maxLength: number | null;
}

export interface QueueRate {
  limit: number;
  intervalMs: number;
}

export const LIMIT_NAMES = ['rate', 'concurrency', 'groupConcurrency', 'maxLength'] as const;

/** A change of some limits: a limit left out keeps its value; null or 'none' removes it. */
export type QueueLimitsUpdate = { [K in keyof QueueLimits]?: QueueLimits[K] | 'none' };

/** Bounds of the limits accepted: starts per interval and running tasks; a rate's interval (a day); a queue's length. */
export const MAX_RATE_LIMIT = 100_000;
export const MAX_RATE_INTERVAL_MS = 86_400_000;
export const MAX_CONCURRENCY_LIMIT = 1_000_000;
export const MAX_QUEUE_LENGTH = 1_000_000_000;

export function noLimits(): QueueLimits {
  return { rate: null, concurrency: null, groupConcurrency: null, maxLength: null };
}
