/** The shapes of the API's answers the dashboard reads (see docs/http-api.md). */

export type TaskState = 'scheduled' | 'queued' | 'running' | 'retrying' | 'completed' | 'dead' | 'cancelled';
export const TASK_STATES: TaskState[] = ['queued', 'scheduled', 'running', 'retrying', 'completed', 'dead', 'cancelled'];

export interface Task {
  id: string;
  type: string;
  queue: string;
  state: TaskState;
  payload: unknown;
  result: unknown;
  error: string | null;
  attempt: number;
  max_retries: number;
  created_at: string | null;
  enqueued_at: string | null;
  started_at: string | null;
  finished_at: string | null;
  next_run_at: string | null;
  worker_id: string | null;
  progress: unknown;
  cancel_requested: boolean;
  /** The task's group in its queue (the enqueue option `group`); null: none. */
  group: string | null;
  logs: { at: string | null; message: string }[];
  links: { schedule_id: string | null; schedule_fire_id: string | null; workflow_id: string | null; workflow_node: string | null; parent_id: string | null };
  attempts: { attempt: number; started_at: string | null; finished_at: string | null; outcome: string; error: string | null; worker_id: string | null }[];
  waiting?: { reason: string; message: string; until: string | null } | null;
  invalid?: string[];
}

export interface TaskList {
  tasks: Task[];
  next_cursor: string | null;
}

export interface SearchResult extends TaskList {
  scanned: number;
  total: number;
}

export interface Keep {
  completed: number | null;
  dead: number | null;
  cancelled: number | null;
}

/** The queue's controls, held by the store; null: no such limit. */
export interface QueueLimits {
  /** At most `limit` tasks start in any `interval_ms`, across all workers. */
  rate: { limit: number; interval_ms: number } | null;
  /** At most this many running at once. */
  concurrency: number | null;
  /** At most this many running at once per enqueue group. */
  group_concurrency: number | null;
  /** At most this many waiting (queued, scheduled, retrying): an enqueue past it is refused (429). */
  max_length: number | null;
}

export interface Queue {
  name: string;
  paused: boolean;
  keep: Keep;
  limits: QueueLimits;
  counts: Partial<Record<TaskState, number>>;
  size: number;
  processed: number;
  failed: number;
  latency_ms: number;
  /** Groups with queued tasks, and running tasks per group that has some (at most 1,000 groups). */
  groups: { waiting: number; running: Record<string, number> };
}

export interface Schedule {
  id: string;
  cron: string;
  timezone: string;
  task: { type?: string; payload?: unknown; queue?: string; maxRetries?: number; timeout?: number };
  overlap: string;
  catch_up: { policy: string; window_ms: number };
  jitter_ms: number;
  start_at: string | null;
  end_at: string | null;
  paused: boolean;
  pause_note: string | null;
  paused_until: string | null;
  source: string;
  generation: number;
  created_at: string | null;
  updated_at: string | null;
  next_run_at: string | null;
  last_fire_at: string | null;
  last_outcome: string | null;
}

export interface Fire {
  fire_id: string;
  nominal_at: string | null;
  enqueued_at: string | null;
  lag_ms: number | null;
  outcome: string;
  task_id: string | null;
  task_state: TaskState | null;
}

export interface Worker {
  id: string;
  host: string;
  pid: number;
  queues: string[];
  concurrency: number;
  running: string[];
  started_at: string | null;
  last_heartbeat_at: string | null;
  version: string;
}

export interface Schedulers {
  schedulers: { id: string; host: string; pid: number; leader: boolean; epoch: number | null; started_at: string | null; last_tick_at: string | null; last_seen_at: string | null; fires_last_minute: number; version: string }[];
  leader: { id: string; epoch: number; expires_at: string | null; fired_through: string | null } | null;
}

export interface Point {
  at: string;
  processed: number;
  failed: number;
}

export interface Stats {
  totals: { processed: number; failed: number; queued: number; running: number; dead: number; workers: number };
  rates: { processed_per_minute: number; failed_per_minute: number; failure_ratio: number };
  minutes: Point[];
  days: Point[];
  queues: { name: string; processed: number; failed: number; minutes: Point[]; days: Point[] }[];
}

export type WorkflowState = 'running' | 'completed' | 'failed' | 'cancelled';
export const WORKFLOW_STATES: WorkflowState[] = ['running', 'completed', 'failed', 'cancelled'];
/** `pending` until the node starts, then its task's state. */
export type NodeState = TaskState | 'pending';
/** The order node counts read in: done, under way, waiting, failed. */
export const NODE_STATES: NodeState[] = ['completed', 'running', 'retrying', 'queued', 'scheduled', 'pending', 'dead', 'cancelled'];

export interface WorkflowNode {
  id: string;
  type: string;
  queue: string;
  state: NodeState;
  /** Its task's id; null while it has none (pending, cancelled before it started, or deleted by its retention). */
  task_id: string | null;
  depends_on: string[];
  run_on_failure: boolean;
  result: unknown;
  error: string | null;
}

export interface WorkflowSummary {
  id: string;
  name: string | null;
  state: WorkflowState;
  fail_fast: boolean;
  created_at: string | null;
  finished_at: string | null;
  on_finish_task_id: string | null;
  counts: Partial<Record<NodeState, number>>;
}

export interface Workflow extends WorkflowSummary {
  /** In declared order. */
  nodes: WorkflowNode[];
}

export interface WorkflowList {
  workflows: WorkflowSummary[];
  next_cursor: string | null;
}

export interface ApiIndex {
  name: string;
  version: string;
  access: 'admin' | 'read';
  auth: boolean;
}
