/**
 * The task model.
 *
 * Glossary
 * - task: one unit of work — a `type`, a JSON `payload` and options — stored durably until it
 *   finishes and its retention runs out.
 * - attempt: one run of a task's handler. `attempt` counts the attempts started so far; a task
 *   with `maxRetries` 3 may be attempted 4 times.
 * - lease: a claimed task belongs to one worker until `leaseExpiresAt`; the worker renews it
 *   while the handler runs. Every write back carries the lease `token`; a stale token is refused.
 * - dead letter: the `dead` state — a task that failed permanently or ran out of retries. It is
 *   kept (30 d by default) for inspection and can be run again by an operator.
 * - fire, schedule, watermark: the scheduler's words (see scheduler/).
 */

/** Every state of the lifecycle. */
export const TASK_STATES = [
  'scheduled',
  'queued',
  'running',
  'retrying',
  'completed',
  'dead',
  'cancelled',
] as const;
export type TaskState = (typeof TASK_STATES)[number];

/** States a task never leaves by itself; retention applies to them. */
export const FINISHED_STATES: readonly TaskState[] = ['completed', 'dead', 'cancelled'];

export function isTaskState(value: unknown): value is TaskState {
  return typeof value === 'string' && (TASK_STATES as readonly string[]).includes(value);
}

export function isFinished(state: TaskState): boolean {
  return FINISHED_STATES.includes(state);
}

/** How long to wait before the next attempt. Stored with the task. */
export type BackoffSpec =
  | { type: 'exponential'; base: number; max: number }
  | { type: 'fixed'; delay: number };

/** Links a task to what produced it. */
export interface TaskLinks {
  scheduleFireId?: string;
  workflowId?: string;
  /** The workflow node the task runs (absent on a workflow's onFinish task). */
  workflowNode?: string;
  parentId?: string;
}

/** A task ready to be stored: validated and normalised by the client. */
export interface NewTask {
  id: string;
  type: string;
  /** The payload, already serialised as JSON. */
  payload: string;
  queue: string;
  maxRetries: number;
  /** ms a single attempt may run. */
  timeout: number;
  /** Absolute epoch ms after which no attempt may run, or null. */
  deadline: number | null;
  /** Delay in ms (relative to the store's clock) or null to queue now; `runAt` wins if set. */
  delay: number | null;
  runAt: number | null;
  /** Store key for uniqueness, or null; the TTL is `uniqueFor`. */
  uniqueKey: string | null;
  uniqueFor: number | null;
  /** ms to keep the task once finished; null = the backend's default for the final state. */
  retention: number | null;
  backoff: BackoffSpec | null;
  headers: Record<string, string> | null;
  links: TaskLinks | null;
  /** The task's group in its queue (groupConcurrency), or null/absent for none. */
  group?: string | null;
  /** The id was made here by uuidv7() (it cannot collide with another task's). */
  generatedId?: boolean;
}

/** One run of a handler (every attempt is recorded). */
export interface AttemptRecord {
  attempt: number;
  startedAt: number;
  finishedAt: number | null;
  outcome: 'completed' | 'failed' | 'cancelled' | 'interrupted';
  error: string | null;
  /** First lines of the stack, when there is one. */
  stack: string | null;
  workerId: string | null;
}

export interface TaskLogLine {
  at: number;
  message: string;
}

/** The full record of a task, as inspection returns it. */
export interface TaskRecord {
  id: string;
  type: string;
  payload: unknown;
  queue: string;
  state: TaskState;
  attempt: number;
  maxRetries: number;
  timeout: number;
  deadline: number | null;
  lastError: string | null;
  result: unknown;
  createdAt: number;
  enqueuedAt: number | null;
  startedAt: number | null;
  finishedAt: number | null;
  nextRunAt: number | null;
  workerId: string | null;
  uniqueKey: string | null;
  retention: number | null;
  backoff: BackoffSpec | null;
  headers: Record<string, string>;
  links: TaskLinks;
  /** The task's group in its queue (the enqueue option `group`), or null. */
  group: string | null;
  progress: unknown;
  cancelRequested: boolean;
  attempts: AttemptRecord[];
  logs: TaskLogLine[];
}

/** What enqueue returns. */
export interface TaskInfo {
  id: string;
  type: string;
  queue: string;
  state: TaskState;
}

/**
 * Whether a type is matched by one of a worker's handler patterns: an exact type, or a prefix
 * pattern ending in `*` (`email:*`), as the worker's handler registry matches them.
 */
export function handlesType(patterns: readonly string[], type: string): boolean {
  return patterns.some((p) => (p.endsWith('*') ? type.startsWith(p.slice(0, -1)) : p === type));
}
