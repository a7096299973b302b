/** The worker registry (a key per worker with a TTL, and a zset by expiry) and the recorded task types. */
import type { TaskTypeInfo, WorkerInfo } from '../contract.js';
import { decodeWorkerInfo } from '../shared.js';
import { decodeTaskType, encodeTaskType } from '../task-types.js';
import type { RedisConnection } from './connection.js';

export async function heartbeat(c: RedisConnection, info: WorkerInfo, ttlMs: number): Promise<void> {
  const now = await c.now();
  // Two independent idempotent writes: pipelined, without MULTI/EXEC (two commands fewer per beat).
  await c.call(() =>
    Promise.all([
      c.redis.set(c.keys.worker(info.id), JSON.stringify({ ...info, lastHeartbeatAt: now }), 'PX', ttlMs),
      c.redis.zadd(c.keys.workers, now + ttlMs, info.id),
    ]),
  );
}

export async function removeWorker(c: RedisConnection, id: string): Promise<void> {
  // Two keys in different slots on a Cluster: two commands, sent together (a listing between them
  // finds the id without its record, and skips it).
  await c.call(() => Promise.all([c.redis.del(c.keys.worker(id)), c.redis.zrem(c.keys.workers, id)]));
}

export async function listWorkers(c: RedisConnection): Promise<WorkerInfo[]> {
  const now = await c.now();
  await c.call(() => c.redis.zremrangebyscore(c.keys.workers, '-inf', now));
  const ids = await c.call(() => c.redis.zrange(c.keys.workers, 0, -1));
  if (ids.length === 0) return [];
  // A GET per worker (their keys lie in different slots on a Cluster), in one round trip.
  const replies = await c.pipelined(ids.map((id) => ['get', c.keys.worker(id)]));
  const failed = replies.find(([error]) => error);
  if (failed) throw failed[0] as Error;
  const raw = replies.map(([, value]) => value as string | null);
  return raw.map(decodeWorkerInfo).filter((w): w is WorkerInfo => w !== null);
}

export async function recordTaskTypes(c: RedisConnection, types: TaskTypeInfo[]): Promise<void> {
  if (types.length === 0) return;
  const now = await c.now();
  // Each type's document is written whole (HSET of independent fields): no read-modify-write.
  await c.call(() => c.redis.hset(c.keys.taskTypes, Object.fromEntries(types.map((info) => [info.type, encodeTaskType(info, now)]))));
}

export async function listTaskTypes(c: RedisConnection): Promise<TaskTypeInfo[]> {
  const all = await c.call(() => c.redis.hgetall(c.keys.taskTypes));
  return Object.keys(all)
    .sort()
    .map((type) => decodeTaskType(type, all[type]));
}
