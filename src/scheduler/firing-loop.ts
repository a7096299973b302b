/**
 * The loop of one scheduler instance: each turn checks in when it is due, brings
 * the book up to the store's schedules, then takes the leader's turn or a standby's and sleeps
 * for as long as that turn says. A failed turn is reported and the next one looks at the store
 * afresh, after a backoff that stays under a check-in's interval.
 */
import { sleep } from '../core/sleep.js';
import type { BookSync } from './book-sync.js';
import type { CheckIns } from './check-in.js';
import type { LeaderTurn } from './leader-turn.js';
import type { ScheduleBook } from './schedule-book.js';
import type { StandbyTurn } from './standby-turn.js';

export class FiringLoop {
  constructor(
    private readonly book: ScheduleBook,
    private readonly checkIns: CheckIns,
    private readonly sync: BookSync,
    private readonly leader: LeaderTurn,
    private readonly standby: StandbyTurn,
    private readonly stopping: AbortSignal,
    /** A turn failed with `error` (the loop goes on). */
    private readonly failed: (error: unknown) => void,
  ) {}

  /** Runs turns until `stopping` is aborted. */
  async run(): Promise<void> {
    let failures = 0;
    while (!this.stopping.aborted) {
      let wait: number;
      try {
        wait = await this.turn();
        failures = 0;
      } catch (error) {
        failures += 1;
        wait = Math.min(this.checkIns.intervalMs, 100 * 2 ** failures);
        // Look at the store afresh after a failure: the lease and the schedules may have moved.
        this.checkIns.checkInNext();
        this.book.invalidate();
        this.failed(error);
      }
      await sleep(Math.max(0, wait), this.stopping);
    }
  }

  /** One turn of the loop; returns how long to sleep (host ms). */
  private async turn(): Promise<number> {
    if (this.checkIns.due) await this.checkIns.checkIn();
    if (this.stopping.aborted) return 0;
    await this.sync.catchUp();
    this.checkIns.ticked();
    return this.checkIns.epoch !== null ? this.leader.run() : this.standby.run();
  }
}
