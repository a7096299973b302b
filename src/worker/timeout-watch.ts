import type { Execution } from './context.js';

/**
 * Aborts executions whose timeout or deadline passed, with one timer for all of them (set for
 * the earliest expiry) instead of a timer per task.
 *
 * Watched executions are flagged rather than kept in a Set (see ActiveExecutions for why), and the
 * timer is not cancelled when the last one ends: with a default timeout every new expiry is later
 * than the armed one, so a busy worker arms a timer once per timeout period, not once per task.
 * When it fires it looks at the executions the worker holds and re-arms for the next expiry.
 */
export class TimeoutWatch {
  private watching = 0;
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Infinity;

  constructor(
    private readonly executions: () => Iterable<Execution>,
    private readonly now: () => number = Date.now,
  ) {}

  add(execution: Execution): void {
    if (execution.watched) return;
    execution.watched = true;
    this.watching += 1;
    if (execution.expiresAt < this.timerAt) this.arm(execution.expiresAt);
  }

  remove(execution: Execution): void {
    if (!execution.watched) return;
    execution.watched = false;
    this.watching -= 1;
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
    if (this.watching === 0) return;
    const now = this.now();
    let next = Infinity;
    for (const execution of this.executions()) {
      if (!execution.watched) continue;
      if (execution.expiresAt <= now) {
        this.remove(execution);
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
    for (const execution of this.executions()) execution.watched = false;
    this.watching = 0;
    this.disarm();
  }
}
