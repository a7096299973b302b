/** Storing new tasks (lua/enqueue.lua): one script call per queue and chunk. */
import type { NewTask } from '../../core/task.js';
import type { EnqueueOutcome } from '../contract.js';
import { chunksByQueue } from './batches.js';
import { encodeRecordFragment } from './codec.js';
import type { PipelinedCommand, RedisConnection } from './connection.js';
import { scriptKeyNames } from './scripts.js';

/** Tasks per enqueue script call (see enqueueTasks). */
const ENQUEUE_CALL = 250;

/**
 * Stores tasks already checked (checkStorableTasks); an outcome per task, in order. `sizes`: the
 * callers' batches the tasks come from (enqueue-groups.ts), in order; one batch by default. A
 * queue with a maxLength takes or refuses each batch's tasks for it whole (lua/enqueue.lua).
 */
export async function enqueueTasks(c: RedisConnection, tasks: NewTask[], sizes: number[] = [tasks.length]): Promise<EnqueueOutcome[]> {
  const outcomes: EnqueueOutcome[] = new Array<EnqueueOutcome>(tasks.length);
  // Ids are unique across queues, but a script sees one queue: custom ids are first looked up
  // in the other queues (generated UUIDv7 ids cannot collide).
  const customIds = tasks.filter((t) => t.generatedId !== true);
  const elsewhere = customIds.length > 0 ? await idsInOtherQueues(c, customIds) : new Set<string>();
  // A repeat of an id within the batch is a conflict too, even when it names another queue.
  const seen = new Set<string>();
  const stored: number[] = [];
  tasks.forEach((task, index) => {
    // A generated id (UUIDv7) is new: only given ids can repeat.
    if (task.generatedId === true) stored.push(index);
    else if (elsewhere.has(task.id) || seen.has(task.id)) outcomes[index] = { ok: false, id: task.id, reason: 'id-conflict' };
    else {
      stored.push(index);
      seen.add(task.id);
    }
  });
  if (stored.length === 0) return outcomes;
  const batchOf = batchIndexes(sizes, tasks.length);
  // Smaller calls than other scripts take, each sent as soon as it is encoded: Redis stores one
  // while this process encodes the next (bulk enqueue in batches of 1,000: ~70k → ~85k tasks/s in a warm process).
  const chunks = chunksByQueue(tasks, stored, ENQUEUE_CALL);
  c.register(new Set(chunks.map(([queue]) => queue)));
  // How many tasks each batch has in each queue: a call holding all of them holds the batch whole.
  const perQueue = new Map<string, number>();
  for (const index of stored) {
    const key = `${batchOf[index]} ${tasks[index].queue}`;
    perQueue.set(key, (perQueue.get(key) ?? 0) + 1);
  }
  const split = await storeChunks(c, tasks, chunks, batchOf, (batch, queue, n) => perQueue.get(`${batch} ${queue}`) === n, outcomes);
  if (split.length > 0) {
    // Batches in several calls, for a queue with a maxLength: each again in one call of its own.
    const whole = new Map<string, number[]>();
    for (const index of split) {
      const key = `${batchOf[index]} ${tasks[index].queue}`;
      const indexes = whole.get(key);
      if (indexes) indexes.push(index);
      else whole.set(key, [index]);
    }
    await storeChunks(c, tasks, [...whole.values()].map((indexes) => [tasks[indexes[0]].queue, indexes]), batchOf, () => true, outcomes);
  }
  return outcomes;
}

/** The batch (index into `sizes`) of each task. */
function batchIndexes(sizes: number[], count: number): number[] {
  const batchOf = new Array<number>(count);
  let at = 0;
  sizes.forEach((size, batch) => {
    for (let i = 0; i < size; i++) batchOf[at++] = batch;
  });
  return batchOf.fill(sizes.length - 1, at);
}

/**
 * One enqueue script call per chunk (all sent at once), each with the batches its tasks come
 * from (`whole`: whether a batch's tasks here are all its tasks for the queue). Sets the
 * outcomes; returns the tasks the script sent back as 'split' (lua/enqueue.lua).
 */
async function storeChunks(
  c: RedisConnection, tasks: NewTask[], chunks: [string, number[]][], batchOf: number[],
  whole: (batch: number, queue: string, count: number) => boolean, outcomes: EnqueueOutcome[],
): Promise<number[]> {
  const sent: Promise<unknown>[] = [];
  for (const [queue, indexes] of chunks) {
    const extraKeys: string[] = [];
    // Plain tasks (queued now, no unique key) need 3 fields each, the others 7 (lua/enqueue.lua).
    const plain = indexes.every((index) => tasks[index].uniqueKey === null && tasks[index].delay === null && tasks[index].runAt === null);
    const args: (string | number)[] = [indexes.length, plain ? 3 : 7];
    for (const index of indexes) {
      const task = tasks[index];
      if (plain) {
        args.push(task.id, encodeRecordFragment(task), task.payload);
        continue;
      }
      let uniqueIndex = 0;
      if (task.uniqueKey !== null) {
        extraKeys.push(c.keys.unique(queue, task.uniqueKey));
        uniqueIndex = scriptKeyNames('enqueue').length + extraKeys.length;
      }
      args.push(
        task.id, encodeRecordFragment(task), task.payload, task.delay ?? -1, task.runAt ?? -1, uniqueIndex, task.uniqueFor ?? 0,
      );
    }
    // The batches, as runs of consecutive tasks.
    const runs: number[] = [];
    for (let i = 0; i < indexes.length; ) {
      const batch = batchOf[indexes[i]];
      let n = 0;
      while (i < indexes.length && batchOf[indexes[i]] === batch) {
        i++;
        n++;
      }
      runs.push(n, whole(batch, queue, n) ? 1 : 0);
    }
    args.push(runs.length / 2, ...runs);
    sent.push(c.runScript('enqueue', queue, args, extraKeys));
  }
  const replies = (await Promise.all(sent)) as string[][];
  const split: number[] = [];
  replies.forEach((reply, q) => {
    const [queue, indexes] = chunks[q];
    indexes.forEach((index, i) => {
      const task = tasks[index];
      const status = reply[i];
      if (status === 'queued' || status === 'scheduled') {
        outcomes[index] = { ok: true, info: { id: task.id, type: task.type, queue: task.queue, state: status } };
      } else if (status === 'id') {
        outcomes[index] = { ok: false, id: task.id, reason: 'id-conflict' };
      } else if (status === 'split') {
        split.push(index);
      } else if (status.startsWith('f:')) {
        const [limit, waiting] = status.slice(2).split(':').map(Number);
        outcomes[index] = { ok: false, id: task.id, reason: 'queue-full', queue, limit, waiting };
      } else {
        outcomes[index] = { ok: false, id: task.id, reason: 'unique-conflict', holder: status.slice(2) };
      }
    });
  });
  return split;
}

/** Custom ids that already exist in a queue other than the task's own. */
async function idsInOtherQueues(c: RedisConnection, tasks: NewTask[]): Promise<Set<string>> {
  const queues = await c.call(() => c.redis.smembers(c.keys.queues));
  const checks: { id: string }[] = [];
  const commands: PipelinedCommand[] = [];
  for (const task of tasks) {
    for (const queue of queues) {
      if (queue === task.queue) continue;
      commands.push(['hexists', c.keys.queueKey(queue, 'meta'), task.id]);
      checks.push({ id: task.id });
    }
  }
  if (checks.length === 0) return new Set();
  const replies = await c.pipelined(commands);
  return new Set(checks.filter((_, i) => replies[i]?.[1] === 1).map((check) => check.id));
}
