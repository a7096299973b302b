/**
 * The leader's turn of the loop: fire everything due, then write the run states
 * with the fencing epoch, which the store refuses once another instance holds the lease. Fires
 * already claimed stay exactly-once either way. When the next fire is less than LOOKAHEAD_MS
 * away, its fires are prepared now and sent the moment they are due, so planning stays off the lag.
 */
import type { SchedulingBackend } from '../backend/contract.js';
import { sleep } from '../core/sleep.js';
import { updateOf, type BookSync } from './book-sync.js';
import type { CheckIns } from './check-in.js';
import type { FireRound } from './fire-round.js';
import type { ScheduleBook } from './schedule-book.js';
import type { StoreClock } from './store-clock.js';

/** How early the leader prepares the next fires (planning), in ms. */
const LOOKAHEAD_MS = 250;

export class LeaderTurn {
  constructor(
    private readonly backend: SchedulingBackend,
    private readonly id: string,
    private readonly book: ScheduleBook,
    private readonly checkIns: CheckIns,
    private readonly sync: BookSync,
    private readonly fires: FireRound,
    private readonly clock: StoreClock,
    private readonly stopping: AbortSignal,
  ) {}

  /** Fires what is due (or about to be); returns how long to sleep (host ms). */
  async run(): Promise<number> {
    const epoch = this.checkIns.epoch!;
    const now = this.clock.now();
    const due = this.book.earliest();
    const soon = due !== null && due - now <= LOOKAHEAD_MS;
    if (!soon && !this.sync.owesWrites) return this.checkIns.msUntil(this.nextWake());
    // What changed since the last look (one cheap read): a pause, a change or a delete made up to
    // the look-ahead before a fire applies to it, and a new schedule's first fire is not left to a standby.
    let next = due;
    if (soon) {
      await this.sync.reload();
      if (this.checkIns.epoch !== epoch) return 0;
      next = this.book.earliest();
      if ((next === null || next - now > LOOKAHEAD_MS) && !this.sync.owesWrites) return 0;
    }
    const at = next !== null && next - now <= LOOKAHEAD_MS ? Math.max(now, next) : now;
    const prepared = this.fires.prepare(at, null);
    if (at > now) {
      // Never early: a timer may fire a millisecond before its time by the wall clock, and the
      // store's clock is known here only to within a round trip, so wait until 1 ms past due.
      for (let round = 0; round < 3 && !this.stopping.aborted; round++) {
        const wait = at + 1 - this.clock.now();
        if (wait <= 0) break;
        await sleep(wait, this.stopping);
      }
      if (this.stopping.aborted) {
        this.fires.putBack(prepared);
        return 0;
      }
    }
    const { settled } = await this.fires.send(prepared, false);
    const updates = [...settled.map(({ entry, state }) => updateOf(entry, state)), ...this.sync.takeUnwritten()];
    const advanced = await this.backend.advanceSchedules(this.id, epoch, updates, prepared.behind ? undefined : at);
    if (!advanced) {
      // Fenced out: another instance leads now. Fires already claimed stay exactly-once.
      this.checkIns.fencedOut(epoch);
      this.book.invalidate();
      return 0;
    }
    return prepared.behind ? 0 : this.checkIns.msUntil(this.nextWake());
  }

  /** When the leader next looks: the look-ahead before the earliest due time (store time), or null. */
  private nextWake(): number | null {
    const due = this.book.earliest();
    return due === null ? null : due - LOOKAHEAD_MS;
  }
}
