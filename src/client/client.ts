import type { Backend, BackendEvent, EnqueueOutcome, Unsubscribe } from '../backend/contract.js';
import { TaskFailedError, TasklineError } from '../core/errors.js';
import { uuidv7 } from '../core/ids.js';
import { DEFAULT_MAX_PAYLOAD_BYTES, normalizeEnqueue, validateTaskId, type EnqueueOptions, type InternalEnqueueOptions } from '../core/options.js';
import { type NewTask, type TaskInfo, type TaskRecord } from '../core/task.js';
import { activeTraceContext, withTraceContext } from '../observability/tracing.js';
import { isTaskDefinition, validatePayload, type TaskDefinition } from '../core/define-task.js';
import { RecordedTypes } from './recorded-types.js';
import { whyTaskWaits } from './why-waiting.js';
import type { Waiting } from '../core/why-waiting.js';
import type { WorkflowPart } from '../core/workflow.js';
import type { WorkflowState } from '../backend/contract.js';
import { planWorkflow, toWorkflowInfo, type WorkflowInfo, type WorkflowOptions } from './workflow-plan.js';
import { parseStoredJson } from '../backend/shared.js';

export interface ClientOptions {
  /** Largest accepted payload, in bytes of JSON. Default 1 MiB. */
  maxPayloadBytes?: number;
  /** Options applied to every enqueue (per-call options win). Default: none. */
  defaults?: EnqueueOptions;
  /**
   * Also check payloads given by type name against the JSON Schemas workers recorded in the
   * store (the task center and the CLI do); a defined task is checked by its own schema anyway.
   * Default false.
   */
  checkRecordedTypes?: boolean;
}

export interface EnqueueItem {
  type: string | TaskDefinition<any, any, any>;
  payload?: unknown;
  options?: EnqueueOptions;
}

export interface WaitOptions {
  /** ms to wait before rejecting with TL_TIMEOUT. Default 60 000. */
  timeout?: number;
}

/**
 * How long `waitFor` waits for a finished event after a read found no task: a task its queue
 * keeps none of is deleted as it finishes, and its event may arrive just after the read.
 */
export const GONE_GRACE_MS = 250;
/** How often `waitFor` re-reads the task in case a notification was lost (e.g. a reconnect). */
const WAIT_SAFETY_CHECK_MS = 5_000;

/** Produces tasks and follows them. Needs no worker to be running. */
export class Client {
  private readonly maxPayloadBytes: number;
  private readonly defaults: EnqueueOptions;
  private readonly recorded: RecordedTypes | null;
  private readonly waiters = new Map<string, Set<(state?: FinalState) => void>>();
  private subscription: Promise<Unsubscribe> | null = null;

  constructor(readonly backend: Backend, options: ClientOptions = {}) {
    this.maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
    this.defaults = options.defaults ?? {};
    this.recorded = options.checkRecordedTypes === true ? new RecordedTypes(backend) : null;
  }

  /** Validates and stores one task. Bad input throws and stores nothing. */
  async enqueue<P, I = P>(type: string | TaskDefinition<P, any, I>, payload?: I, options?: EnqueueOptions): Promise<TaskInfo> {
    const task = this.prepare(type, payload, options);
    if (this.recorded && typeof type === 'string') await this.recorded.check(task.type, task.payload);
    const [outcome] = await this.store([task]);
    if (!outcome.ok) throw refusalError(outcome);
    return outcome.info;
  }

  /**
   * Stores many tasks in one round trip per queue. Every item is validated first; if any is
   * invalid nothing is stored. Tasks rejected as duplicates make the call throw
   * TL_TASK_CONFLICT after the others were stored (the error's `details` lists each outcome).
   */
  async enqueueMany(items: EnqueueItem[]): Promise<TaskInfo[]> {
    if (!Array.isArray(items)) throw new TasklineError('TL_INVALID_ARGUMENT', 'enqueueMany takes an array of { type, payload, options }');
    const tasks = items.map((item, index) => {
      try {
        return this.prepare(item.type, item.payload, item.options);
      } catch (error) {
        if (error instanceof TasklineError) throw new TasklineError(error.code, `item ${index}: ${error.message}`, { cause: error });
        throw error;
      }
    });
    if (this.recorded) {
      for (const [index, item] of items.entries()) {
        if (typeof item.type !== 'string') continue;
        await this.recorded.check(tasks[index].type, tasks[index].payload).catch((error: unknown) => {
          throw error instanceof TasklineError ? new TasklineError(error.code, `item ${index}: ${error.message}`, { cause: error }) : error;
        });
      }
    }
    const ids = new Set<string>();
    for (const task of tasks) {
      if (ids.has(task.id)) throw new TasklineError('TL_TASK_CONFLICT', `id ${task.id} appears twice in one enqueueMany batch`);
      ids.add(task.id);
    }
    const outcomes = await this.store(tasks);
    const rejected = outcomes.filter((o) => !o.ok);
    if (rejected.length > 0) {
      // A full queue refuses its part of the batch whole: that is the error to act on.
      const first = rejected.find((o) => o.reason === 'queue-full') ?? rejected[0];
      const stored = tasks.length - rejected.length;
      const incoming = first.reason === 'queue-full' ? rejected.filter((o) => o.reason === 'queue-full' && o.queue === first.queue).length : 1;
      throw new TasklineError(
        first.reason === 'queue-full' ? 'TL_QUEUE_FULL' : 'TL_TASK_CONFLICT',
        `${rejected.length} of ${tasks.length} tasks were rejected (first: ${refusalError(first, incoming).message}); ` +
          (stored === 0 ? 'none was enqueued' : `the other ${stored} were enqueued`),
        { details: outcomes },
      );
    }
    return outcomes.map((o) => (o as Extract<EnqueueOutcome, { ok: true }>).info);
  }

