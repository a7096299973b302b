/**
 * The scheduler (DESIGN §6.1, §6.8): any number of instances may run, and every one keeps the
 * schedules planned. One leads (a short lease with a fencing epoch, so a deposed leader's writes
 * are refused) and fires each fire when it is due. A standby that finds a fire overdue past the
 * takeover delay, unhandled by the leader, fires it itself and bids for the lease at each
 * check-in: a leader that dies, freezes or loses the store costs no fires, only up to the
 * takeover delay of lag. Exactly-once never depends on the lease: every fire has a
 * deterministic id and claiming it is atomic with enqueueing its task, so two instances firing
 * the same nominal time enqueue one task. "Now" is the store's clock; the host clock only paces
 * the sleeps.
 */
import { EventEmitter } from 'node:events';
import type { FireBatch, FireRequest, FireResult, SchedulerLease, SchedulingBackend } from '../backend/contract.js';
import type { Clock } from '../core/clock.js';
import { shortId } from '../core/ids.js';
import { sleep } from '../core/sleep.js';
import { BookSync, updateOf } from './book-sync.js';
import { CheckIns } from './check-in.js';
import { FireTally } from './fire-tally.js';
import { DEFAULT_PLAN_OPTIONS, fireBatch, fireCalls, fireRequest, planFires, type PlanOptions } from './plan.js';
import { ScheduleBook, type BookEntry } from './schedule-book.js';
import { monotonicClock, StoreClock } from './store-clock.js';
import type { Schedule, ScheduleState } from '../core/schedule.js';

export interface SchedulerOptions {
  /** This instance's id in the registry and the lease. Default: `scheduler-<pid>-<random>`. */
  id?: string;
  /**
   * ms the scheduler's leader lease lasts (its own, not the lock TTL of user locks). Every
   * instance checks in every third of it, and the leader renews it then; a leader that stops
   * checking in is replaced after at most this long. Default 3 000.
   */
  leaseMs?: number;
  /**
   * ms a fire may be overdue before a standby, seeing that the leader has not handled it, fires
   * it itself. Default 500.
   */
  takeoverDelayMs?: number;
  /** A fire later than this may be a missed one (see the catch-up policy). Default 2 000 ms. */
  graceMs?: number;
  /** Fire records kept per schedule. Default 1 000. */
  keepHistory?: number;
  /**
   * The host clock that paces the sleeps and carries the store's time between check-ins (tests
   * shift it). Default: a monotonic clock (a step of the wall clock neither stalls the scheduler
   * nor makes it fire early).
   */
  clock?: Clock;
}

export interface FireEvent {
  scheduleId: string;
  fireId: string;
  nominalAt: number;
  outcome: FireResult['outcome'];
  taskId: string | null;
  /** ms between the nominal time and the enqueue (store clock). */
  lagMs: number;
  /** Fired by a standby, the leader not having handled it in time. */
  takeover: boolean;
}

export interface SchedulerEvents {
  fire: [event: FireEvent];
  leader: [epoch: number];
  follower: [];
  error: [error: unknown];
}

/** The leadership as this instance last saw it. */
export interface SchedulerView {
  /** The lease holder's id, or null while no lease is valid. */
  leader: string | null;
  epoch: number | null;
  /** This instance leads. */
  isLeader: boolean;
}

/** How early the leader prepares the next fires (planning), in ms. */
const LOOKAHEAD_MS = 250;
/** Most fires of one queue in one store call. */
/** A standby whose takeover found the leader had done it all waits up to this many times the takeover delay next time. */
const MAX_TAKEOVER_BACKOFF = 4;

interface PreparedFires {
  batches: FireBatch[];
  pending: { entry: BookEntry; state: ScheduleState; batch: FireBatch | null }[];
  /** A schedule had more due fires than one plan takes. */
  behind: boolean;
}

/**
 * A scheduler instance, with the shape of the worker's parts (worker/component.ts): `start()`
 * begins the loop, `stop()` ends it, leaves the registry and resolves once nothing of it runs.
 */
