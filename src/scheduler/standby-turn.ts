/**
 * A standby's turn of the loop, the takeover: while the leader keeps up (its
 * progress covers every fire that is due) a standby only sleeps. A fire overdue past the takeover
 * delay is looked at again with a fresh check-in; if the leader has still not handled it, the
 * standby fires everything due itself. So a leader that dies, freezes or loses the store costs no
 * fires, only up to the takeover delay of lag.
 */
import type { SchedulerLease } from '../backend/contract.js';
import type { BookSync } from './book-sync.js';
import type { CheckIns } from './check-in.js';
import type { FireRound } from './fire-round.js';
import type { BookEntry, ScheduleBook } from './schedule-book.js';
import type { StoreClock } from './store-clock.js';

/** A standby whose takeover found the leader had done it all waits up to this many times the takeover delay next time. */
const MAX_TAKEOVER_BACKOFF = 4;

export class StandbyTurn {
  /** How many takeover delays a standby waits (doubles while its takeovers find a slow leader had done everything). */
  private takeoverBackoff = 1;
  /** A takeover found everything handled: was it this leader, slowly? (Decided at the next check-in.) */
  private slowLeaderCheck: { holder: string; at: number } | null = null;

  constructor(
    private readonly book: ScheduleBook,
    private readonly checkIns: CheckIns,
    private readonly sync: BookSync,
    private readonly fires: FireRound,
    private readonly clock: StoreClock,
    private readonly takeoverDelayMs: number,
    private readonly stopping: AbortSignal,
  ) {}

  /** Sleeps while the leader keeps up, else takes over what it left overdue; returns how long to sleep (host ms). */
  async run(): Promise<number> {
    this.book.raiseFloor(this.checkIns.lease?.firedThrough ?? null);
    const takeoverAt = this.takeoverAt();
    if (takeoverAt === null) return this.checkIns.msUntil(null);
    if (this.clock.now() < takeoverAt) return this.checkIns.msUntil(takeoverAt);
    await this.checkIns.checkIn();
    if (this.checkIns.epoch !== null || this.stopping.aborted) return 0;
    await this.sync.catchUp();
    this.book.raiseFloor(this.checkIns.lease?.firedThrough ?? null);
    const stillAt = this.takeoverAt();
    const now = this.clock.now();
    if (stillAt === null || now < stillAt) return 0;
    const holder = this.checkIns.lease?.holder ?? null;
    const counts = await this.fires.send(this.fires.prepare(now, (entry) => now < this.knownAt(entry)), true);
    // Anything new: the leader had not done it — the plain delay again. All already handled:
    // if the next check-in shows the same leader past these fires, it is slow, not gone (another
    // standby may have been quicker instead), and this standby looks later next time rather than
    // repeat its work on every fire.
    this.slowLeaderCheck = counts.fresh === 0 && counts.existing > 0 && holder !== null ? { holder, at: now } : null;
    if (counts.fresh > 0) this.takeoverBackoff = 1;
    return 0;
  }

  /** A check-in read `lease`: after a takeover that found everything handled, was it this leader, slowly? */
  checkedIn(lease: SchedulerLease | null): void {
    if (!this.slowLeaderCheck) return;
    const { holder, at } = this.slowLeaderCheck;
    const slow = lease?.holder === holder && (lease.firedThrough ?? -Infinity) >= at;
    this.takeoverBackoff = slow ? Math.min(MAX_TAKEOVER_BACKOFF, this.takeoverBackoff * 2) : 1;
    this.slowLeaderCheck = null;
  }

  /** This instance took the lease: should it stand by again, it starts from the plain takeover delay. */
  resetBackoff(): void {
    this.takeoverBackoff = 1;
  }

  /**
   * When the earliest due fire may be taken over: past its time by the takeover delay (times the
   * backoff), and not before the leader had a check-in's time to learn of a schedule that is new
   * to this book.
   */
  private takeoverAt(): number | null {
    const entry = this.book.earliestEntry();
    if (entry === null) return null;
    return Math.max(entry.due + this.takeoverDelayMs * this.takeoverBackoff, this.knownAt(entry));
  }

  /** From when the leader has surely seen this version of the schedule, plus the takeover delay. */
  private knownAt(entry: BookEntry): number {
    return entry.loadedAt + this.checkIns.intervalMs + this.takeoverDelayMs;
  }
}
