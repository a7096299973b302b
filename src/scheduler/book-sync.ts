/**
 * Keeps an instance's book (schedule-book.ts) in step with the store's schedules.
 * When the schedules' version a check-in read has moved, only what changed since the book's
 * version is read; all of it when the book was invalidated (a change of leadership, a failure) or
 * the version went back (a store restored or emptied). While the instance leads, it also notes
 * the run state it owes the store: each schedule's next fire, written with the leader's next
 * advance also for schedules not firing now.
 */
import type { SchedulingBackend, ScheduleUpdate } from '../backend/contract.js';
import { isPaused, type ScheduleState } from '../core/schedule.js';
import type { CheckIns } from './check-in.js';
import type { BookEntry, ScheduleBook } from './schedule-book.js';
import type { StoreClock } from './store-clock.js';

export class BookSync {
  /** Run-state writes for the leader's next advance: the next fire of schedules not firing now. */
  private readonly unwritten = new Map<string, ScheduleUpdate>();

  constructor(
    private readonly backend: SchedulingBackend,
    private readonly book: ScheduleBook,
    private readonly checkIns: CheckIns,
    private readonly clock: StoreClock,
    /** A schedule whose cron does not parse is reported here and left out of the book. */
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Reads what changed when the store's schedules version moved (all of it when it went back: a store restored or emptied). */
  async catchUp(): Promise<void> {
    const storeVersion = this.checkIns.schedulesVersion;
    if (storeVersion !== null && this.book.version !== null && storeVersion < this.book.version) this.book.invalidate();
    if (this.book.version === null || (storeVersion !== null && storeVersion > this.book.version)) await this.reload();
  }

  /**
   * Brings the book up to the store's schedules: all of them after a change of leadership (a new
   * leader plans from the stored run state) or a failure, else only what changed since the
   * book's version.
   */
  async reload(): Promise<void> {
    if (this.book.version !== null) {
      const changes = await this.backend.listScheduleChanges(this.book.version);
      this.book.apply(changes.schedules, changes.removed, changes.version, this.clock.now(), this.onError);
      if (this.checkIns.epoch !== null) for (const schedule of changes.schedules) this.noteUnwritten(schedule.id);
      return;
    }
    const version = this.checkIns.schedulesVersion;
    const schedules = await this.backend.listSchedules();
    this.book.resetFloor();
    this.book.load(schedules, version, this.clock.now(), this.onError);
    this.unwritten.clear();
    if (this.checkIns.epoch !== null) for (const entry of this.book.all()) this.noteUnwritten(entry.schedule.id);
  }

  /** The leader owes the store run-state writes of schedules not firing now. */
  get owesWrites(): boolean {
    return this.unwritten.size > 0;
  }

  /** Hands over the owed writes, for the leader's advance. */
  takeUnwritten(): ScheduleUpdate[] {
    const updates = [...this.unwritten.values()];
    this.unwritten.clear();
    return updates;
  }

  /** The schedule fires now: its run state goes with the fire, nothing is owed for it apart. */
  firing(id: string): void {
    this.unwritten.delete(id);
  }

  /** The leader keeps each schedule's next fire written, also for schedules not firing now. */
  private noteUnwritten(id: string): void {
    const entry = this.book.get(id);
    if (!entry) return;
    // While paused, nothing is next (the book's due time is then the end of the pause, not a fire).
    const next = isPaused(entry.schedule, this.clock.now()) ? null : entry.due;
    if (entry.schedule.state.nextRunAt !== next && (next === null || next > (this.checkIns.lease?.firedThrough ?? -Infinity))) {
      this.unwritten.set(id, updateOf(entry, { ...entry.schedule.state, nextRunAt: next }));
    }
  }
}

/** The fenced run-state write of a schedule as the leader read it. */
export function updateOf(entry: BookEntry, state: ScheduleState): ScheduleUpdate {
  return { id: entry.schedule.id, generation: entry.schedule.generation, updatedAt: entry.schedule.updatedAt, state };
}
