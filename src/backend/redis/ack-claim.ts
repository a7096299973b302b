/**
 * A worker's exchange with its queues (lua/claim.lua, ack.lua, ack-claim.lua): one script call
 * per queue, all written at once.
 */
import { FORWARD_LIMIT } from '../shared.js';
import { DEFAULT_RETENTION, type Ack, type AckAndClaimResult, type AckResult, type ClaimRequest, type ClaimResult } from '../contract.js';
import { chunksByQueue } from './batches.js';
import { decodeClaimed, encodeAttempt } from './codec.js';
import type { RedisConnection } from './connection.js';
import { relayHandoffs } from './handoffs.js';
import type { ScriptCall } from './scripts.js';

/**
 * `ack-claim` for a queue with acks and a claim, `ack` or `claim` for a queue with only one of
 * them.
 */
export async function ackAndClaim(c: RedisConnection, acks: Ack[], workerId: string, requests: ClaimRequest[], leaseMs: number): Promise<AckAndClaimResult> {
  if (acks.length === 0 && requests.length === 0) return { acks: [], claims: [] };
  if (requests.length > 0) c.register(requests.map((r) => r.queue));
  // A queue's acks may take several calls (chunksByQueue): its first carries the claim.
  const ackChunks = chunksByQueue(acks);
  const calls: ScriptCall[] = [];
  // Per call: the acks it carries (indexes into `acks`) and the claim request it makes.
  const parts: { acks: number[]; claim: ClaimRequest | null }[] = [];
  for (const request of requests) {
    const first = ackChunks.findIndex(([queue]) => queue === request.queue);
    const claimArgs = [request.count, workerId, leaseMs, FORWARD_LIMIT];
    if (first < 0) {
      calls.push(c.scriptCall('claim', request.queue, claimArgs));
      parts.push({ acks: [], claim: request });
      continue;
    }
    const { args, order } = ackArgs(acks, ackChunks.splice(first, 1)[0][1]);
    calls.push(c.scriptCall('ack-claim', request.queue, [...args, ...claimArgs]));
    parts.push({ acks: order, claim: request });
  }
  for (const [queue, indexes] of ackChunks) {
    const { args, order } = ackArgs(acks, indexes);
    calls.push(c.scriptCall('ack', queue, args));
    parts.push({ acks: order, claim: null });
  }
  const replies = (await c.runScripts(calls)) as (string | number)[][];
  const ackResults = new Array<AckResult>(acks.length);
  const claims: ClaimResult[] = [];
  // On a Cluster, the queues whose acks handed workflow node ends off (an applied ack's 2).
  const handedOff = new Set<string>();
  replies.forEach((reply, i) => {
    const { acks: indexes, claim } = parts[i];
    // ack-claim: { n, n ack results, claim reply }; ack: the n results; claim: the claim reply.
    const ackStart = claim && indexes.length > 0 ? 1 : 0;
    indexes.forEach((index, j) => {
      const applied = reply[ackStart + j];
      ackResults[index] = applied === 1 || applied === 2 ? 'ok' : 'stale';
      if (applied === 2) handedOff.add(acks[index].queue);
    });
    if (claim) claims.push(decodeClaimReply(reply, indexes.length > 0 ? 1 + indexes.length : 0, claim.queue, leaseMs));
  });
  if (handedOff.size > 0) await relayHandoffs(c, { queues: handedOff });
  return { acks: ackResults, claims };
}

/**
 * ack.lua's arguments for some of `acks` (all of one queue), and the order of its results (the
 * indexes into `acks`). In a batch of completions only — what a busy worker sends most — each
 * goes short, 2 arguments (3 with its result) instead of 6, grouped with the others of its lease
 * token (a claim's tasks share one) that have a result or that have none. A batch with any other
 * ack goes in full, in its order: a workflow's fan-in sees its nodes end in the order the worker
 * acked them (a completion then a failure is not a failure then a completion), as on SQLite.
 */
function ackArgs(acks: Ack[], indexes: number[]): { args: (string | number)[]; order: number[] } {
  const full: number[] = [];
  // By token, then 0 (no result) or 1.
  const short = new Map<string, number[]>();
  const allComplete = indexes.every((index) => acks[index].kind === 'complete');
  for (const index of indexes) {
    const ack = acks[index];
    if (ack.kind === 'complete' && allComplete) {
      const key = `${ack.result === '' ? 0 : 1}${ack.token}`;
      const group = short.get(key);
      if (group) group.push(index);
      else short.set(key, [index]);
    } else full.push(index);
  }
  const args: (string | number)[] = [full.length, DEFAULT_RETENTION.completed, DEFAULT_RETENTION.dead, DEFAULT_RETENTION.cancelled];
  for (const index of full) {
    const ack = acks[index];
    let kind: string = ack.kind;
    let data = '';
    let delay = 0;
    if (ack.kind === 'retry') {
      kind = ack.consumed ? 'retry' : 'retry-free';
      data = ack.error;
      delay = ack.delay;
    } else if (ack.kind === 'dead' || ack.kind === 'cancelled') data = ack.error;
    else if (ack.kind === 'hand-back') delay = ack.delay;
    else if (ack.kind === 'complete') data = ack.result;
    // A hand-back was no attempt and stores none; a completion only its finish time (as short).
    const attempt = ack.kind === 'hand-back' ? '' : ack.kind === 'complete' ? finishTime(ack.attempt) : encodeAttempt(ack.attempt);
    args.push(kind, ack.id, ack.token, data, delay, attempt);
  }
  args.push(short.size);
  const order = full;
  for (const [key, group] of short) {
    const withResults = key.charCodeAt(0) === 49;
    args.push(key.slice(1), group.length, withResults ? 1 : 0);
    for (const index of group) {
      const ack = acks[index] as Extract<Ack, { kind: 'complete' }>;
      // A completing attempt is not stored, only its finish time: the record says the rest (lua/ack.lua).
      args.push(ack.id, finishTime(ack.attempt));
      if (withResults) args.push(ack.result);
      order.push(index);
    }
  }
  return { args, order };
}

/** A completing attempt's finish time as ack.lua takes it ('' for the store's time). */
function finishTime(attempt: Ack['attempt']): number | '' {
  return attempt.finishedAt === null ? '' : Math.round(attempt.finishedAt);
}

/** claim.lua's reply, starting at `start` of `reply`. */
function decodeClaimReply(reply: (string | number)[], start: number, queue: string, leaseMs: number): ClaimResult {
  const tasks = [];
  const token = String(reply[start + 4]);
  const now = Number(reply[start + 3]);
  for (let j = start + 7; j < reply.length; j += 3) {
    tasks.push(decodeClaimed(queue, String(reply[j]), String(reply[j + 1]), String(reply[j + 2]), token, leaseMs, now));
  }
  const nextDue = Number(reply[start + 1]);
  const limited = reply[start + 5] === '' ? null : (String(reply[start + 5]) as ClaimResult['limited']);
  const limitedUntil = Number(reply[start + 6]);
  return {
    queue, tasks, paused: reply[start] === 1, more: reply[start + 2] === 1, nextDueAt: nextDue < 0 ? null : nextDue, now, limited,
    // When the limit may let a task start: a rate's next start, a lease's expiry (concurrency, group).
    limitedUntil: limited !== null && limitedUntil >= 0 ? limitedUntil : null,
  };
}
