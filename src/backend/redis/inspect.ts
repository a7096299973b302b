/** Reading: queues, their counts and stats, task listings and records. */
import type { TaskRecord, TaskState } from '../../core/task.js';
import type { DailyStat, MinuteStat, QueueInfo, TaskPage } from '../contract.js';
import { decodeCursor, encodeCursor, pageLimit } from '../page-cursor.js';
import { countWithin, dayString, emptyCounts, MAX_STAT_DAYS, MAX_STAT_MINUTES } from '../shared.js';
import { decodeRecord, readableMeta } from './codec.js';
import type { RedisConnection } from './connection.js';
import { queuedLines, readQueued } from './queued-lines.js';

/** The states whose tasks a queue holds in a sorted set (queued ones are in a list). */
const ZSET_STATES = ['scheduled', 'retrying', 'running', 'completed', 'dead', 'cancelled'] as const;

export async function queueNames(c: RedisConnection): Promise<string[]> {
  return (await c.call(() => c.redis.smembers(c.keys.queues))).sort();
}

export async function findQueue(c: RedisConnection, id: string): Promise<string | null> {
  const queues = await queueNames(c);
  if (queues.length === 0) return null;
  const replies = await c.pipelined(queues.map((q) => ['hexists', c.keys.queueKey(q, 'meta'), id]));
  const index = replies.findIndex((r) => r[1] === 1);
  return index < 0 ? null : queues[index];
}

export async function listQueues(c: RedisConnection): Promise<QueueInfo[]> {
  const names = await queueNames(c);
  const infos = await Promise.all(names.map((name) => getQueue(c, name)));
  return infos.filter((info): info is QueueInfo => info !== null);
}

export async function getQueue(c: RedisConnection, queue: string): Promise<QueueInfo | null> {
  const known = await c.call(() => c.redis.sismember(c.keys.queues, queue));
  if (known !== 1) return null;
  const reply = (await c.runScript('queue-info', queue, [])) as (number | string | (string | number)[])[];
  // All numbers but the rate ('<limit> <interval ms>', '' for none) and the running per group.
  const r = reply.map(Number);
  const counts = emptyCounts();
  counts.queued = r[0];
  counts.scheduled = r[1];
  counts.running = r[2];
  counts.retrying = r[3];
  counts.completed = r[4];
  counts.dead = r[5];
  counts.cancelled = r[6];
  const bound = (n: number) => (n < 0 ? null : n);
  const [limit, intervalMs] = String(reply[15]).split(' ').map(Number);
  return {
    name: queue, paused: r[7] === 1, keep: { completed: bound(r[12]), dead: bound(r[13]), cancelled: bound(r[14]) },
    limits: { rate: reply[15] === '' ? null : { limit, intervalMs }, concurrency: bound(r[16]), groupConcurrency: bound(r[17]), maxLength: bound(r[18]) },
    held: reply[19] === 'rate' || reply[19] === 'concurrency' ? { limit: reply[19], until: reply[19] === 'rate' ? r[20] : null } : null,
    counts, processed: r[8], failed: r[9], refused: r[21], latency: r[10] < 0 ? 0 : Math.max(0, r[11] - r[10]),
    groups: { waiting: r[22], running: groupCounts(reply[23]) },
  };
}

/** Per group, its running tasks, from queue-info.lua's flat list (name, count, …). */
function groupCounts(flat: unknown): Record<string, number> {
  const running: Record<string, number> = {};
  if (!Array.isArray(flat)) return running;
  for (let i = 0; i + 1 < flat.length; i += 2) running[String(flat[i])] = Number(flat[i + 1]);
  return running;
}

export async function listTasks(c: RedisConnection, queue: string, state: TaskState, page: { limit?: number; cursor?: string } = {}): Promise<TaskPage> {
  const limit = pageLimit(page.limit);
  // The position is an offset into the state's list or zset.
  const [offset] = decodeCursor(page.cursor, queue, state, isOffset) ?? [0];
  const key = c.keys.queueKey(queue, state);
  let ids: string[];
  if (state === 'queued') {
    // The queue's line and its groups' (queued-lines.ts), each oldest first.
    ids = await readQueued(c, await queuedLines(c, queue), offset, limit);
  } else if (state === 'completed' || state === 'dead' || state === 'cancelled') {
    ids = await c.call(() => c.redis.zrevrange(key, offset, offset + limit - 1));
  } else {
    ids = await c.call(() => c.redis.zrange(key, offset, offset + limit - 1));
  }
  const tasks = await loadRecords(c, queue, ids, state);
  return { tasks, nextCursor: ids.length < limit ? null : encodeCursor(queue, state, [offset + ids.length]) };
}

