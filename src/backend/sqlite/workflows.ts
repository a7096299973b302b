/**
 * Workflow transitions on SQLite (workflow-contract.ts): creating a workflow, settling the nodes
 * whose tasks reached a final state in a transaction (fan-in), cancel and retry. They run inside
 * the transaction that moved the task (store.ts calls settleWorkflows before the flush), so a
 * node's result, its children's pending sets and their start commit together, or not at all.
 */
import { TasklineError } from '../../core/errors.js';
import type { KeptState } from '../contract.js';
import {
  DEFAULT_WORKFLOW_RETENTION, type NewWorkflow, type WorkflowFinish, type WorkflowState, type WorkflowTaskSpec,
} from '../workflow-contract.js';
import { enqueueTasks } from './enqueue.js';
import { finishTask } from './lifecycle.js';
import { deleteTaskRows, type Transition } from './transition.js';

interface WorkflowRow {
  id: string;
  state: WorkflowState;
  fail_fast: number;
  failed: number;
  cancelling: number;
  open_nodes: number;
  retention: number | null;
  on_finish: string | null;
  on_finish_task_id: string | null;
}

interface NodeRow {
  workflow_id: string;
  node: string;
  task_id: string;
  spec: string;
  run_on_failure: number;
  state: string;
}

const NODE = 'SELECT workflow_id, node, task_id, spec, run_on_failure, state FROM workflow_nodes WHERE workflow_id = ? AND node = ?';
const WORKFLOW = 'SELECT id, state, fail_fast, failed, cancelling, open_nodes, retention, on_finish, on_finish_task_id FROM workflows WHERE id = ?';
const FINAL_NODE_STATES = new Set(['completed', 'dead', 'cancelled']);

/** Stores a workflow and starts its root nodes. Throws TL_WORKFLOW_CONFLICT for an id in use. */
export function createWorkflow(t: Transition, wf: NewWorkflow): void {
  if (t.get('SELECT 1 FROM workflows WHERE id = ?', wf.id)) {
    throw new TasklineError('TL_WORKFLOW_CONFLICT', `a workflow with id ${JSON.stringify(wf.id)} already exists`);
  }
  // A task id is one node's: another workflow's node holding it refuses this one (as the index
  // would, less clearly).
  for (const node of wf.nodes) {
    if (t.get('SELECT 1 FROM workflow_nodes WHERE task_id = ?', node.taskId)) {
      throw new TasklineError('TL_TASK_CONFLICT', `node ${JSON.stringify(node.id)} of workflow ${JSON.stringify(wf.id)}: task id ${node.taskId} is taken`);
    }
  }
  t.run(
    `INSERT INTO workflows (id, name, state, fail_fast, open_nodes, created_at, retention, on_finish, on_finish_task_id)
     VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?)`,
    wf.id, wf.name, wf.failFast ? 1 : 0, wf.nodes.length, t.now, wf.retention,
    wf.onFinish === null ? null : JSON.stringify(wf.onFinish.task), wf.onFinish?.taskId ?? null,
  );
  wf.nodes.forEach((node, seq) => {
    t.run(
      `INSERT INTO workflow_nodes (workflow_id, node, seq, task_id, type, queue, spec, depends_on, run_on_failure, state)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending')`,
      wf.id, node.id, seq, node.taskId, node.task.type, node.task.queue, JSON.stringify(node.task), JSON.stringify(node.dependsOn), node.runOnFailure ? 1 : 0,
    );
    for (const parent of node.dependsOn) t.run('INSERT INTO workflow_edges (workflow_id, child, parent) VALUES (?, ?, ?)', wf.id, node.id, parent);
  });
  t.emitWorkflow(wf.id, 'running');
  for (const node of wf.nodes) {
    if (node.dependsOn.length > 0) continue;
    const failure = startNode(t, wf.id, node.id, node.taskId, JSON.stringify(node.task));
    // At creation nothing is stored yet: the whole workflow is refused.
    if (failure !== null) throw new TasklineError('TL_TASK_CONFLICT', `workflow ${JSON.stringify(wf.id)}: ${failure}`);
  }
}

/**
 * Enqueues a node's task (a new run: a finished earlier run's task is replaced). Returns null,
 * or why it could not: its task id is another task's.
 */