export class Scheduler extends EventEmitter<SchedulerEvents> {
  readonly name = 'scheduler';
  readonly id: string;
  readonly leaseMs: number;
  readonly takeoverDelayMs: number;
  private readonly keepHistory: number;
  private readonly clock: StoreClock;
  private readonly planOptions: PlanOptions;
  private readonly book = new ScheduleBook();
  private readonly checkIns: CheckIns;
  /** How many takeover delays a standby waits (doubles while its takeovers find a slow leader had done everything). */
  private takeoverBackoff = 1;
  /** A takeover found everything handled: was it this leader, slowly? (Decided at the next check-in.) */
  private slowLeaderCheck: { holder: string; at: number } | null = null;
  private readonly tally = new FireTally();
  private readonly sync: BookSync;
  private loop: Promise<void> | null = null;
  private readonly stopping = new AbortController();
  private firstCheckIn: Promise<void>;
  private resolveFirstCheckIn!: () => void;

  constructor(readonly backend: SchedulingBackend, options: SchedulerOptions = {}) {
    super();
    this.id = options.id ?? `scheduler-${process.pid}-${shortId()}`;
    this.leaseMs = options.leaseMs ?? 3_000;
    this.takeoverDelayMs = options.takeoverDelayMs ?? 500;
    this.keepHistory = options.keepHistory ?? 1_000;
    this.clock = new StoreClock(options.clock ?? monotonicClock);
    this.planOptions = { ...DEFAULT_PLAN_OPTIONS, graceMs: options.graceMs ?? DEFAULT_PLAN_OPTIONS.graceMs };
    this.firstCheckIn = new Promise((resolve) => (this.resolveFirstCheckIn = resolve));
    this.checkIns = new CheckIns(backend, this.clock, this.tally, { id: this.id, leaseMs: this.leaseMs }, {
      checkedIn: (lease) => this.checkedIn(lease),
      leading: (epoch) => {
        // A new leader plans from the store's watermarks: what it finds handled answers `exists`.
        this.book.invalidate();
        this.takeoverBackoff = 1;
        this.emit('leader', epoch);
      },
      following: () => this.emit('follower'),
    });
    this.sync = new BookSync(backend, this.book, this.checkIns, this.clock, (error) => this.report(error));
  }

  /** True while this instance holds the leader lease. */
  get isLeader(): boolean {
    return this.checkIns.epoch !== null;
  }

  /** The leadership as of this instance's latest check-in. */
  get view(): SchedulerView {
    const lease = this.checkIns.lease;
    return { leader: lease?.holder ?? null, epoch: lease?.epoch ?? null, isLeader: this.checkIns.epoch !== null };
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Resolves after the first check-in (successful or not) of a started scheduler. */
  ready(): Promise<void> {
    return this.firstCheckIn;
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    this.resolveFirstCheckIn();
    await this.loop;
    if (this.loop === null) return;
    await this.checkIns.leave().catch((error: unknown) => this.report(error));
  }

  private report(error: unknown): void {
    if (this.listenerCount('error') > 0) this.emit('error', error);
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopping.signal.aborted) {
      let wait: number;
      try {
        wait = await this.step();
        failures = 0;
      } catch (error) {
        this.report(error);
        failures += 1;
        wait = Math.min(this.checkIns.intervalMs, 100 * 2 ** failures);
        // Look at the store afresh after a failure: the lease and the schedules may have moved.
        this.checkIns.checkInNext();
        this.book.invalidate();
        this.resolveFirstCheckIn();
      }
      await sleep(Math.max(0, wait), this.stopping.signal);
    }
  }

  /** One turn of the loop; returns how long to sleep (host ms). */
  private async step(): Promise<number> {
    if (this.checkIns.due) await this.checkIns.checkIn();
    if (this.stopping.signal.aborted) return 0;
    await this.sync.catchUp();
    this.checkIns.ticked();
    return this.checkIns.epoch !== null ? this.lead() : this.standBy();
  }

