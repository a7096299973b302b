/**
 * Reading workflows on Redis: one with its nodes (lua/workflow-read.lua, so its nodes' states
 * are of one moment), a page of them (the sorted sets by creation), a node's parents' results.
 */
import { decodeCursor, encodeCursor, pageLimit, workflowListing } from '../page-cursor.js';
import { validateWorkflowState } from '../shared.js';
import type { WorkflowInputs, WorkflowNodeRecord, WorkflowNodeState, WorkflowPage, WorkflowRecord, WorkflowState } from '../workflow-contract.js';
import { decodeInputs } from './codec.js';
import type { PipelinedCommand, RedisConnection } from './connection.js';
import { NODE_LIST } from './keys.js';
import type { ScriptCall } from './scripts.js';


/**
 * workflow-read.lua's reply: meta (HGETALL), counts (state, n, …), and with nodes 6 values per
 * node; on a Cluster, for counts, a fourth list: the records of the started nodes (withTaskStates).
 */
type ReadReply = [string[], (string | number)[], (string | null)[]?, string[]?] | null;

function readCall(c: RedisConnection, id: string, what: 'nodes' | 'counts'): ScriptCall {
  return c.scriptCall('workflow-read', '', [id, what], [c.keys.workflow(id).meta]);
}

function toRecord(id: string, reply: NonNullable<ReadReply>): WorkflowRecord {
  const [flatMeta, flatCounts, flatNodes = []] = reply;
  const meta = new Map<string, string>();
  for (let i = 0; i < flatMeta.length; i += 2) meta.set(flatMeta[i], flatMeta[i + 1]);
  const counts: WorkflowRecord['counts'] = {};
  for (let i = 0; i < flatCounts.length; i += 2) counts[flatCounts[i] as WorkflowNodeState] = Number(flatCounts[i + 1]);
  const nodes: WorkflowNodeRecord[] = [];
  for (let i = 0; i < flatNodes.length; i += 6) {
    // The node's record (workflows.ts encodeNodeRecord): task id, queue, when, parents, children, fragment, runOnFailure, type, payload.
    const [taskId, queue, , parents, , , runOnFailure, type] = flatNodes[i + 1]!.split('\t', 8);
    nodes.push({
      id: flatNodes[i]!, type, queue, state: flatNodes[i + 2] as WorkflowNodeState, taskId: Number(flatNodes[i + 5]) === 1 ? taskId : null,
      dependsOn: parents === '' ? [] : parents.split(NODE_LIST), runOnFailure: runOnFailure === '1', result: flatNodes[i + 3] ?? null, error: flatNodes[i + 4] ?? null,
    });
  }
  const name = meta.get('name');
  const finished = meta.get('finished');
  return {
    id, name: name === undefined ? null : (JSON.parse(name) as string), state: meta.get('state') as WorkflowState, failFast: meta.get('failFast') === '1',
    createdAt: Number(meta.get('created')), finishedAt: finished === undefined ? null : Number(finished), onFinishTaskId: meta.get('onFinishTask') ?? null,
    counts, nodes,
  };
}

export async function getWorkflow(c: RedisConnection, id: string): Promise<WorkflowRecord | null> {
  const call = readCall(c, id, 'nodes');
  const reply = await withTaskStates(c, (await c.runScripts([call]))[0] as ReadReply);
  return reply === null ? null : toRecord(id, reply);
}

/**
 * On a Cluster the script cannot read a started node's task (its queue is another slot): it
 * reports such a node 'started' (or, for counts, lists its record), and the tasks are read here,
 * a pipeline per queue — so the nodes' states are of one moment per queue, not across them.
 */