function startNode(t: Transition, workflowId: string, node: string, taskId: string, specJson: string): string | null {
  const spec = JSON.parse(specJson) as WorkflowTaskSpec;
  const earlier = t.get<{ queue: string; state: string; links: string | null }>('SELECT queue, state, links FROM tasks WHERE id = ?', taskId);
  if (earlier && isRunOf(earlier.links, workflowId, node)) {
    // Started once only: an earlier run still going is this start (never reached: a node starts
    // when its pending set empties, which happens once per run).
    if (!FINAL_NODE_STATES.has(earlier.state)) return null;
    deleteTaskRows(t, taskId, earlier.queue, earlier.state);
  }
  const [outcome] = enqueueTasks(t, [{ ...spec, id: taskId, links: { workflowId, workflowNode: node }, uniqueKey: null, uniqueFor: null }]);
  if (!outcome.ok) return `node ${JSON.stringify(node)} could not start: its task id ${taskId} is taken by another task`;
  t.run("UPDATE workflow_nodes SET state = 'started', result = NULL, error = NULL WHERE workflow_id = ? AND node = ?", workflowId, node);
  return null;
}

/** Starts a node whose parents are done; one that cannot start ends dead (its workflow moves on). */
function startOrFail(t: Transition, workflowId: string, node: string, taskId: string, specJson: string): void {
  const failure = startNode(t, workflowId, node, taskId, specJson);
  if (failure !== null) endNode(t, workflowId, node, 'dead', null, failure);
}

function isRunOf(links: string | null, workflowId: string, node: string): boolean {
  if (links === null) return false;
  const parsed = JSON.parse(links) as { workflowId?: string; workflowNode?: string };
  return parsed.workflowId === workflowId && parsed.workflowNode === node;
}

/**
 * Settles the workflow nodes among the tasks this transaction moved to a final state, and
 * whatever that moves in turn (children started or cancelled, tasks cancelled), until nothing
 * is left to settle. Costs one query per transaction when no workflow is running.
 */
export function settleWorkflows(t: Transition): void {
  const finished = t.finishedTasks;
  if (finished.length === 0) return;
  if (!t.get("SELECT 1 FROM workflows WHERE state = 'running' LIMIT 1")) {
    finished.length = 0;
    return;
  }
  // The list grows while it is worked through (a cancel finishes other tasks).
  for (let i = 0; i < finished.length; i++) settleTask(t, finished[i].id, finished[i].state, finished[i].result);
  finished.length = 0;
}

function settleTask(t: Transition, taskId: string, state: KeptState, result: string | undefined): void {
  const node = t.get<{ workflow_id: string; node: string }>("SELECT workflow_id, node FROM workflow_nodes WHERE task_id = ? AND state = 'started'", taskId);
  if (!node) return;
  const task = t.get<{ result: string | null; last_error: string | null }>('SELECT result, last_error FROM tasks WHERE id = ?', taskId);
  const error = state === 'completed' ? null : task?.last_error ?? (state === 'cancelled' ? 'cancelled' : 'dead');
  endNode(t, node.workflow_id, node.node, state, state === 'completed' ? task?.result ?? (result || null) : null, error);
}

/** A node reached a final state: record it, then its children and the workflow move on. */
function endNode(t: Transition, workflowId: string, node: string, state: KeptState, result: string | null, error: string | null): void {
  const wf = t.get<WorkflowRow>(WORKFLOW, workflowId)!;
  // A running node cancelled while its workflow fails or is cancelled was cancelled by it (its
  // worker reports an operator's cancel): the node says why.
  const why = state === 'cancelled' && (wf.cancelling === 1 || wf.failed === 1) ? (wf.cancelling === 1 ? 'workflow cancelled' : 'workflow failed') : error;
  t.run('UPDATE workflow_nodes SET state = ?, result = ?, error = ? WHERE workflow_id = ? AND node = ?', state, result, why, workflowId, node);
  t.run('UPDATE workflows SET open_nodes = open_nodes - 1 WHERE id = ?', workflowId);
  if (state !== 'completed' && wf.cancelling === 0 && wf.failed === 0) {
    t.run('UPDATE workflows SET failed = 1 WHERE id = ?', workflowId);
    wf.failed = 1;
    if (wf.fail_fast === 1) cancelOpenNodes(t, wf, false);
  }
  releaseChildren(t, wf, node, state === 'completed' ? null : `parent ${JSON.stringify(node)} ended ${state}`);
  finishIfDone(t, workflowId);
}

/**
 * Takes a finished node out of its children's pending sets; a child whose set is now empty
 * starts, or is cancelled (a parent failed, or the workflow is failing or cancelled).
 * `failure`: why, when this parent did not complete. Iterative: a cancel runs down long chains.
 */
