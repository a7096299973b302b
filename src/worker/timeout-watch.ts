import type { Execution } from './context.js';

/**
 * Aborts executions whose timeout or deadline passed, with one timer for all of them (set for
 * the earliest expiry) instead of a timer per task.
 */
export class TimeoutWatch {
  private readonly watched = new Set<Execution>();
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Infinity;

  constructor(private readonly now: () => number = Date.now) {}

  add(execution: Execution): void {
    this.watched.add(execution);
    if (execution.expiresAt < this.timerAt) this.arm(execution.expiresAt);
  }

  remove(execution: Execution): void {
    this.watched.delete(execution);
    if (this.watched.size === 0) this.disarm();
  }

  private arm(at: number): void {
    this.disarm();
    if (at === Infinity) return;
    this.timerAt = at;
    // setTimeout's limit is 2^31-1 ms; a later expiry re-arms when this one fires.
    this.timer = setTimeout(() => this.fire(), Math.min(Math.max(0, at - this.now()), 2 ** 31 - 1));
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = Infinity;
  }

  private fire(): void {
    this.timer = null;
    this.timerAt = Infinity;
    const now = this.now();
    let next = Infinity;
    for (const execution of this.watched) {
      if (execution.expiresAt <= now) {
        this.watched.delete(execution);
        const message =
          execution.expiryReason === 'deadline' ? 'deadline exceeded' : `timeout after ${execution.task.timeout} ms`;
        execution.abort(execution.expiryReason, message);
      } else if (execution.expiresAt < next) {
        next = execution.expiresAt;
      }
    }
    this.arm(next);
  }

  clear(): void {
    this.watched.clear();
    this.disarm();
  }
}