  /** A takeover that found everything handled: was it this leader, slowly? The check-in tells. */
  private checkedIn(lease: SchedulerLease | null): void {
    if (this.slowLeaderCheck) {
      const { holder, at } = this.slowLeaderCheck;
      const slow = lease?.holder === holder && (lease.firedThrough ?? -Infinity) >= at;
      this.takeoverBackoff = slow ? Math.min(MAX_TAKEOVER_BACKOFF, this.takeoverBackoff * 2) : 1;
      this.slowLeaderCheck = null;
    }
    this.resolveFirstCheckIn();
  }

  /**
   * The leader's turn: fires everything due. When the next fire is less than LOOKAHEAD_MS away,
   * its fires are prepared now and sent the moment they are due, so planning stays off the lag.
   */
  private async lead(): Promise<number> {
    const epoch = this.checkIns.epoch!;
    const now = this.clock.now();
    const due = this.book.earliest();
    const soon = due !== null && due - now <= LOOKAHEAD_MS;
    if (!soon && !this.sync.owesWrites) return this.sleepUntil(this.nextLeaderWake());
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
    const prepared = this.prepare(at, false);
    if (at > now) {
      // Never early: a timer may fire a millisecond before its time by the wall clock, and the
      // store's clock is known here only to within a round trip, so wait until 1 ms past due.
      for (let round = 0; round < 3 && !this.stopping.signal.aborted; round++) {
        const wait = at + 1 - this.clock.now();
        if (wait <= 0) break;
        await sleep(wait, this.stopping.signal);
      }
      if (this.stopping.signal.aborted) {
        for (const { entry } of prepared.pending) this.book.settle(entry, entry.schedule.state);
        return 0;
      }
    }
    const { settled } = await this.fire(prepared, false);
    const updates = [...settled.map(({ entry, state }) => updateOf(entry, state)), ...this.sync.takeUnwritten()];
    const advanced = await this.backend.advanceSchedules(this.id, epoch, updates, prepared.behind ? undefined : at);
    if (!advanced) {
      // Fenced out: another instance leads now. Fires already claimed stay exactly-once.
      this.checkIns.fencedOut(epoch);
      this.book.invalidate();
      return 0;
    }
    return prepared.behind ? 0 : this.sleepUntil(this.nextLeaderWake());
  }

  private nextLeaderWake(): number | null {
    const due = this.book.earliest();
    return due === null ? null : due - LOOKAHEAD_MS;
  }