  /** @internal Enqueue with links (used by the scheduler and workflows). */
  async enqueueInternal(type: string, payload: unknown, options: InternalEnqueueOptions): Promise<EnqueueOutcome> {
    const [outcome] = await this.store([normalizeEnqueue(type, payload, options, this.normalizeContext())]);
    return outcome;
  }

  private normalizeContext() {
    return { maxPayloadBytes: this.maxPayloadBytes, defaults: this.defaults };
  }

  private prepare(type: string | TaskDefinition<any, any, any>, payload: unknown, options: EnqueueOptions | undefined): NewTask {
    if (isTaskDefinition(type)) {
      const parsed = validatePayload(type, payload);
      return normalizeEnqueue(type.type, parsed, { ...type.defaults, ...options }, this.normalizeContext());
    }
    return normalizeEnqueue(type, payload, options, this.normalizeContext());
  }

  private async store(tasks: NewTask[]): Promise<EnqueueOutcome[]> {
    // W3C trace context of the caller's active span, if any, travels in the task's headers.
    const trace = activeTraceContext();
    if (trace !== null) for (const task of tasks) task.headers = withTraceContext(trace, task.headers);
    return this.backend.enqueue(tasks);
  }

  getTask(id: string): Promise<TaskRecord | null> {
    return this.backend.getTask(validateTaskId(id));
  }

  /**
   * Why a task that waits has not started yet — its queue is paused, it is scheduled or retrying
   * until a time, no live worker serves its queue or handles its type, every such worker is
   * busy — or null (running, finished, or about to be claimed).
   */
  async whyWaiting(id: string): Promise<Waiting | null> {
    const task = await this.getTask(id);
    if (task === null) throw new TasklineError('TL_TASK_NOT_FOUND', `no task with id ${JSON.stringify(id)}`);
    return whyTaskWaits(this.backend, task);
  }

  /** Cancels a task: at once if it is waiting; a running one gets its signal aborted. */
  cancel(id: string): Promise<'cancelled' | 'cancel-requested'> {
    return this.backend.cancelTask(validateTaskId(id));
  }