function releaseChildren(t: Transition, wf: WorkflowRow, parent: string, failure: string | null): void {
  const work: Array<{ parent: string; failure: string | null }> = [{ parent, failure }];
  while (work.length > 0) {
    const { parent: p, failure: why } = work.pop()!;
    const children = t.all<{ child: string }>('SELECT child FROM workflow_edges WHERE workflow_id = ? AND parent = ?', wf.id, p);
    t.run('DELETE FROM workflow_edges WHERE workflow_id = ? AND parent = ?', wf.id, p);
    for (const { child } of children) {
      const row = t.get<NodeRow>(NODE, wf.id, child)!;
      if (row.state !== 'pending') continue;
      const current = t.get<WorkflowRow>(WORKFLOW, wf.id)!;
      const runOnFailure = row.run_on_failure === 1;
      // A child that does not runOnFailure cannot run once a parent failed: cancelled now.
      const cancelReason = current.cancelling === 1 ? 'workflow cancelled' : !runOnFailure && why !== null ? why : !runOnFailure && current.failed === 1 && current.fail_fast === 1 ? 'workflow failed' : null;
      if (cancelReason !== null) {
        cancelPending(t, wf.id, child, cancelReason);
        work.push({ parent: child, failure: `parent ${JSON.stringify(child)} was cancelled` });
        continue;
      }
      if (t.get('SELECT 1 FROM workflow_edges WHERE workflow_id = ? AND child = ? LIMIT 1', wf.id, child)) continue;
      startOrFail(t, wf.id, child, row.task_id, row.spec);
    }
  }
}

function cancelPending(t: Transition, workflowId: string, node: string, reason: string): void {
  t.run("UPDATE workflow_nodes SET state = 'cancelled', error = ? WHERE workflow_id = ? AND node = ?", reason, workflowId, node);
  t.run('UPDATE workflows SET open_nodes = open_nodes - 1 WHERE id = ?', workflowId);
}

/**
 * Cancels every node not final (`all`: runOnFailure ones too, for cancelWorkflow): pending ones
 * at once (their children move on), waiting tasks to `cancelled` (settled as they are), running
 * ones asked to cancel (their handler's signal aborts; settled when the attempt ends).
 */
function cancelOpenNodes(t: Transition, wf: WorkflowRow, all: boolean): void {
  const open = t.all<NodeRow & { task_state: string | null; task_queue: string | null; last_error: string | null }>(
    `SELECT n.workflow_id, n.node, n.task_id, n.spec, n.run_on_failure, n.state, k.state AS task_state, k.queue AS task_queue, k.last_error
     FROM workflow_nodes n LEFT JOIN tasks k ON k.id = n.task_id
     WHERE n.workflow_id = ? AND n.state IN ('pending', 'started') ORDER BY n.seq`,
    wf.id,
  );
  const reason = all ? 'workflow cancelled' : 'workflow failed';
  for (const node of open) {
    if (!all && node.run_on_failure === 1) continue;
    if (node.state === 'pending') {
      // Re-read: an earlier cancel in this loop may have settled it through its parent.
      if (t.get<{ state: string }>('SELECT state FROM workflow_nodes WHERE workflow_id = ? AND node = ?', wf.id, node.node)!.state !== 'pending') continue;
      cancelPending(t, wf.id, node.node, reason);
      releaseChildren(t, wf, node.node, `parent ${JSON.stringify(node.node)} was cancelled`);
    } else if (node.task_state === null) {
      // Its task is gone (deleted with the node unsettled): it cannot run any more.
      endNode(t, wf.id, node.node, 'cancelled', null, reason);
    } else if (node.task_state === 'running') {
      t.run('UPDATE tasks SET cancel_requested = 1 WHERE id = ?', node.task_id);
      t.emitCancelRequested(node.task_queue!, node.task_id);
    } else if (node.task_state !== null && !FINAL_NODE_STATES.has(node.task_state)) {
      finishTask(t, node.task_id, node.task_queue!, node.task_state, 'cancelled', reason);
    }
  }
}

/** When no node is open, the workflow ends (once: only a running one does) and its onFinish task is enqueued. */
function finishIfDone(t: Transition, workflowId: string): void {
  const wf = t.get<WorkflowRow>(WORKFLOW, workflowId)!;
  if (wf.open_nodes > 0 || wf.state !== 'running') return;
  const state: WorkflowFinish['state'] = wf.cancelling === 1 ? 'cancelled' : wf.failed === 1 ? 'failed' : 'completed';
  t.run(
    'UPDATE workflows SET state = ?, finished_at = ?, expires_at = ? WHERE id = ?',
    state, t.now, t.now + (wf.retention ?? DEFAULT_WORKFLOW_RETENTION), workflowId,
  );
  t.emitWorkflow(workflowId, state);
  if (wf.on_finish === null || wf.on_finish_task_id === null) return;
  const byState = (s: string) => t.all<{ node: string }>('SELECT node FROM workflow_nodes WHERE workflow_id = ? AND state = ? ORDER BY seq', workflowId, s).map((r) => r.node);
  const payload: WorkflowFinish = { workflowId, state, completed: byState('completed'), failed: byState('dead'), cancelled: byState('cancelled') };
  const spec = JSON.parse(wf.on_finish) as WorkflowTaskSpec;
  const earlier = t.get<{ queue: string; state: string }>('SELECT queue, state FROM tasks WHERE id = ?', wf.on_finish_task_id);
  if (earlier) return;
  enqueueTasks(t, [{ ...spec, payload: JSON.stringify(payload), id: wf.on_finish_task_id, links: { workflowId }, uniqueKey: null, uniqueFor: null }]);
}

