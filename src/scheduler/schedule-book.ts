/**
 * The schedules as one scheduler instance holds them: every instance keeps
 * them planned, the leader to fire them and the standbys to notice a fire the leader has not
 * handled. Each schedule's next due time sits in a min-heap, so a tick looks only at the
 * schedules that are due: 10,000 held schedules cost a tick no more than the ones firing.
 */
import { parseCron, type CronSchedule } from './cron.js';
import { firstDue } from './plan.js';
import { isUnreadable, type Schedule, type ScheduleState } from '../core/schedule.js';

export interface BookEntry {
  schedule: Schedule;
  cron: CronSchedule;
  /** When it next has something to do (store ms), or null. */
  due: number | null;
  /** Store time this version of the schedule entered the book. */
  loadedAt: number;
}

interface HeapItem {
  due: number;
  entry: BookEntry;
}

export class ScheduleBook {
  private readonly entries = new Map<string, BookEntry>();
  private heap: HeapItem[] = [];
  private readonly compiled = new Map<string, { key: string; cron: CronSchedule }>();
  /** Fires at or before this store time are handled (by this instance or the leader). */
  private floor = -Infinity;
  /** The store's schedules version this book was loaded at; null before the first load. */
  version: number | null = null;

  get size(): number {
    return this.entries.size;
  }

  /** Replaces the book with `schedules` (read at `version`); a schedule whose cron does not parse is reported and left out. */
  load(schedules: Schedule[], version: number | null, now: number, onError: (error: unknown) => void): void {
    this.entries.clear();
    this.heap = [];
    const ids = new Set(schedules.map((s) => s.id));
    for (const id of this.compiled.keys()) if (!ids.has(id)) this.compiled.delete(id);
    for (const schedule of schedules) this.add(schedule, now, onError);
    this.version = version;
  }

  /** Brings the book up to `version` with what changed since its own: the changed schedules replace theirs, the removed go. */
  apply(changed: Schedule[], removed: string[], version: number, now: number, onError: (error: unknown) => void): void {
    for (const id of removed) {
      this.entries.delete(id);
      this.compiled.delete(id);
    }
    for (const schedule of changed) this.add(schedule, now, onError);
    this.version = version;
  }

  /**
   * Puts a schedule in the book, replacing its entry (the old entry's heap item is dropped when
   * it surfaces: it is no longer the id's entry). A cron that does not parse is reported and the
   * schedule left out.
   */
  private add(schedule: Schedule, now: number, onError: (error: unknown) => void): void {
    this.entries.delete(schedule.id);
    // A stored definition the store could not read never fires, and is no error to report at
    // every load.
    if (isUnreadable(schedule)) return;
    let cron: CronSchedule;
    try {
      cron = this.compile(schedule);
    } catch (error) {
      onError(error);
      return;
    }
    const entry: BookEntry = { schedule, cron, due: null, loadedAt: now };
    this.entries.set(schedule.id, entry);
    this.schedule(entry);
  }

  /** Forgets the loaded version, so the next look reads the schedules again. */
  invalidate(): void {
    this.version = null;
  }

  /** Counts every fire at or before `at` as handled (a standby, from the leader's progress). */
  raiseFloor(at: number | null): void {
    if (at === null || at <= this.floor) return;
    this.floor = at;
    while (this.heap.length > 0 && this.heap[0].due <= at) {
      const { entry } = this.pop()!;
      if (entry.due !== null && entry.due <= at) this.schedule(entry);
    }
  }

  /** Resets the floor (a new leader plans from the store's watermarks). */
  resetFloor(): void {
    this.floor = -Infinity;
  }

  /** The time up to which every fire is handled (see raiseFloor). */
  get handledThrough(): number {
    return this.floor;
  }

  /** The earliest due time, or null when nothing is due ever. */
  earliest(): number | null {
    return this.earliestEntry()?.due ?? null;
  }

  /** The entry due first, or null. */
  earliestEntry(): (BookEntry & { due: number }) | null {
    this.dropStale();
    return this.heap.length > 0 ? (this.heap[0].entry as BookEntry & { due: number }) : null;
  }

  /** Takes every entry due at or before `at` out of the heap (put each back with `settle`). */
  takeDue(at: number): BookEntry[] {
    const due: BookEntry[] = [];
    for (;;) {
      this.dropStale();
      if (this.heap.length === 0 || this.heap[0].due > at) break;
      const { entry } = this.pop()!;
      entry.due = null;
      due.push(entry);
    }
    return due;
  }

  /** Puts an entry back with its new run state. */
  settle(entry: BookEntry, state: ScheduleState): void {
    entry.schedule = { ...entry.schedule, state };
    this.schedule(entry);
  }

  get(id: string): BookEntry | undefined {
    return this.entries.get(id);
  }

  all(): IterableIterator<BookEntry> {
    return this.entries.values();
  }

  private schedule(entry: BookEntry): void {
    entry.due = firstDue(entry.schedule, entry.cron, this.floor);
    if (entry.due !== null) this.push({ due: entry.due, entry });
  }

  private compile(schedule: Schedule): CronSchedule {
    const key = `${schedule.cron}|${schedule.timezone}|${schedule.startAt ?? ''}`;
    const cached = this.compiled.get(schedule.id);
    if (cached?.key === key) return cached.cron;
    const cron = parseCron(schedule.cron, schedule.timezone, { anchor: schedule.startAt ?? 0 });
    this.compiled.set(schedule.id, { cron, key });
    return cron;
  }

  /** Heap items left behind by an entry that was taken or rescheduled since. */
  private dropStale(): void {
    while (this.heap.length > 0) {
      const top = this.heap[0];
      if (top.entry.due === top.due && this.entries.get(top.entry.schedule.id) === top.entry) return;
      this.pop();
    }
  }

  private push(item: HeapItem): void {
    const heap = this.heap;
    heap.push(item);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent].due <= item.due) break;
      heap[i] = heap[parent];
      i = parent;
    }
    heap[i] = item;
  }

  private pop(): HeapItem | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length === 0 || last === undefined) return top;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && heap[right].due < heap[left].due ? right : left;
      if (heap[child].due >= last.due) break;
      heap[i] = heap[child];
      i = child;
    }
    heap[i] = last;
    return top;
  }
}
