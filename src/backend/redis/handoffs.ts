/**
 * Workflows on a Redis Cluster: carrying their steps between slots. On one server a node's end
 * and all it sets off (its children started, failFast's cancels, the workflow's finish and
 * onFinish task) are one script over the workflow's keys and its nodes' queues. On a Cluster
 * those lie in different slots, so each slot does its part and hands the rest off:
 * - a queue script that ends a node's task notes the end in the queue's `handoff` set
 *   (lua/lib/node-ends.lua); `workflow-settle` settles the ends in the workflow's slot;
 * - a workflow step notes what it does elsewhere in the workflow's `handoff` set (a task to
 *   start, cancel or enqueue in a queue, its place in the lists by state: lib/workflow.lua
 *   hand_off); `workflow-apply` applies a queue's entries in that queue's slot, and the lists
 *   by state are set here from the workflow's meta.
 * The call that caused a step carries its hand-offs until none is left, before it answers, so a
 * caller sees what one server would show. An entry leaves its set only once applied; applying
 * one again changes nothing (a start is applied once, lua/workflow-apply.lua), so a relay that
 * stopped halfway (a crashed process) is finished by the next one: a worker's recovery pass
 * relays its queues' sets, and `sweepHandoffs` the workflows a client was carrying.
 */
import { WORKFLOW_STATES } from '../workflow-contract.js';
import type { RedisConnection } from './connection.js';

/** Entries read from a set per call (each is a script argument). */
const CHUNK = 1000;
/** Rounds of settle-and-apply one relay makes before it leaves the rest to the next. */
const MAX_ROUNDS = 10_000;

/** A hand-off entry as its set holds it: the JSON text, and its decoded fields. */
interface Entry {
  text: string;
  fields: unknown[];
}

/**
 * Carries the hand-offs of `queues` (node ends) and `workflows` (their steps), and of what they
 * set off in turn, until none is left. Nothing to do on one server.
 */
export async function relayHandoffs(c: RedisConnection, from: { queues?: Iterable<string>; workflows?: Iterable<string> }): Promise<void> {
  if (!c.isCluster) return;
  try {
    await relay(c, from);
  } catch {
    // A master that does not answer (a failover): what is left stays in its set, for the next
    // relay of that queue or a worker's sweep. The call that caused it did its own part, and
    // answers so — an ack that failed here would give its tasks back for nothing.
  }
}

async function relay(c: RedisConnection, from: { queues?: Iterable<string>; workflows?: Iterable<string> }): Promise<void> {
  let queues = new Set(from.queues ?? []);
  let workflows = new Set(from.workflows ?? []);
  for (let round = 0; round < MAX_ROUNDS && (queues.size > 0 || workflows.size > 0); round++) {
    // Node ends, settled per workflow in the order they happened; removed from their queue's set
    // once what they set off is applied (a relay stopped before then settles them again: nothing
    // changes, and the workflow's hand-offs are carried).
    const settled: { queue: string; entries: Entry[] }[] = [];
    const next = new Set<string>();
    await Promise.all(
      [...queues].map(async (queue) => {
        const entries = await readSet(c, c.keys.queueHandoff(queue));
        if (entries.length === 0) return;
        settled.push({ queue, entries });
        if (entries.length === CHUNK) next.add(queue);
        const byWorkflow = groupBy(entries, (e) => String(e.fields[2]));
        for (const id of byWorkflow.keys()) workflows.add(id);
        // Noted as carried before they settle: the queue's entries go once the workflows' first
        // hand-offs are applied, and a sweep finds the rest should this process stop.
        await c.call(() => c.redis.sadd(c.keys.handoffWorkflows, ...byWorkflow.keys()));
        await Promise.all(
          [...byWorkflow].map(([id, ends]) => c.runScript('workflow-settle', '', [queue, ...ends.map((e) => e.text)], [c.keys.workflow(id).meta])),
        );
      }),
    );
    // A workflow whose hand-offs were applied is looked at once more: with none left it is no
    // longer noted as carried.
    const more = new Set<string>();
    await Promise.all(
      [...workflows].map(async (id) => {
        const applied = await applyWorkflowHandoffs(c, id);
        applied.queues.forEach((q) => next.add(q));
        if (applied.applied) more.add(id);
      }),
    );
    await Promise.all(settled.map(({ queue, entries }) => removeEntries(c, c.keys.queueHandoff(queue), entries)));
    queues = next;
    workflows = more;
  }
}