  /**
   * A standby's turn: while the leader keeps up (its progress covers every fire that is due) it
   * only sleeps. A fire overdue past the takeover delay is looked at again with a fresh
   * check-in; if the leader has still not handled it, this instance fires everything due itself.
   */
  private async standBy(): Promise<number> {
    this.book.raiseFloor(this.checkIns.lease?.firedThrough ?? null);
    const takeoverAt = this.takeoverAt();
    if (takeoverAt === null) return this.sleepUntil(null);
    if (this.clock.now() < takeoverAt) return this.sleepUntil(takeoverAt);
    await this.checkIns.checkIn();
    if (this.checkIns.epoch !== null || this.stopping.signal.aborted) return 0;
    await this.sync.catchUp();
    this.book.raiseFloor(this.checkIns.lease?.firedThrough ?? null);
    const stillAt = this.takeoverAt();
    const now = this.clock.now();
    if (stillAt === null || now < stillAt) return 0;
    const holder = this.checkIns.lease?.holder ?? null;
    const counts = await this.fire(this.prepare(now, true), true);
    // Anything new: the leader had not done it — the plain delay again. All already handled:
    // if the next check-in shows the same leader past these fires, it is slow, not gone (another
    // standby may have been quicker instead), and this standby looks later next time rather than
    // repeat its work on every fire.
    this.slowLeaderCheck = counts.fresh === 0 && counts.existing > 0 && holder !== null ? { holder, at: now } : null;
    if (counts.fresh > 0) this.takeoverBackoff = 1;
    return 0;
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

  /** Sleeps until the store time `at` (or the next check-in, whichever is first). */
  private sleepUntil(at: number | null): number {
    return this.checkIns.msUntil(at);
  }

  /**
   * Plans every schedule due at `now` (store time): the fire batches and the new run states.
   * Fires the leader's progress covers count as handled; a standby (`takeover`) leaves out the
   * schedules the leader may not have seen yet.
   */
  private prepare(now: number, takeover: boolean): PreparedFires {
    const batches: FireBatch[] = [];
    const pending: PreparedFires['pending'] = [];
    let behind = false;
    const handled = this.book.handledThrough;
    for (const entry of this.book.takeDue(now)) {
      if (takeover && now < this.knownAt(entry)) {
        this.book.settle(entry, entry.schedule.state);
        continue;
      }
      const schedule = entry.schedule.state.watermark >= handled ? entry.schedule : { ...entry.schedule, state: { ...entry.schedule.state, watermark: handled } };
      const plan = planFires(schedule, entry.cron, now, this.planOptions, this.checkIns.downtime);
      if (plan.fires.length >= this.planOptions.maxFires) behind = true;
      const fires: FireRequest[] = [];
      if (schedule.state.buffered && schedule.overlap === 'bufferOne') {
        fires.push(fireRequest(schedule, schedule.state.buffered.nominalAt, 'enqueue', schedule.state.buffered.fireId));
      }
      for (const fire of plan.fires) fires.push(fireRequest(schedule, fire.nominalAt, fire.action));
      const state: ScheduleState = { ...schedule.state, watermark: plan.watermark, nextRunAt: plan.nextRunAt };
      const batch = fires.length > 0 ? fireBatch(schedule, fires, { keepHistory: this.keepHistory }) : null;
      if (batch) batches.push(batch);
      pending.push({ entry, state, batch });
      this.sync.firing(schedule.id);
    }
    return { batches, pending, behind };
  }

  /** Sends the prepared fires (each queue's in one call; see fireCalls), applies the results and settles the book. */
  private async fire(prepared: PreparedFires, takeover: boolean): Promise<{ settled: { entry: BookEntry; state: ScheduleState }[]; fresh: number; existing: number }> {
    const { batches, pending } = prepared;
    const results = new Map<FireBatch, FireResult[]>();
    try {
      for (const chunk of fireCalls(batches)) {
        const replies = await this.backend.fire(chunk);
        chunk.forEach((batch, i) => results.set(batch, replies[i]));
      }
    } catch (error) {
      // Nothing is lost: the watermarks stayed, so the same fires are due at the next look.
      for (const { entry } of pending) this.book.settle(entry, entry.schedule.state);
      throw error;
    }
    const now = this.clock.now();
    let fresh = 0;
    let existing = 0;
    for (const { entry, state, batch } of pending) {
      if (batch) {
        const replies = results.get(batch)!;
        for (const r of replies) if (r.outcome === 'exists') existing += 1; else fresh += 1;
        this.applyResults(entry.schedule, state, batch, replies, now, takeover);
      }
      this.book.settle(entry, state);
    }
    return { settled: pending.map(({ entry, state }) => ({ entry, state })), fresh, existing };
  }

  private applyResults(schedule: Schedule, state: ScheduleState, batch: FireBatch, results: FireResult[], now: number, takeover: boolean): void {
    const bufferedId = schedule.state.buffered?.fireId;
    if (bufferedId !== undefined && results.some((r) => r.fireId === bufferedId && r.outcome !== 'busy')) state.buffered = null;
    results.forEach((result, i) => {
      const fire = batch.fires[i];
      if (result.outcome === 'busy') state.buffered = { fireId: fire.fireId, nominalAt: fire.nominalAt };
      if (result.taskId !== null && (result.outcome === 'enqueued' || result.outcome === 'exists')) state.lastTaskId = result.taskId;
      if (result.outcome === 'enqueued') state.lastFireAt = now;
      if (result.outcome === 'exists' || result.outcome === 'busy') return;
      state.lastOutcome = result.outcome;
      this.tally.count(now);
      this.emit('fire', {
        scheduleId: schedule.id,
        fireId: fire.fireId,
        nominalAt: fire.nominalAt,
        outcome: result.outcome,
        taskId: result.taskId,
        lagMs: now - fire.nominalAt,
        takeover,
      });
    });
  }
}
