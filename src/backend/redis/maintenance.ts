/**
 * The passes of a worker's maintenance (lua/forward.lua, recover.lua, cleanup.lua): each does at
 * most `limit` tasks of one queue and returns how many it did.
 */
import { DEFAULT_BACKOFF, JITTER_FRACTION } from '../../core/backoff.js';
import { DEFAULT_RETENTION } from '../contract.js';
import type { RedisConnection } from './connection.js';
import { sweepHandoffs } from './handoffs.js';

/** Moves due scheduled and retrying tasks to queued. */
export async function forwardDue(c: RedisConnection, queue: string, limit: number): Promise<number> {
  return Number(await c.runScript('forward', queue, [limit]));
}

/**
 * Ends the attempts whose lease expired: retrying with backoff, or dead when out of retries. On a
 * Cluster it also carries the queue's workflow hand-offs, and those a stopped client left
 * (handoffs.ts).
 */
export async function recoverExpired(c: RedisConnection, queue: string, limit: number): Promise<number> {
  const backoff = DEFAULT_BACKOFF.type === 'exponential' ? DEFAULT_BACKOFF : { base: 10_000, max: 3_600_000 };
  const seed = Math.floor(Math.random() * 2 ** 31);
  const recovered = Number(
    await c.runScript('recover', queue, [
      limit, DEFAULT_RETENTION.dead, DEFAULT_RETENTION.cancelled, backoff.base, backoff.max, seed, JITTER_FRACTION,
    ]),
  );
  await sweepHandoffs(c, [queue]);
  return recovered;
}

/** Deletes finished tasks whose retention ended. */
export async function cleanup(c: RedisConnection, queue: string, limit: number): Promise<number> {
  return Number(await c.runScript('cleanup', queue, [limit]));
}
