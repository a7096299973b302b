import type { Ack, ClaimedTask, WorkflowInputs } from '../backend/contract.js';
import { parseStoredJson } from '../backend/shared.js';
import type { TaskLinks, TaskLogLine } from '../core/task.js';

/**
 * A share of the slots with a claim loop of its own. With one lane, the worker and a remote
 * store take turns: the store claims and acks a batch while the worker waits, then the worker
 * runs it while the store waits. With two, one lane's batch is in the store while the other's
 * runs here, so both sides work at once (docs/performance.md: +10–20 % tasks/s for short tasks).
 * Each lane still claims only for its own free slots: no task waits here for a slot.
 */
export interface Lane {
  /** Slots of this lane. */
  readonly capacity: number;
  /** Handlers of this lane that have not returned yet. */
  running: number;
  /** Claim loop of this lane waiting for one of its slots to free. */
  waiter: (() => void) | null;
}

/** The outcome of an attempt as the worker's events report it. */
export interface AttemptOutcome {
  ack: Ack | null;
  result?: unknown;
  error?: unknown;
  /** The task was handed back (no handler here) for this live worker, which has one: not a failure. */
  handedBack?: string;
}

/** What a handler sees of its task. */
export interface TaskMeta {
  id: string;
  type: string;
  queue: string;
  /** This attempt's number, 1 for the first. */
  attempt: number;
  maxRetries: number;
  createdAt: number;
  /** When this attempt started, by the store's clock (epoch ms): the time its queue's rate limit counts. */
  startedAt: number;
  headers: Record<string, string>;
  links: TaskLinks;
  /** The task's group in its queue (the enqueue option `group`, e.g. a tenant id); null when it has none. */
  group: string | null;
}

/** What a handler (and the worker's events) see of a claimed task. */
export function taskMeta(task: ClaimedTask): TaskMeta {
  return {
    id: task.id, type: task.type, queue: task.queue, attempt: task.attempt, maxRetries: task.maxRetries,
    createdAt: task.createdAt, startedAt: task.startedAt, headers: task.headers, links: task.links, group: task.group ?? null,
  };
}

/** The second argument of every handler, and what middleware receives. */
export interface TaskContext {
  task: TaskMeta;
  /** The (validated) payload. */
  payload: unknown;
  /** Aborted on timeout, deadline, cancel, lease loss and shutdown; `signal.reason` says which. */
  signal: AbortSignal;
  /** Stores a log line with the task (the newest 200 are kept). Safe to destructure, as are the others. */
  log: (...parts: unknown[]) => void;
  /** Reports progress (a number or any JSON value), stored with the task. */
  progress: (value: unknown) => void;
  /** Renews the lease now, for long CPU-bound steps between awaits. */
  extendLease: () => Promise<void>;
  /**
   * In a workflow node: its one parent's result, or with several parents (a chord callback, a
   * join) the array of their results in declared order; undefined for a node without parents
   * and outside workflows. A failed parent (seen by a runOnFailure node) gives a ParentFailure.
   */
  readonly parent: unknown;
  /** In a workflow node: each parent's result (or ParentFailure) by node id; `{}` otherwise. */
  readonly parents: Readonly<Record<string, unknown>>;
}

/** What a runOnFailure node sees of a parent that did not complete. */
export class ParentFailure {
  constructor(readonly node: string, readonly state: string, readonly error: string | null) {}
}

/** Why a running task's signal was aborted. */
export type AbortReason = 'timeout' | 'deadline' | 'cancelled' | 'lease-lost' | 'shutdown';

export class TaskAbortError extends Error {
  override name = 'AbortError';
  constructor(readonly reason: AbortReason, message: string) {
    super(message);
  }
}

/** The worker's record of one running task. */
export class Execution {
  /** Made on first use of `signal`: most handlers never look at it, and an AbortSignal is costly. */
  private controller: AbortController | null = null;
  private abortErrorValue: TaskAbortError | null = null;
  /** Called once when the attempt is aborted (the attempt runner's wait, without a signal listener). */
  onAbort: (() => void) | null = null;
  /** ms epoch when the timer aborts the attempt (timeout or deadline, whichever is earlier). */
  readonly expiresAt: number;
  readonly expiryReason: 'timeout' | 'deadline';
  /** Log lines not written yet; null until the handler logs (most never do). */
  pendingLogs: TaskLogLine[] | null = null;
  pendingProgress: unknown = undefined;
  hasPendingProgress = false;
  abortReason: AbortReason | null = null;
  /** What ended the wait for a handler that did not honour a cancel (see abort). */
  endedBy: AbortReason | null = null;
  /** Its place in the worker's ActiveExecutions, -1 when not there. */
  slot = -1;
  /** Watched by the TimeoutWatch (until the handler ends). */
  watched = false;
  /** What the attempt ended with, while its ack is being written. */
  outcome: AttemptOutcome | null = null;

