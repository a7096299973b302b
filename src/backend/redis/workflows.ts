/**
 * Workflow transitions on Redis (workflow-contract.ts): creating, cancelling, retrying and
 * cleaning up workflows, one script each (lua/workflow-*.lua). The fan-in of a node — its
 * result, its children's pending sets and their start, failFast, the finish and the onFinish
 * task — happens in the script that moves the node's task to a final state under its lease
 * (lua/lib/workflow.lua, called by the ack batch, recover and operate), so it is exactly once.
 * The reads are workflow-reads.ts.
 */
import { TasklineError } from '../../core/errors.js';
import type { TaskLinks } from '../../core/task.js';
import { isWellFormed } from '../../core/validate.js';
import { DEFAULT_WORKFLOW_RETENTION, WORKFLOW_STATES, type NewWorkflow, type WorkflowRecord, type WorkflowTaskSpec } from '../contract.js';
import { checkStorableTask, unstorableText } from '../shared.js';
import { encodeRecordFragment } from './codec.js';
import type { PipelinedCommand, RedisConnection } from './connection.js';
import { NODE_LIST } from './keys.js';
import { fileWorkflow, noteCarrying, relayHandoffs } from './handoffs.js';
import { getWorkflow } from './workflow-reads.js';

export { getWorkflow, listWorkflows, workflowInputs } from './workflow-reads.js';