/** The records of tasks of a queue, in order; `listed`: the state they were listed in, when known. */
export async function loadRecords(c: RedisConnection, queue: string, ids: string[], listed: TaskState | null = null): Promise<TaskRecord[]> {
  if (ids.length === 0) return [];
  const k = (name: 'meta' | 'payload' | 'result' | 'attempts' | 'logs') => c.keys.queueKey(queue, name);
  const replies =
    (await c.call(() =>
      c.redis
        .pipeline()
        .hmget(k('meta'), ...ids)
        .hmget(k('payload'), ...ids)
        .hmget(k('result'), ...ids)
        .hmget(k('attempts'), ...ids)
        .hmget(k('logs'), ...ids)
        .exec(),
    )) ?? [];
  const [metas, payloads, results, attempts, logs] = replies.map((r) => r[1] as (string | null)[]);
  const records: TaskRecord[] = [];
  for (const [i, id] of ids.entries()) {
    const meta = metas[i];
    if (!meta) continue;
    // A corrupt record does not say its state; the structure that holds the id does.
    const state = listed ?? (readableMeta(meta) ? null : await storedState(c, queue, id));
    records.push(decodeRecord(queue, id, meta, { payload: payloads[i], result: results[i], attempts: attempts[i], logs: logs[i] }, state));
  }
  return records;
}

/** The state whose list or set holds a task id, or null. */
async function storedState(c: RedisConnection, queue: string, id: string): Promise<TaskState | null> {
  const pipeline = c.redis.pipeline();
  for (const state of ZSET_STATES) pipeline.zscore(c.keys.queueKey(queue, state), id);
  const replies = (await c.call(() => pipeline.exec())) ?? [];
  const at = replies.findIndex((r) => r[1] !== null && r[1] !== undefined);
  if (at >= 0) return ZSET_STATES[at];
  // An unreadable record names no group: every line is looked in.
  const lines = await queuedLines(c, queue);
  const found = lines.keys.map((key) => c.call(() => c.redis.lpos(key, id)));
  return (await Promise.all(found)).some((r) => r !== null) ? 'queued' : null;
}

export async function getTask(c: RedisConnection, id: string): Promise<TaskRecord | null> {
  const queue = await findQueue(c, id);
  if (queue === null) return null;
  const [record] = await loadRecords(c, queue, [id]);
  return record ?? null;
}

export async function dailyStats(c: RedisConnection, queue: string, days: number): Promise<DailyStat[]> {
  countWithin('days', days, MAX_STAT_DAYS);
  const today = Math.floor((await c.now()) / 86_400_000);
  const counts = await counters(c, queue, 'd', today - days + 1, days);
  return counts.map(([day, processed, failed]) => ({ day: dayString(day), processed, failed }));
}

export async function minuteStats(c: RedisConnection, queue: string, minutes: number): Promise<MinuteStat[]> {
  countWithin('minutes', minutes, MAX_STAT_MINUTES);
  const current = Math.floor((await c.now()) / 60_000);
  const counts = await counters(c, queue, 'm', current - minutes + 1, minutes);
  return counts.map(([minute, processed, failed]) => ({ at: minute * 60_000, processed, failed }));
}

/** The processed/failed counters of `count` days or minutes from `first` (stats fields pd:/fd:, pm:/fm:). */
async function counters(c: RedisConnection, queue: string, unit: 'd' | 'm', first: number, count: number): Promise<[number, number, number][]> {
  const numbers = Array.from({ length: count }, (_, i) => first + i);
  const fields = numbers.flatMap((n) => [`p${unit}:${n}`, `f${unit}:${n}`]);
  const values = await c.call(() => c.redis.hmget(c.keys.queueKey(queue, 'stats'), ...fields));
  return numbers.map((n, i) => [n, Number(values[2 * i] ?? 0), Number(values[2 * i + 1] ?? 0)]);
}

/** A listing offset (Redis takes 64-bit indexes: any safe integer is one). */
function isOffset(position: unknown[]): position is [number] {
  return position.length === 1 && Number.isSafeInteger(position[0]) && (position[0] as number) >= 0;
}