/**
 * Applies a workflow's hand-offs (up to one read's worth) in their queues' slots and files it by
 * state; returns the queues touched, and whether there were any (then more may wait). With none,
 * the workflow is no longer noted as carried.
 */
async function applyWorkflowHandoffs(c: RedisConnection, id: string): Promise<{ queues: string[]; applied: boolean }> {
  const key = c.keys.workflowHandoff(id);
  const entries = await readSet(c, key);
  if (entries.length === 0) {
    await c.call(() => c.redis.srem(c.keys.handoffWorkflows, id));
    return { queues: [], applied: false };
  }
  const indexed = entries.some((e) => e.fields[1] === 'index');
  const byQueue = groupBy(
    entries.filter((e) => e.fields[1] !== 'index'),
    (e) => String(e.fields[2]),
  );
  c.register(byQueue.keys());
  await Promise.all(
    [...byQueue].map(([queue, list]) => c.runScript('workflow-apply', queue, list.map((e) => `${id}\t${e.text}`))),
  );
  if (indexed) await fileWorkflow(c, id);
  await removeEntries(c, key, entries);
  return { queues: [...byQueue.keys()], applied: true };
}

/**
 * Sets a workflow's place in the lists of workflows (all, by state, by end of retention) from its
 * meta, as lua/workflow-create.lua, workflow-retry.lua and lib/workflow.lua's finish do on one
 * server; filing it again changes nothing.
 */
export async function fileWorkflow(c: RedisConnection, id: string): Promise<void> {
  const [state, created, finished, retention] = await c.call(() => c.redis.hmget(c.keys.workflow(id).meta, 'state', 'created', 'finished', 'retention'));
  if (state === null || created === null) return;
  const writes: Promise<unknown>[] = [c.redis.zadd(c.keys.workflows, created, id)];
  for (const s of WORKFLOW_STATES) writes.push(s === state ? c.redis.zadd(c.keys.workflowsIn(s), created, id) : c.redis.zrem(c.keys.workflowsIn(s), id));
  if (state === 'running' || finished === null) writes.push(c.redis.zrem(c.keys.workflowExpiry, id));
  else writes.push(c.redis.zadd(c.keys.workflowExpiry, Number(finished) + Number(retention ?? 0), id));
  await c.call(() => Promise.all(writes));
}

/**
 * Finishes what a client stopped carrying (a crash): the workflows noted as being carried, and
 * the node ends of `queues`. Called by a worker's recovery pass.
 */
export async function sweepHandoffs(c: RedisConnection, queues: string[]): Promise<void> {
  if (!c.isCluster) return;
  const workflows = await c.call(() => c.redis.srandmember(c.keys.handoffWorkflows, 100));
  await relayHandoffs(c, { queues, workflows });
}

/** Notes a workflow as being carried, before a step that may hand off (so a crash leaves a trace for sweepHandoffs). */
export async function noteCarrying(c: RedisConnection, id: string): Promise<void> {
  if (c.isCluster) await c.call(() => c.redis.sadd(c.keys.handoffWorkflows, id));
}

async function readSet(c: RedisConnection, key: string): Promise<Entry[]> {
  const texts = await c.call(() => c.redis.zrange(key, 0, CHUNK - 1));
  return texts.map((text) => ({ text, fields: JSON.parse(text) as unknown[] }));
}

async function removeEntries(c: RedisConnection, key: string, entries: Entry[]): Promise<void> {
  for (let from = 0; from < entries.length; from += CHUNK) {
    const part = entries.slice(from, from + CHUNK).map((e) => e.text);
    await c.call(() => c.redis.zrem(key, ...part));
  }
}

/** The entries by a key, each group in the entries' order. */
function groupBy(entries: Entry[], keyOf: (e: Entry) => string): Map<string, Entry[]> {
  const groups = new Map<string, Entry[]>();
  for (const e of entries) {
    const k = keyOf(e);
    const list = groups.get(k);
    if (list) list.push(e);
    else groups.set(k, [e]);
  }
  return groups;
}