  /**
   * Resolves with the task's result when it completes; rejects with TaskFailedError when it dies
   * or is cancelled, TL_TASK_NOT_FOUND when there is no such task, TL_TIMEOUT after `timeout`.
   * Driven by the store's notifications.
   */
  async waitFor<R = unknown>(id: string, options: WaitOptions = {}): Promise<R> {
    validateTaskId(id);
    const timeout = options.timeout ?? 60_000;
    await this.ensureSubscribed();
    return new Promise<R>((resolve, reject) => {
      let done = false;
      let checking = false;
      let recheck = false;
      let lastError: unknown = null;
      // The final state a finished event announced: the task may be gone when read (its queue's
      // keep bound deleted it at once).
      let announced: FinalState | null = null;
      // Set when a read found no task before any finished event: the task may have finished and
      // been deleted just now, its event still on its way (see GONE_GRACE_MS).
      let gone: NodeJS.Timeout | null = null;
      const finish = (fn: () => void) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (gone) clearTimeout(gone);
        clearInterval(safety);
        this.removeWaiter(id, check);
        fn();
      };
      const check = (state?: FinalState) => {
        if (state) announced = state;
        if (checking) {
          recheck = true;
          return;
        }
        checking = true;
        this.backend
          .getTask(id)
          .then((task) => {
            checking = false;
            if (task === null) {
              if (announced) return finish(() => reject(goneError(id, announced)));
              gone ??= setTimeout(() => finish(() => reject(goneError(id, announced))), Math.min(GONE_GRACE_MS, timeout));
            } else if (task.state === 'completed') return finish(() => resolve(task.result as R));
            else if (task.state === 'dead' || task.state === 'cancelled') return finish(() => reject(new TaskFailedError(id, task.state as 'dead' | 'cancelled', task.lastError)));
            else if (gone) {
              // Found after all, unfinished: the read that missed it was not the last word.
              clearTimeout(gone);
              gone = null;
            }
            if (recheck) {
              recheck = false;
              check();
            }
          })
          .catch((error: unknown) => {
            // A store error (e.g. Redis restarting): the safety check tries again; the timeout
            // reports it if it persists.
            checking = false;
            lastError = error;
          });
      };
      const timer = setTimeout(() => finish(() => reject(new TasklineError('TL_TIMEOUT', `task ${id} did not finish within ${timeout} ms`, lastError ? { cause: lastError } : {}))), timeout);
      const safety = setInterval(() => check(), WAIT_SAFETY_CHECK_MS);
      this.addWaiter(id, check);
      check();
    });
  }

  // ── workflows ───────────────────────────────────────────────────────────────

  /**
   * Validates and stores a workflow (chain, group, chord, workflow({ nodes }) or a task), and
   * starts its first nodes, atomically. A bad graph or payload throws TL_INVALID_WORKFLOW naming
   * the node, an id in use TL_WORKFLOW_CONFLICT; either way nothing is stored.
   */
  async enqueueWorkflow(root: WorkflowPart, options?: WorkflowOptions): Promise<{ id: string; state: WorkflowState }> {
    const plan = planWorkflow(root, options, this.normalizeContext());
    if (this.recorded) {
      for (const node of plan.nodes) {
        await this.recorded.check(node.task.type, node.task.payload).catch((error: unknown) => {
          throw error instanceof TasklineError ? new TasklineError('TL_INVALID_WORKFLOW', `node ${JSON.stringify(node.id)}: ${error.message}`, { cause: error }) : error;
        });
      }
    }
    const trace = activeTraceContext();
    if (trace !== null) for (const node of plan.nodes) node.task.headers = withTraceContext(trace, node.task.headers);
    return this.backend.createWorkflow(plan);
  }

  /** The workflow with its nodes (states, results, errors), or null for an unknown id. */
  async getWorkflow(id: string): Promise<WorkflowInfo | null> {
    const record = await this.backend.getWorkflow(validateTaskId(id, 'workflow id'));
    return record === null ? null : toWorkflowInfo(record);
  }

  /** Newest first, optionally of one state, a page at a time (`nextCursor`). */
  async listWorkflows(options: { state?: WorkflowState; limit?: number; cursor?: string } = {}): Promise<{ workflows: WorkflowInfo[]; nextCursor: string | null }> {
    const page = await this.backend.listWorkflows(options);
    return { workflows: page.workflows.map(toWorkflowInfo), nextCursor: page.nextCursor };
  }

  /** Cancels every node not finished (running ones get their signal aborted). TL_WORKFLOW_NOT_FOUND; TL_INVALID_STATE once finished. */
  async cancelWorkflow(id: string): Promise<WorkflowInfo> {
    const record = await this.backend.cancelWorkflow(validateTaskId(id, 'workflow id'));
    if (record === null) throw workflowNotFound(id);
    return toWorkflowInfo(record);
  }

  /** Runs a failed or cancelled workflow's dead and cancelled nodes again, keeping completed results. */
  async retryWorkflow(id: string): Promise<WorkflowInfo> {
    // The id of the next onFinish run; a workflow without onFinish leaves it unused.
    const record = await this.backend.retryWorkflow(validateTaskId(id, 'workflow id'), uuidv7());
    if (record === null) throw workflowNotFound(id);
    return toWorkflowInfo(record);
  }

  /**
   * Resolves with `{ [nodeId]: result }` when the workflow completes; rejects with
   * WorkflowFailedError (TL_WORKFLOW_FAILED) when it fails or is cancelled, TL_WORKFLOW_NOT_FOUND,
   * or TL_TIMEOUT after `timeout` (default 60 s). Driven by the store's notifications.
   */
  async waitForWorkflow<R extends Record<string, unknown> = Record<string, unknown>>(id: string, options: WaitOptions = {}): Promise<R> {
    validateTaskId(id, 'workflow id');
    const timeout = options.timeout ?? 60_000;
    await this.ensureSubscribed();
    const key = `workflow\u0000${id}`;
    return new Promise<R>((resolve, reject) => {
      let done = false;
      let lastError: unknown = null;
      const finish = (fn: () => void) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        clearInterval(safety);
        this.removeWaiter(key, check);
        fn();
      };
      const check = () => {
        this.backend.getWorkflow(id).then((wf) => {
          if (wf === null) return finish(() => reject(workflowNotFound(id)));
          if (wf.state === 'completed') return finish(() => resolve(Object.fromEntries(wf.nodes.map((n) => [n.id, parseStoredJson(n.result)])) as R));
          if (wf.state !== 'running') return finish(() => reject(new WorkflowFailedError(toWorkflowInfo(wf))));
        }, (error: unknown) => (lastError = error));
      };
      const timer = setTimeout(() => finish(() => reject(new TasklineError('TL_TIMEOUT', `workflow ${id} did not finish within ${timeout} ms`, lastError ? { cause: lastError } : {}))), timeout);
      const safety = setInterval(check, WAIT_SAFETY_CHECK_MS);
      this.addWaiter(key, check);
      check();
    });
  }

  private async ensureSubscribed(): Promise<void> {
    this.subscription ??= this.backend.subscribe((event: BackendEvent) => {
      if (event.kind === 'finished') this.waiters.get(event.id)?.forEach((check) => check(event.state));
      else if (event.kind === 'workflow' && event.state !== 'running') this.waiters.get(`workflow\u0000${event.id}`)?.forEach((check) => check());
    });
    try {
      await this.subscription;
    } catch (error) {
      this.subscription = null;
      throw error;
    }
  }

  private addWaiter(id: string, check: (state?: FinalState) => void): void {
    let set = this.waiters.get(id);
    if (!set) this.waiters.set(id, (set = new Set()));
    set.add(check);
  }

  private removeWaiter(id: string, check: (state?: FinalState) => void): void {
    const set = this.waiters.get(id);
    set?.delete(check);
    if (set?.size === 0) this.waiters.delete(id);
  }

  /** Stops listening for notifications. The backend stays open (close it yourself). */
  async close(): Promise<void> {
    const subscription = this.subscription;
    this.subscription = null;
    if (subscription) await (await subscription)();
  }
}

