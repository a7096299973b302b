/**
 * An operator's actions: pausing and resuming a queue, its keep bounds, and run, archive,
 * delete, cancel of one task (lua/operate.lua) or of a queue's tasks in one state (operate-all.lua).
 * A workflow node's dead or cancelled task is not run on its own (its workflow's retry runs it);
 * one that an action finishes or deletes settles its node in the same script (lua/lib/workflow.lua).
 */
import { TasklineError } from '../../core/errors.js';
import { validateQueueName } from '../../core/options.js';
import type { OperatorAction } from '../../core/transitions.js';
import { DEFAULT_RETENTION, KEPT_STATES, type BulkState, type QueueKeep, type QueueLimits, type QueueLimitsUpdate } from '../contract.js';
import { operationError, validateQueueKeep, validateQueueLimits, workflowNodeError } from '../shared.js';
import type { ChainableCommander } from 'ioredis';
import type { RedisConnection } from './connection.js';
import { relayHandoffs } from './handoffs.js';
import { findQueue } from './inspect.js';

/** Tasks one operate-all call looks at. */
const BULK_LIMIT = 500;

export async function pauseQueue(c: RedisConnection, queue: string): Promise<void> {
  c.register([queue]);
  await c.call(() => c.redis.set(c.keys.queueKey(queue, 'paused'), '1'));
}

export async function resumeQueue(c: RedisConnection, queue: string): Promise<void> {
  await c.call(() => c.redis.multi().del(c.keys.queueKey(queue, 'paused')).zadd(c.keys.queueKey(queue, 'marker'), 0, '1').exec());
}

/**
 * A transaction on a queue's keys that registers the queue too, so that its settings never exist
 * without it: in the transaction on one server; first, on its own, on a Cluster (the registry
 * lies in another slot).
 */
async function registeringMulti(c: RedisConnection, queue: string): Promise<ChainableCommander> {
  if (!c.isCluster) return c.redis.multi().sadd(c.keys.queues, queue);
  await c.call(() => c.redis.sadd(c.keys.queues, queue));
  return c.redis.multi();
}

export async function setQueueKeep(c: RedisConnection, queue: string, keep: Partial<QueueKeep>): Promise<QueueKeep> {
  validateQueueName(queue);
  const bounds = validateQueueKeep(keep);
  const key = c.keys.queueKey(queue, 'keep');
  const set = Object.entries(bounds).filter(([, n]) => n !== null);
  const cleared = Object.entries(bounds).filter(([, n]) => n === null).map(([state]) => state);
  const multi = await registeringMulti(c, queue);
  if (set.length > 0) multi.hset(key, Object.fromEntries(set));
  if (cleared.length > 0) multi.hdel(key, ...cleared);
  multi.hmget(key, ...KEPT_STATES);
  const replies = await c.call(() => multi.exec());
  if (!replies) throw new TasklineError('TL_STORE_UNAVAILABLE', `setting the keep bounds of queue ${queue}: the transaction was aborted`);
  const failed = replies.find(([error]) => error);
  if (failed) throw failed[0] as Error;
  c.registered.add(queue);
  const now = replies[replies.length - 1][1] as (string | null)[];
  return Object.fromEntries(KEPT_STATES.map((state, i) => [state, now[i] === null ? null : Number(now[i])])) as QueueKeep;
}

/** The keep hash's fields of the limits (keys.ts), in QueueLimits order; the rate is '<limit> <interval ms>'. */
const LIMIT_FIELDS = ['rate', 'concurrency', 'groupConcurrency', 'maxLength'] as const;

export async function setQueueLimits(c: RedisConnection, queue: string, limits: QueueLimitsUpdate): Promise<QueueLimits> {
  validateQueueName(queue);
  const update = validateQueueLimits(limits);
  const set: string[] = [];
  const cleared: string[] = [];
  for (const field of LIMIT_FIELDS) {
    if (!(field in update)) continue;
    const value = update[field];
    if (value === null || value === undefined) cleared.push(field);
    else set.push(field, typeof value === 'number' ? String(value) : `${value.limit} ${value.intervalMs}`);
  }
  // Registered first, so that its settings never exist without it; the limits, the parked groups
  // of a groupConcurrency changed and the workers' wake-up in one script (lua/limits.lua).
  await c.call(() => c.redis.sadd(c.keys.queues, queue));
  c.registered.add(queue);
  const [rate, concurrency, groupConcurrency, maxLength] = (await c.runScript('limits', queue, [set.length / 2, ...set, ...cleared])) as (string | null)[];
  const [limit, intervalMs] = (rate ?? '').split(' ').map(Number);
  const count = (v: string | null) => (v === null ? null : Number(v));
  return { rate: rate === null ? null : { limit, intervalMs }, concurrency: count(concurrency), groupConcurrency: count(groupConcurrency), maxLength: count(maxLength) };
}

/** Applies an action to one task. Returns 'ok' or 'requested' (a running task's cancel). */
export async function operateTask(c: RedisConnection, id: string, action: OperatorAction): Promise<string> {
  const queue = await findQueue(c, id);
  if (queue === null) throw new TasklineError('TL_TASK_NOT_FOUND', `no task with id ${JSON.stringify(id)}`);
  const reply = String(await c.runScript('operate', queue, [action, id, DEFAULT_RETENTION.dead, DEFAULT_RETENTION.cancelled]));
  // On a Cluster a node task's end is handed to its workflow's slot (handoffs.ts).
  await relayHandoffs(c, { queues: [queue] });
  if (reply === 'missing') throw new TasklineError('TL_TASK_NOT_FOUND', `no task with id ${JSON.stringify(id)}`);
  if (reply.startsWith('invalid:')) throw operationError(action, id, reply.slice(8));
  if (reply === 'workflow') throw workflowNodeError(id);
  return reply;
}

/** Applies an action to every task of a queue in one state that accepts it; returns how many. */
export async function operateAll(c: RedisConnection, queue: string, state: BulkState, action: Exclude<OperatorAction, 'cancel'>): Promise<number> {
  let total = 0;
  // Each batch is one atomic script. Tasks that cannot take the action stay where they are (a
  // workflow node's dead or cancelled task is not run): the next batch starts after the last of
  // them (the cursor), so a full batch of them is gone past; stop at a batch short of the limit,
  // or one that neither acted nor moved the cursor (nothing left to go past).
  let cursor = '';
  let score = '';
  for (;;) {
    const [done, seen, nextCursor, nextScore] = (await c.runScript('operate-all', queue, [
      action, state, BULK_LIMIT, DEFAULT_RETENTION.dead, DEFAULT_RETENTION.cancelled, cursor, score,
    ])) as [number, number, string, string];
    total += done;
    await relayHandoffs(c, { queues: [queue] });
    if (seen < BULK_LIMIT || (done === 0 && nextCursor === cursor && nextScore === score)) return total;
    cursor = nextCursor;
    score = nextScore;
  }
}
