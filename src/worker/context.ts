import type { ClaimedTask } from '../backend/contract.js';
import type { TaskLinks, TaskLogLine } from '../core/task.js';

/** What a handler sees of its task. */
export interface TaskMeta {
  id: string;
  type: string;
  queue: string;
  /** This attempt's number, 1 for the first. */
  attempt: number;
  maxRetries: number;
  createdAt: number;
  headers: Record<string, string>;
  links: TaskLinks;
}

/** The second argument of every handler, and what middleware receives. */
export interface TaskContext {
  task: TaskMeta;
  /** The (validated) payload. */
  payload: unknown;
  /** Aborted on timeout, deadline, cancel, lease loss and shutdown; `signal.reason` says which. */
  signal: AbortSignal;
  /** Stores a log line with the task (the newest 200 are kept). */
  log(...parts: unknown[]): void;
  /** Reports progress (a number or any JSON value), stored with the task. */
  progress(value: unknown): void;
  /** Renews the lease now, for long CPU-bound steps between awaits. */
  extendLease(): Promise<void>;
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
  pendingLogs: TaskLogLine[] = [];
  pendingProgress: unknown = undefined;
  hasPendingProgress = false;
  abortReason: AbortReason | null = null;
  /** Its place in the worker's ActiveExecutions, -1 when not there. */
  slot = -1;
  /** Watched by the TimeoutWatch (until the handler ends). */
  watched = false;
  /** Resolves when the attempt is over and its ack is written (or given up). */
  done!: Promise<void>;

  constructor(readonly task: ClaimedTask, readonly localStart: number) {
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
    if (this.abortReason !== null) return;
    this.abortReason = reason;
    this.abortErrorValue = new TaskAbortError(reason, message);
    this.controller?.abort(this.abortErrorValue);
    this.onAbort?.();
  }

  takeReport(): { logs?: TaskLogLine[]; progress?: unknown } | null {
    if (this.pendingLogs.length === 0 && !this.hasPendingProgress) return null;
    const report: { logs?: TaskLogLine[]; progress?: unknown } = {};
    if (this.pendingLogs.length > 0) report.logs = this.pendingLogs;
    if (this.hasPendingProgress) report.progress = this.pendingProgress;
    this.pendingLogs = [];
    this.hasPendingProgress = false;
    return report;
  }
}