async function withTaskStates(c: RedisConnection, reply: ReadReply): Promise<ReadReply> {
  if (reply === null || !c.isCluster) return reply;
  const [meta, flatCounts, nodes = [], started = []] = reply;
  const records: string[] = [];
  const at: number[] = [];
  for (let i = 0; i < nodes.length; i += 6) {
    if (Number(nodes[i + 5]) === -1) {
      records.push(nodes[i + 1]!);
      at.push(i);
    }
  }
  for (const record of started) {
    records.push(record);
    at.push(-1);
  }
  if (records.length === 0) return [meta, flatCounts, nodes];
  const replies = await c.pipelined(
    records.map((record): PipelinedCommand => {
      // The record (workflows.ts encodeNodeRecord) begins with the task id and the queue.
      const [taskId, queue] = record.split('\t', 2);
      return ['hget', c.keys.queueKey(queue, 'meta'), taskId];
    }),
  );
  const counts = new Map<string, number>();
  for (let i = 0; i < flatCounts.length; i += 2) counts.set(String(flatCounts[i]), Number(flatCounts[i + 1]));
  replies.forEach(([error, raw], j) => {
    if (error) throw error;
    const node = at[j];
    if (node >= 0) nodes[node + 5] = typeof raw === 'string' ? '1' : '0';
    // Only a started node's state is its task's; a task not there yet is one whose start is
    // still being handed to its queue (handoffs.ts): pending.
    if (node >= 0 && nodes[node + 2] !== 'started') return;
    const state = typeof raw === 'string' ? (/^\{"s":"(\w+)"/.exec(raw)?.[1] ?? String((JSON.parse(raw) as { s?: unknown }).s)) : 'pending';
    counts.set(state, (counts.get(state) ?? 0) + 1);
    if (node >= 0) nodes[node + 2] = state;
  });
  return [meta, [...counts].flat(), nodes];
}

const LISTING = 'workflows';

/** Newest first (by creation, then id, as a sorted set orders equal scores), of one state or all. */
export async function listWorkflows(c: RedisConnection, options: { state?: WorkflowState; limit?: number; cursor?: string }): Promise<WorkflowPage> {
  const state = options.state === undefined ? null : validateWorkflowState(options.state);
  const limit = pageLimit(options.limit);
  const scope = state ?? 'all';
  const after = decodeCursor(options.cursor, LISTING, scope, (p): p is [number, string] => p.length === 2 && Number.isSafeInteger(p[0]) && typeof p[1] === 'string', workflowListing(state));
  const key = state === null ? c.keys.workflows : c.keys.workflowsIn(state);
  const rows = await newestFirst(c, key, after, limit + 1);
  const page = rows.slice(0, limit);
  const replies = await Promise.all(((await c.runScripts(page.map(([id]) => readCall(c, id, 'counts')))) as ReadReply[]).map((reply) => withTaskStates(c, reply)));
  // A workflow deleted between the two reads is left out.
  const workflows = page.flatMap(([id], i) => {
    const reply = replies[i];
    return reply === null ? [] : [toRecord(id, reply)];
  });
  const last = page[page.length - 1];
  return { workflows, nextCursor: rows.length > limit && last ? encodeCursor(LISTING, scope, [last[1], last[0]]) : null };
}

/**
 * Up to `count` members of a sorted set by creation, newest first, after the cursor's
 * (created, id): first those created in the same ms with a smaller id (Redis orders equal scores
 * by their bytes), then the older ones. Returns [id, created] pairs.
 */
async function newestFirst(c: RedisConnection, key: string, after: [number, string] | null, count: number): Promise<[string, number][]> {
  const pairs = (flat: string[]): [string, number][] => {
    const out: [string, number][] = [];
    for (let i = 0; i < flat.length; i += 2) out.push([flat[i], Number(flat[i + 1])]);
    return out;
  };
  if (after === null) return pairs(await c.call(() => c.redis.zrevrangebyscore(key, '+inf', '-inf', 'WITHSCORES', 'LIMIT', 0, count)));
  const [created, id] = after;
  const cursorId = Buffer.from(id);
  const replies =
    (await c.call(() =>
      c.redis.pipeline().zrangebyscore(key, created, created).zrevrangebyscore(key, `(${created}`, '-inf', 'WITHSCORES', 'LIMIT', 0, count).exec(),
    )) ?? [];
  const ties = (replies[0]?.[1] as string[] | undefined ?? [])
    .filter((member) => Buffer.compare(Buffer.from(member), cursorId) < 0)
    .sort((a, b) => Buffer.compare(Buffer.from(b), Buffer.from(a)))
    .map((member): [string, number] => [member, created]);
  return [...ties, ...pairs((replies[1]?.[1] as string[] | undefined) ?? [])].slice(0, count);
}

/** The parents' states and results of workflow nodes, in one call (lua/workflow-inputs.lua); null for a node unknown. */
export async function workflowInputs(c: RedisConnection, nodes: Array<{ workflowId: string; node: string }>): Promise<Array<WorkflowInputs | null>> {
  if (nodes.length === 0) return [];
  if (c.isCluster && nodes.some((n) => n.workflowId !== nodes[0].workflowId)) {
    // On a Cluster each workflow is its own slot: a call per workflow.
    const byWorkflow = new Map<string, number[]>();
    nodes.forEach((n, i) => byWorkflow.set(n.workflowId, [...(byWorkflow.get(n.workflowId) ?? []), i]));
    const out = new Array<WorkflowInputs | null>(nodes.length);
    await Promise.all(
      [...byWorkflow.values()].map(async (indexes) => {
        const inputs = await workflowInputs(c, indexes.map((i) => nodes[i]));
        indexes.forEach((at, j) => (out[at] = inputs[j]));
      }),
    );
    return out;
  }
  const args: string[] = [String(nodes.length)];
  for (const { workflowId, node } of nodes) args.push(workflowId, node);
  const reply = (await c.runScript('workflow-inputs', '', args, [c.keys.workflow(nodes[0].workflowId).meta])) as Array<string | null>;
  return reply.map((raw) => (raw === null ? null : (decodeInputs(raw) ?? null)));
}
