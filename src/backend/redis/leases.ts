/** Lease renewal (lua/renew.lua): one script call per queue and chunk, in one round trip. */
import type { LeaseRef, RenewResult } from '../contract.js';
import { chunksByQueue } from './batches.js';
import type { RedisConnection } from './connection.js';

export async function renewLeases(c: RedisConnection, leases: LeaseRef[], leaseMs: number): Promise<RenewResult> {
  if (leases.length === 0) return { lost: [], cancelRequested: [] };
  const calls = chunksByQueue(leases).map(([queue, indexes]) =>
    c.scriptCall('renew', queue, [leaseMs, ...indexes.flatMap((i) => [leases[i].id, leases[i].token])]),
  );
  const replies = (await c.runScripts(calls)) as [string[], string[]][];
  return { lost: replies.flatMap((r) => r[0]), cancelRequested: replies.flatMap((r) => r[1]) };
}