type FinalState = 'completed' | 'dead' | 'cancelled';

function workflowNotFound(id: string): TasklineError {
  return new TasklineError('TL_WORKFLOW_NOT_FOUND', `no workflow with id ${JSON.stringify(id)}`);
}

/** A workflow that ended failed or cancelled: `workflow` has each node's state and error. */
export class WorkflowFailedError extends TasklineError {
  constructor(readonly workflow: WorkflowInfo) {
    // The node that failed it: a dead one, else one cancelled by someone other than the workflow.
    const byWorkflow = (error: string | null) => error !== null && (error.startsWith('workflow ') || error.startsWith('parent '));
    const first = workflow.nodes.find((n) => n.state === 'dead') ?? workflow.nodes.find((n) => n.state === 'cancelled' && !byWorkflow(n.error));
    super('TL_WORKFLOW_FAILED', `workflow ${workflow.id} is ${workflow.state}${first ? `: node ${JSON.stringify(first.id)} ended ${first.state}${first.error ? `: ${first.error}` : ''}` : ''}`, { details: workflow });
  }
}

/** A task that finished as `state` and is gone: its queue keeps no tasks in that state. */
export function notKeptError(id: string, state: FinalState): TasklineError {
  return new TasklineError(
    'TL_TASK_NOT_FOUND',
    `task ${id} finished (${state}), but its record is gone (its queue's keep bound on ${state} tasks deletes them: see setQueueKeep, taskline queue keep), so it cannot be read`,
  );
}

/** Why waitFor found no task: none was there, or it finished and its queue kept none of that state. */
function goneError(id: string, announced: FinalState | null): Error {
  if (announced === 'completed') return notKeptError(id, announced);
  if (announced !== null) return new TaskFailedError(id, announced, null);
  return new TasklineError('TL_TASK_NOT_FOUND', `no task with id ${JSON.stringify(id)}`);
}

/** The error of a refused enqueue; `incoming`: how many tasks of the queue its batch held (queue-full). */
function refusalError(outcome: Extract<EnqueueOutcome, { ok: false }>, incoming = 1): TasklineError {
  switch (outcome.reason) {
    case 'id-conflict':
      return new TasklineError('TL_TASK_CONFLICT', `a task with id ${JSON.stringify(outcome.id)} already exists`);
    case 'unique-conflict':
      return new TasklineError('TL_TASK_CONFLICT', `a unique task of this type and payload (or unique key) is already pending: task ${outcome.holder ?? '?'}`);
    case 'queue-full':
      return new TasklineError(
        'TL_QUEUE_FULL',
        `queue ${outcome.queue} is full: maxLength ${outcome.limit}, ${outcome.waiting} waiting` +
          (incoming > 1 ? `, and a batch of ${incoming} would make ${outcome.waiting + incoming}` : '') +
          ` (try again once workers have taken some, or raise it: taskline queue limit ${outcome.queue} --max-length N)`,
        { details: { queue: outcome.queue, limit: outcome.limit, waiting: outcome.waiting } },
      );
  }
}

