/**
 * Workflows in the backend contract (Backend.createWorkflow …): a persisted DAG of tasks whose
 * fan-in happens in the transition that finishes a node's task, so it is exactly once under
 * redelivery, crashes and concurrent completions.
 *
 * Glossary
 * - node: one task of a workflow, with an id unique in it; its task is made only when it starts.
 * - parents / children: a node's dependsOn (declared order) and the nodes naming it there.
 * - pending set: the parents of a node that have not finished yet; the transition that empties
 *   it starts the node (or cancels it, when a parent failed and the node does not runOnFailure).
 *   SQLite keeps its members as rows, Redis only its size: each parent finishes once per run.
 * - node state: `pending` until it starts, then its task's state; once the task is final the
 *   workflow records that state, the result or error, and keeps them until the workflow is
 *   deleted (its retention, from when it finished) — whatever the task's own retention.
 * - failure: a node whose task ends `dead` or `cancelled` (not by a cancel of the workflow).
 *   With failFast (default) every node not final is then cancelled — pending ones at once,
 *   waiting tasks moved to `cancelled`, running ones asked to cancel (their signal aborts) —
 *   except runOnFailure nodes, which start once all their parents are final. Without failFast,
 *   only the failed node's descendants are cancelled (again except runOnFailure ones).
 * - finish: when every node is final the workflow is `completed` (all completed), `cancelled`
 *   (cancelWorkflow was called) or `failed`; in that same transition its onFinish task, if any,
 *   is enqueued with the payload WorkflowFinish.
 */
import type { NewTask, TaskState } from '../core/task.js';

export const WORKFLOW_STATES = ['running', 'completed', 'failed', 'cancelled'] as const;
export type WorkflowState = (typeof WORKFLOW_STATES)[number];
export type WorkflowNodeState = TaskState | 'pending';

/** How long a finished workflow (with its results) is kept, when it says nothing. 7 days. */
export const DEFAULT_WORKFLOW_RETENTION = 7 * 24 * 3_600_000;

/** A task as a workflow stores it until it starts: an enqueue without id, links or uniqueness. */
export type WorkflowTaskSpec = Omit<NewTask, 'id' | 'links' | 'uniqueKey' | 'uniqueFor' | 'generatedId'>;

export interface NewWorkflowNode {
  id: string;
  /** The id its task gets when it starts (made at creation: each run of the node is this task). */
  taskId: string;
  task: WorkflowTaskSpec;
  dependsOn: string[];
  runOnFailure: boolean;
}

/** A workflow ready to store (validated by the caller: core/workflow.ts and the client). */
export interface NewWorkflow {
  id: string;
  name: string | null;
  failFast: boolean;
  /** ms to keep the workflow once finished; null: DEFAULT_WORKFLOW_RETENTION. */
  retention: number | null;
  /** In declared order; every parent before its children is not required. */
  nodes: NewWorkflowNode[];
  /** Enqueued once when the workflow finishes, with WorkflowFinish as its payload (`payload` of the spec is ignored). */
  onFinish: { taskId: string; task: WorkflowTaskSpec } | null;
  /**
   * Every task id (nodes and onFinish) was made by uuidv7() for this workflow (the client's):
   * none can be taken, and a store need not look. A store trusts it: set it only for new ids.
   */
  generatedTaskIds?: boolean;
}

/** The payload of a workflow's onFinish task: the node ids by how they ended. */
export interface WorkflowFinish {
  workflowId: string;
  state: Exclude<WorkflowState, 'running'>;
  completed: string[];
  failed: string[];
  cancelled: string[];
}

export interface WorkflowNodeRecord {
  id: string;
  type: string;
  queue: string;
  state: WorkflowNodeState;
  /** Its task's id, or null while it has no task: not started, cancelled before it started, or deleted by its retention. */
  taskId: string | null;
  dependsOn: string[];
  runOnFailure: boolean;
  /** The completed node's result as stored (JSON text), else null. */
  result: string | null;
  /** The last error of a node that ended dead or cancelled, else null. */
  error: string | null;
}

export interface WorkflowRecord {
  id: string;
  name: string | null;
  state: WorkflowState;
  failFast: boolean;
  createdAt: number;
  finishedAt: number | null;
  /** The onFinish task's id (its current run), or null when the workflow has none. */
  onFinishTaskId: string | null;
  /** Node counts by state. */
  counts: Partial<Record<WorkflowNodeState, number>>;
  /** In declared order; left out (empty) by listWorkflows. */
  nodes: WorkflowNodeRecord[];
}

export interface WorkflowPage {
  /** Newest first; without nodes. */
  workflows: WorkflowRecord[];
  nextCursor: string | null;
}

/** What a node's handler gets from its parents (ctx.parent / ctx.parents). */
export interface WorkflowInputs {
  /** Parent node ids, declared order, each with its state and result (JSON text) or error. */
  parents: Array<{ id: string; state: WorkflowNodeState; result: string | null; error: string | null }>;
}

export interface WorkflowStore {
  /**
   * Stores the workflow and enqueues its root nodes, in one transition. An id already used
   * throws TL_WORKFLOW_CONFLICT, a root task id another task has TL_TASK_CONFLICT; then nothing is stored.
   */
  createWorkflow(workflow: NewWorkflow): Promise<{ id: string; state: WorkflowState }>;
  /** The workflow with its nodes, or null. */
  getWorkflow(id: string): Promise<WorkflowRecord | null>;
  /** Newest first, optionally of one state; limit and cursor as listTasks (TL_INVALID_ARGUMENT). */
  listWorkflows(options?: { state?: WorkflowState; limit?: number; cursor?: string }): Promise<WorkflowPage>;
  /**
   * Cancels every node not final (pending ones at once, waiting tasks to `cancelled`, running ones
   * asked to cancel); the workflow ends `cancelled` when its last node is final. Unknown id:
   * null; a finished workflow: TL_INVALID_STATE.
   */
  cancelWorkflow(id: string): Promise<WorkflowRecord | null>;
  /**
   * A failed or cancelled workflow runs again: its dead and cancelled nodes are pending once
   * more (those whose parents all completed start now, as new runs of their tasks), completed
   * nodes keep their results; `onFinishTaskId` is the id of the next onFinish run (unused when the
   * workflow has no onFinish). A running or
   * completed workflow: TL_INVALID_STATE. Unknown id: null.
   */
  retryWorkflow(id: string, onFinishTaskId: string | null): Promise<WorkflowRecord | null>;
  /** The parents' results of workflow nodes, for their handlers; null for a node unknown. */
  workflowInputs(nodes: Array<{ workflowId: string; node: string }>): Promise<Array<WorkflowInputs | null>>;
  /** Deletes finished workflows past their retention, at most `limit`. Returns how many. */
  cleanupWorkflows(limit: number): Promise<number>;
}