/** cancelWorkflow: false when unknown; TL_INVALID_STATE when finished. */
export function cancelWorkflow(t: Transition, id: string): boolean {
  const wf = t.get<WorkflowRow>(WORKFLOW, id);
  if (!wf) return false;
  if (wf.state !== 'running') throw new TasklineError('TL_INVALID_STATE', `workflow ${JSON.stringify(id)} is ${wf.state}; only a running workflow can be cancelled`);
  if (wf.cancelling === 1) return true;
  t.run('UPDATE workflows SET cancelling = 1 WHERE id = ?', id);
  wf.cancelling = 1;
  cancelOpenNodes(t, wf, true);
  // Settle the tasks moved to cancelled now, so a workflow without running nodes ends at once.
  settleWorkflows(t);
  finishIfDone(t, id);
  return true;
}

/** retryWorkflow: false when unknown; TL_INVALID_STATE unless failed or cancelled. */
export function retryWorkflow(t: Transition, id: string, onFinishTaskId: string | null): boolean {
  const wf = t.get<WorkflowRow>(WORKFLOW, id);
  if (!wf) return false;
  if (wf.state !== 'failed' && wf.state !== 'cancelled') {
    throw new TasklineError('TL_INVALID_STATE', `workflow ${JSON.stringify(id)} is ${wf.state}; only a failed or cancelled workflow can be retried`);
  }
  const nodes = t.all<{ node: string; depends_on: string; state: string; task_id: string; spec: string }>(
    'SELECT node, depends_on, state, task_id, spec FROM workflow_nodes WHERE workflow_id = ? ORDER BY seq', id,
  );
  // Every node not completed runs again, and so does everything downstream of one (a completed
  // runOnFailure node and its children ran on a failure that is being retried).
  const children = new Map<string, string[]>();
  for (const n of nodes) for (const parent of JSON.parse(n.depends_on) as string[]) children.set(parent, [...(children.get(parent) ?? []), n.node]);
  const rerun = new Set(nodes.filter((n) => n.state !== 'completed').map((n) => n.node));
  const walk = [...rerun];
  while (walk.length > 0) {
    for (const child of children.get(walk.pop()!) ?? []) {
      if (!rerun.has(child)) {
        rerun.add(child);
        walk.push(child);
      }
    }
  }
  const completed = new Set(nodes.filter((n) => !rerun.has(n.node)).map((n) => n.node));
  const again = nodes.filter((n) => rerun.has(n.node));
  t.run(
    `UPDATE workflows SET state = 'running', failed = 0, cancelling = 0, open_nodes = ?, finished_at = NULL, expires_at = NULL,
       on_finish_task_id = CASE WHEN on_finish IS NULL THEN NULL ELSE ? END WHERE id = ?`,
    again.length, onFinishTaskId, id,
  );
  t.run('DELETE FROM workflow_edges WHERE workflow_id = ?', id);
  for (const node of again) {
    t.run("UPDATE workflow_nodes SET state = 'pending', result = NULL, error = NULL WHERE workflow_id = ? AND node = ?", id, node.node);
    for (const parent of JSON.parse(node.depends_on) as string[]) {
      if (!completed.has(parent)) t.run('INSERT INTO workflow_edges (workflow_id, child, parent) VALUES (?, ?, ?)', id, node.node, parent);
    }
  }
  t.emitWorkflow(id, 'running');
  for (const node of again) {
    if (!t.get('SELECT 1 FROM workflow_edges WHERE workflow_id = ? AND child = ? LIMIT 1', id, node.node)) startOrFail(t, id, node.node, node.task_id, node.spec);
  }
  // Nothing to run again (a cancelled workflow whose running nodes completed anyway): it ends now.
  finishIfDone(t, id);
  return true;
}

/** Deletes finished workflows past their retention (their rows; the tasks keep their own retention). */
export function deleteExpiredWorkflows(t: Transition, limit: number): number {
  const expired = t.all<{ id: string }>('SELECT id FROM workflows WHERE expires_at IS NOT NULL AND expires_at <= ? ORDER BY expires_at LIMIT ?', t.now, limit);
  for (const { id } of expired) {
    t.run('DELETE FROM workflow_edges WHERE workflow_id = ?', id);
    t.run('DELETE FROM workflow_nodes WHERE workflow_id = ?', id);
    t.run('DELETE FROM workflows WHERE id = ?', id);
  }
  return expired.length;
}
