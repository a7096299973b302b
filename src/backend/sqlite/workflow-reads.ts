/** Reading workflows on SQLite: one with its nodes, a page of them, a node's parents' results. */
import type { StatementCache } from './database.js';
import { decodeCursor, encodeCursor, pageLimit, workflowListing } from '../page-cursor.js';
import { type WorkflowInputs, type WorkflowNodeRecord, type WorkflowNodeState, type WorkflowPage, type WorkflowRecord, type WorkflowState } from '../workflow-contract.js';
import { validateWorkflowState } from '../shared.js';

interface WorkflowRow {
  id: string;
  name: string | null;
  state: WorkflowState;
  fail_fast: number;
  created_at: number;
  finished_at: number | null;
  on_finish_task_id: string | null;
}

interface NodeRow {
  node: string;
  type: string;
  queue: string;
  state: string;
  task_state: string | null;
  task_id: string;
  has_task: number;
  depends_on: string;
  run_on_failure: number;
  result: string | null;
  error: string | null;
}

const COLUMNS = 'id, name, state, fail_fast, created_at, finished_at, on_finish_task_id';

/** A node's state: its own once final or pending, else its task's (a task gone: cancelled). */
function nodeState(row: Pick<NodeRow, 'state' | 'task_state'>): WorkflowNodeState {
  if (row.state !== 'started') return row.state as WorkflowNodeState;
  return (row.task_state ?? 'cancelled') as WorkflowNodeState;
}

function toRecord(row: WorkflowRow, nodes: WorkflowNodeRecord[], counts: WorkflowRecord['counts']): WorkflowRecord {
  return {
    id: row.id, name: row.name, state: row.state, failFast: row.fail_fast === 1, createdAt: row.created_at, finishedAt: row.finished_at,
    onFinishTaskId: row.on_finish_task_id, counts, nodes,
  };
}

function countsOf(sql: StatementCache, id: string): WorkflowRecord['counts'] {
  const rows = sql.get(
    `SELECT CASE WHEN n.state = 'started' THEN COALESCE(k.state, 'cancelled') ELSE n.state END AS s, COUNT(*) AS c
     FROM workflow_nodes n LEFT JOIN tasks k ON k.id = n.task_id AND n.state = 'started' WHERE n.workflow_id = ? GROUP BY s`,
  ).all(id) as Array<{ s: WorkflowNodeState; c: number }>;
  return Object.fromEntries(rows.map((r) => [r.s, r.c]));
}

export function getWorkflow(sql: StatementCache, id: string): WorkflowRecord | null {
  const row = sql.get(`SELECT ${COLUMNS} FROM workflows WHERE id = ?`).get(id) as WorkflowRow | undefined;
  if (!row) return null;
  const rows = sql.get(
    `SELECT n.node, n.type, n.queue, n.state, k.state AS task_state, n.task_id, k.id IS NOT NULL AS has_task, n.depends_on, n.run_on_failure, n.result, n.error
     FROM workflow_nodes n LEFT JOIN tasks k ON k.id = n.task_id WHERE n.workflow_id = ? ORDER BY n.seq`,
  ).all(id) as NodeRow[];
  const counts: WorkflowRecord['counts'] = {};
  const nodes = rows.map((r): WorkflowNodeRecord => {
    const state = nodeState(r);
    counts[state] = (counts[state] ?? 0) + 1;
    return {
      id: r.node, type: r.type, queue: r.queue, state, taskId: r.has_task === 1 ? r.task_id : null, dependsOn: JSON.parse(r.depends_on) as string[],
      runOnFailure: r.run_on_failure === 1, result: r.result, error: r.error,
    };
  });
  return toRecord(row, nodes, counts);
}

const LISTING = 'workflows';

/** Newest first (by creation, then id), of one state or all. */
export function listWorkflows(sql: StatementCache, options: { state?: WorkflowState; limit?: number; cursor?: string }): WorkflowPage {
  const state = options.state === undefined ? null : validateWorkflowState(options.state);
  const limit = pageLimit(options.limit);
  const scope = state ?? 'all';
  const after = decodeCursor(options.cursor, LISTING, scope, (p): p is [number, string] => p.length === 2 && typeof p[0] === 'number' && typeof p[1] === 'string', workflowListing(state));
  const where = [state === null ? null : 'state = ?', after === null ? null : '(created_at < ? OR (created_at = ? AND id < ?))'].filter((w) => w !== null);
  const params = [...(state === null ? [] : [state]), ...(after === null ? [] : [after[0], after[0], after[1]])];
  const rows = sql.get(
    `SELECT ${COLUMNS} FROM workflows ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT ?`,
  ).all(...params, limit + 1) as WorkflowRow[];
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    workflows: page.map((r) => toRecord(r, [], countsOf(sql, r.id))),
    nextCursor: rows.length > limit && last ? encodeCursor(LISTING, scope, [last.created_at, last.id]) : null,
  };
}

export function workflowInputs(sql: StatementCache, nodes: Array<{ workflowId: string; node: string }>): Array<WorkflowInputs | null> {
  const own = sql.get('SELECT depends_on FROM workflow_nodes WHERE workflow_id = ? AND node = ?');
  const parent = sql.get('SELECT state, result, error FROM workflow_nodes WHERE workflow_id = ? AND node = ?');
  return nodes.map(({ workflowId, node }) => {
    const row = own.get(workflowId, node) as { depends_on: string } | undefined;
    if (!row) return null;
    const parents = (JSON.parse(row.depends_on) as string[]).map((id) => {
      const p = parent.get(workflowId, id) as { state: WorkflowNodeState; result: string | null; error: string | null };
      return { id, state: p.state, result: p.result, error: p.error };
    });
    return { parents };
  });
}