  constructor(
    readonly task: ClaimedTask,
    readonly localStart: number,
    /** The processor's lane whose slot the attempt takes. */
    readonly lane: Lane,
  ) {
    const timeoutAt = localStart + task.timeout;
    // The deadline is absolute (store time); convert it to local time with the claim's clock.
    const deadlineAt = task.deadline === null ? Infinity : localStart + (task.deadline - task.startedAt);
    this.expiresAt = Math.min(timeoutAt, deadlineAt);
    this.expiryReason = deadlineAt < timeoutAt ? 'deadline' : 'timeout';
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortErrorValue) this.controller.abort(this.abortErrorValue);
    }
    return this.controller.signal;
  }

  /** Why the attempt was aborted, as the signal's `reason`; null while it runs. */
  get abortError(): TaskAbortError | null {
    return this.abortErrorValue;
  }

  abort(reason: AbortReason, message: string): void {
    if (this.abortReason === 'cancelled' && reason !== 'cancelled' && this.endedBy === null) {
      // A cancel waits for the handler; a timeout, deadline, lost lease or shutdown after it
      // ends the wait (the attempt still ends as cancelled, or writes nothing if the lease is lost).
      this.endedBy = reason;
      this.onAbort?.();
      return;
    }
    if (this.abortReason !== null) return;
    this.abortReason = reason;
    this.abortErrorValue = new TaskAbortError(reason, message);
    this.controller?.abort(this.abortErrorValue);
    this.onAbort?.();
  }

  takeReport(): { logs?: TaskLogLine[]; progress?: unknown } | null {
    if (this.pendingLogs === null && !this.hasPendingProgress) return null;
    const report: { logs?: TaskLogLine[]; progress?: unknown } = {};
    if (this.pendingLogs !== null) report.logs = this.pendingLogs;
    if (this.hasPendingProgress) report.progress = this.pendingProgress;
    this.pendingLogs = null;
    this.hasPendingProgress = false;
    return report;
  }
}

/** What a task's context asks of the worker. */
export interface ContextHost {
  /** Stores the execution's pending logs and progress soon. */
  scheduleReport(execution: Execution): void;
  /** Renews the execution's lease now; rejects when it is lost. */
  extendLease(execution: Execution): Promise<void>;
}

/**
 * A handler's context: one object per attempt. The task's metadata and the functions are made
 * when first read (most handlers read few or none), as functions bound to this attempt, so
 * `const { log, signal } = ctx` works as with plain properties; middleware may replace any of
 * them (`ctx.log = …`). The worker's own state is in private fields: printing or serialising a
 * context does not reach into the worker.
 */
export class AttemptContext implements TaskContext {
  readonly #host: ContextHost;
  readonly #execution: Execution;
  #task: TaskMeta | null = null;
  #signal: AbortSignal | null = null;
  #log: TaskContext['log'] | null = null;
  #progress: TaskContext['progress'] | null = null;
  #extendLease: TaskContext['extendLease'] | null = null;
  /** A workflow node's parents, fetched before the handler starts (processor.ts); an Error when they could not be read. */
  inputs: WorkflowInputs | Error | null = null;
  /** The parents' results, decoded once (a chord callback may read ctx.parent in a loop). */
  #parentValues: Array<[string, unknown]> | null = null;
  #parent: unknown = undefined;
  #parents: Readonly<Record<string, unknown>> | null = null;

  constructor(host: ContextHost, execution: Execution, public payload: unknown) {
    this.#host = host;
    this.#execution = execution;
  }

  get task(): TaskMeta {
    if (this.#task === null) {
      this.#task = taskMeta(this.#execution.task);
    }
    return this.#task;
  }

  set task(value: TaskMeta) {
    this.#task = value;
  }

  get signal(): AbortSignal {
    return this.#signal ?? this.#execution.signal;
  }

  set signal(value: AbortSignal) {
    this.#signal = value;
  }

  get log(): TaskContext['log'] {
    this.#log ??= (...parts: unknown[]) => {
      const execution = this.#execution;
      const message = parts.map((p) => (typeof p === 'string' ? p : safeJson(p))).join(' ');
      (execution.pendingLogs ??= []).push({ at: Date.now(), message: message.slice(0, 4000) });
      this.#host.scheduleReport(execution);
    };
    return this.#log;
  }

  set log(value: TaskContext['log']) {
    this.#log = value;
  }

  get progress(): TaskContext['progress'] {
    this.#progress ??= (value: unknown) => {
      const execution = this.#execution;
      execution.pendingProgress = value;
      execution.hasPendingProgress = true;
      this.#host.scheduleReport(execution);
    };
    return this.#progress;
  }

  set progress(value: TaskContext['progress']) {
    this.#progress = value;
  }

  get extendLease(): TaskContext['extendLease'] {
    this.#extendLease ??= () => this.#host.extendLease(this.#execution);
    return this.#extendLease;
  }

  set extendLease(value: TaskContext['extendLease']) {
    this.#extendLease = value;
  }

  get parents(): Readonly<Record<string, unknown>> {
    this.#parents ??= Object.fromEntries(this.parentValues());
    return this.#parents;
  }

  get parent(): unknown {
    if (this.#parentValues === null) {
      const values = this.parentValues();
      this.#parent = values.length === 0 ? undefined : values.length === 1 ? values[0][1] : values.map(([, value]) => value);
    }
    return this.#parent;
  }

  private parentValues(): Array<[string, unknown]> {
    const inputs = this.inputs;
    if (inputs instanceof Error) throw inputs;
    this.#parentValues ??= inputs === null ? [] : inputs.parents.map((p) => [p.id, p.state === 'completed' ? parseStoredJson(p.result) : new ParentFailure(p.id, p.state, p.error)]);
    return this.#parentValues;
  }

  /** For JSON and logs: the task and its payload. */
  toJSON(): { task: TaskMeta; payload: unknown } {
    return { task: this.task, payload: this.payload };
  }
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