/** Text JSON.stringify writes between quotes unchanged: no quote, backslash or control character. */
const JSON_PLAIN = /^[^"\\\p{Cc}]*$/u;

/** A workflow ready for lua/workflow-create.lua: its part of the script's arguments. */
export interface PreparedWorkflow {
  workflow: NewWorkflow;
  args: string[];
}

/**
 * Checks a workflow and makes its arguments; nothing is stored yet. Made node by node in plain
 * loops: a producer makes one per workflow, and a chain's nodes are most of its work.
 */
export function prepareWorkflow(wf: NewWorkflow): PreparedWorkflow {
  const nodes = wf.nodes;
  const onFinish = wf.onFinish;
  // Every node's links are {"workflowNode":…,"workflowId":…}, as JSON.stringify would write
  // them. An id that JSON writes as it is (a client's always is) is left for the start to add
  // (lib/workflow.lua start_node): the record ends after the node, and the id is not stored once
  // per node.
  const linksTail = JSON_PLAIN.test(wf.id) ? '' : `,"workflowId":${JSON.stringify(wf.id)}}`;
  const children = new Map<string, string[]>();
  const queues = new Set<string>();
  const badId = !isWellFormed(wf.id);
  for (const node of nodes) {
    const task = node.task;
    checkStorableTask(node.taskId, task.type, null, task.headers, null);
    if (badId || !isWellFormed(node.id)) throw unstorableText(node.taskId, badId ? 'links.workflowId' : 'links.workflowNode');
    children.set(node.id, []);
    queues.add(task.queue);
  }
  if (onFinish !== null) checkStorableTask(onFinish.taskId, onFinish.task.type, null, onFinish.task.headers, { workflowId: wf.id });
  for (const node of nodes) for (const parent of node.dependsOn) children.get(parent)?.push(node.id);
  const fresh = wf.generatedTaskIds === true;
  const onFinishLinks: TaskLinks = { workflowId: wf.id };
  // All text: ioredis passes strings on as they are.
  const args: string[] = [
    wf.id, wf.name === null ? '' : JSON.stringify(wf.name), wf.failFast ? '1' : '0', String(wf.retention ?? DEFAULT_WORKFLOW_RETENTION),
    onFinish === null ? '' : JSON.stringify({ g: encodeRecordFragment(onFinish.task, onFinishLinks), q: onFinish.task.queue, ...startTimes(onFinish.task) }),
    onFinish?.taskId ?? '', fresh ? '1' : '0', String(queues.size),
  ];
  for (const queue of queues) args.push(queue);
  args.push(String(nodes.length));
  for (const node of nodes) {
    const fragment = `${encodeRecordFragment(node.task, null)},"l":{"workflowNode":${JSON.stringify(node.id)}${linksTail}`;
    args.push(node.id, encodeNodeRecord(node, children.get(node.id) ?? [], fragment), String(node.dependsOn.length));
  }
  return { workflow: wf, args };
}

/**
 * TL_TASK_CONFLICT for a root whose task id another queue's task has, when the ids are not the
 * client's new ones (uuidv7() ids cannot be taken: the look into the other queues is for others).
 */
export async function refuseTakenIds(c: RedisConnection, wf: NewWorkflow): Promise<void> {
  // (On a Cluster storeOnCluster looks, once the creations before it started their roots.)
  if (wf.generatedTaskIds !== true && !c.isCluster) await refuseTakenRootIds(c, wf);
}

/**
 * Stores prepared workflows and enqueues their roots, in one call (lua/workflow-create.lua; the
 * creations made in the same tick, RedisBackend). Per workflow: 'ok', 'conflict' or 'task:<id>'.
 */
export async function storeWorkflows(c: RedisConnection, prepared: PreparedWorkflow[]): Promise<string[]> {
  // On a Cluster each workflow is its own slot: one call each, its hand-offs carried after it
  // (handoffs.ts: its roots started, its queues marked, its place in the lists).
  if (c.isCluster) {
    // One after another (this connection's creations in turn), each looking for its roots' ids
    // once those before it started theirs.
    const turn = (clusterCreations.get(c) ?? Promise.resolve()).then(async () => {
      const replies: string[] = [];
      for (const p of prepared) replies.push(await storeOnCluster(c, p));
      return replies;
    });
    clusterCreations.set(c, turn.catch(() => undefined));
    return turn;
  }
  const args: string[] = [String(prepared.length)];
  for (const p of prepared) for (const arg of p.args) args.push(arg);
  const replies = (await c.runScript('workflow-create', '', args, [c.keys.workflow(prepared[0].workflow.id).meta])) as unknown[];
  return replies.map(String);
}

/** On a Cluster: each connection's workflow creations, in turn (storeWorkflows). */
const clusterCreations = new WeakMap<RedisConnection, Promise<unknown>>();

async function storeOnCluster(c: RedisConnection, prepared: PreparedWorkflow): Promise<string> {
  const wf = prepared.workflow;
  if (wf.generatedTaskIds !== true) {
    const conflict = await rootConflict(c, wf);
    if (conflict !== null) return conflict === 'workflow' ? 'conflict' : `task:${conflict.taskId}`;
  }
  c.register([...wf.nodes.map((node) => node.task.queue), ...(wf.onFinish ? [wf.onFinish.task.queue] : [])]);
  await noteCarrying(c, wf.id);
  const [reply] = (await c.runScript('workflow-create', '', ['1', ...prepared.args], [c.keys.workflow(wf.id).meta])) as unknown[];
  await relayHandoffs(c, { workflows: [wf.id] });
  return String(reply);
}

/**
 * A workflow stored (workflow-create.lua's reply for it): TL_WORKFLOW_CONFLICT for an id in use,
 * TL_TASK_CONFLICT for a root whose task id another task has; then nothing of it is stored.
 */
export function created(wf: NewWorkflow, reply: string): { id: string; state: 'running' } {
  if (reply === 'conflict') throw workflowConflict(wf.id);
  if (reply.startsWith('task:')) throw taskConflict(wf, reply.slice(5));
  return { id: wf.id, state: 'running' };
}

/**
 * A node's record (keys.ts `nodes`): what its start and its reads need, as text the scripts cut
 * at its tabs, none of which its parts hold (ids, names and types have no control character,
 * the fragment is JSON text; the payload, which is last, may).
 */
function encodeNodeRecord(node: NewWorkflow['nodes'][number], children: string[], fragment: string): string {
  const task = node.task;
  const when = task.runAt != null ? `r${task.runAt}` : task.delay != null && task.delay > 0 ? `d${task.delay}` : '';
  const parents = node.dependsOn.length === 0 ? '' : node.dependsOn.join(NODE_LIST);
  const under = children.length === 0 ? '' : children.join(NODE_LIST);
  return `${node.taskId}\t${task.queue}\t${when}\t${parents}\t${under}\t${fragment}\t${node.runOnFailure ? '1' : '0'}\t${task.type}\t${task.payload}`;
}

/** When a task starts once enqueued: its delay and runAt (ms; -1 for none). */
function startTimes(task: WorkflowTaskSpec): { dl: number; ra: number } {
  return { dl: task.delay ?? -1, ra: task.runAt ?? -1 };
}

/**
 * Task ids are unique across queues, but the script looks in each root's own queue: the roots'
 * ids are first looked up in the other queues (as enqueue does for given ids). The workflow id
 * is checked in the same round trip, so that its conflict is the one reported, as the script would.
 */
async function refuseTakenRootIds(c: RedisConnection, wf: NewWorkflow): Promise<void> {
  const conflict = await rootConflict(c, wf);
  if (conflict === 'workflow') throw workflowConflict(wf.id);
  if (conflict !== null) throw taskConflict(wf, conflict.taskId);
}

/** A workflow id in use ('workflow'), else the first root's task id another task holds, else null. */
async function rootConflict(c: RedisConnection, wf: NewWorkflow): Promise<'workflow' | { taskId: string } | null> {
  const queues = new Set(await c.call(() => c.redis.smembers(c.keys.queues)));
  const roots = wf.nodes.filter((node) => node.dependsOn.length === 0).map((node) => ({ id: node.taskId, queue: node.task.queue }));
  // On a Cluster the script cannot look in a root's own queue (another slot): here too.
  if (c.isCluster) for (const root of roots) queues.add(root.queue);
  const commands: PipelinedCommand[] = [['exists', c.keys.workflow(wf.id).meta]];
  const checked: string[] = [];
  for (const task of roots) {
    for (const queue of queues) {
      if (queue === task.queue && !c.isCluster) continue;
      commands.push(['hexists', c.keys.queueKey(queue, 'meta'), task.id]);
      checked.push(task.id);
    }
  }
  if (checked.length === 0) return null;
  const replies = await c.pipelined(commands);
  if (replies[0]?.[1] === 1) return 'workflow';
  const taken = checked.find((_, i) => replies[i + 1]?.[1] === 1);
  return taken === undefined ? null : { taskId: taken };
}

function workflowConflict(id: string): TasklineError {
  return new TasklineError('TL_WORKFLOW_CONFLICT', `a workflow with id ${JSON.stringify(id)} already exists`);
}

function taskConflict(wf: NewWorkflow, taskId: string): TasklineError {
  const node = wf.nodes.find((n) => n.taskId === taskId)?.id ?? '?';
  return new TasklineError('TL_TASK_CONFLICT', `node ${JSON.stringify(node)} of workflow ${JSON.stringify(wf.id)}: task id ${taskId} is taken`);
}

/** A workflow script's reply: 'ok', 'missing' (null) or 'invalid:<state>' (TL_INVALID_STATE). */
async function afterTransition(c: RedisConnection, id: string, reply: unknown, refused: (state: string) => string): Promise<WorkflowRecord | null> {
  const text = String(reply);
  if (text === 'missing') return null;
  if (text.startsWith('invalid:')) throw new TasklineError('TL_INVALID_STATE', `workflow ${JSON.stringify(id)} is ${text.slice(8)}; ${refused(text.slice(8))}`);
  return getWorkflow(c, id);
}

/** Cancels a running workflow (lua/workflow-cancel.lua). Unknown: null; finished: TL_INVALID_STATE. */
export async function cancelWorkflow(c: RedisConnection, id: string): Promise<WorkflowRecord | null> {
  await noteCarrying(c, id);
  const reply = await c.runScript('workflow-cancel', '', [id], [c.keys.workflow(id).meta]);
  await relayHandoffs(c, { workflows: [id] });
  return afterTransition(c, id, reply, () => 'only a running workflow can be cancelled');
}

/** Runs a failed or cancelled workflow again (lua/workflow-retry.lua). Unknown: null; else TL_INVALID_STATE. */
export async function retryWorkflow(c: RedisConnection, id: string, onFinishTaskId: string | null): Promise<WorkflowRecord | null> {
  await noteCarrying(c, id);
  const reply = await c.runScript('workflow-retry', '', [id, onFinishTaskId ?? ''], [c.keys.workflow(id).meta]);
  await relayHandoffs(c, { workflows: [id] });
  return afterTransition(c, id, reply, () => 'only a failed or cancelled workflow can be retried');
}

/** Deletes finished workflows past their retention, at most `limit` (lua/workflow-cleanup.lua). */
export async function cleanupWorkflows(c: RedisConnection, limit: number): Promise<number> {
  if (c.isCluster) return cleanupOnCluster(c, limit);
  return Number(await c.runScript('workflow-cleanup', '', [limit], [c.keys.workflowExpiry]));
}

/**
 * workflow-cleanup.lua's work on a Cluster, where the lists of workflows and each workflow's keys
 * lie in different slots: a command each, the workflow's keys first (a workflow listed without
 * them is left out of reads, and deleted again by the next pass).
 */
async function cleanupOnCluster(c: RedisConnection, limit: number): Promise<number> {
  const now = await c.now();
  const ids = await c.call(() => c.redis.zrangebyscore(c.keys.workflowExpiry, '-inf', now, 'LIMIT', 0, limit));
  let deleted = 0;
  for (const id of ids) {
    const keys = c.keys.workflow(id);
    // Its expiry may be a moment stale (a retry's filing is carried after the retry): it goes
    // only when its meta says it finished and its retention has passed.
    const [state, finished, retention] = await c.call(() => c.redis.hmget(keys.meta, 'state', 'finished', 'retention'));
    if (state !== null && (state === 'running' || finished === null || Number(finished) + Number(retention ?? 0) > now)) {
      await fileWorkflow(c, id);
      continue;
    }
    deleted += 1;
    await c.call(() => c.redis.unlink(keys.meta, keys.order, keys.state, c.keys.workflowHandoff(id)));
    await c.call(() => Promise.all([...WORKFLOW_STATES.map((s) => c.redis.zrem(c.keys.workflowsIn(s), id)), c.redis.zrem(c.keys.workflows, id)]));
    await c.call(() => c.redis.zrem(c.keys.workflowExpiry, id));
  }
  return deleted;
}
