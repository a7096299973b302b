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
import type { SchedulerLease, SchedulingBackend } from '../backend/contract.js';
import type { Clock } from '../core/clock.js';
import { shortId } from '../core/ids.js';
import { sleep } from '../core/sleep.js';
import { BookSync } from './book-sync.js';
import { CheckIns } from './check-in.js';
import { FireRound, type FireEvent } from './fire-round.js';
import { FireTally } from './fire-tally.js';
import { LeaderTurn } from './leader-turn.js';
import { DEFAULT_PLAN_OPTIONS } from './plan.js';
import { ScheduleBook, type BookEntry } from './schedule-book.js';
import { monotonicClock, StoreClock } from './store-clock.js';

export type { FireEvent } from './fire-round.js';

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

/** A standby whose takeover found the leader had done it all waits up to this many times the takeover delay next time. */
const MAX_TAKEOVER_BACKOFF = 4;

/**
 * A scheduler instance, with the shape of the worker's parts (worker/component.ts): `start()`
 * begins the loop, `stop()` ends it, leaves the registry and resolves once nothing of it runs.
 */
export class Scheduler extends EventEmitter<SchedulerEvents> {
  readonly name = 'scheduler';
  readonly id: string;
  readonly leaseMs: number;
  readonly takeoverDelayMs: number;
  private readonly clock: StoreClock;
  private readonly book = new ScheduleBook();
  private readonly checkIns: CheckIns;
  /** How many takeover delays a standby waits (doubles while its takeovers find a slow leader had done everything). */
  private takeoverBackoff = 1;
  /** A takeover found everything handled: was it this leader, slowly? (Decided at the next check-in.) */
  private slowLeaderCheck: { holder: string; at: number } | null = null;
  private readonly tally = new FireTally();
  private readonly sync: BookSync;
  private readonly fires: FireRound;
  private readonly leader: LeaderTurn;
  private loop: Promise<void> | null = null;
  private readonly stopping = new AbortController();
  private firstCheckIn: Promise<void>;
  private resolveFirstCheckIn!: () => void;

  constructor(readonly backend: SchedulingBackend, options: SchedulerOptions = {}) {
    super();
    this.id = options.id ?? `scheduler-${process.pid}-${shortId()}`;
    this.leaseMs = options.leaseMs ?? 3_000;
    this.takeoverDelayMs = options.takeoverDelayMs ?? 500;
    this.clock = new StoreClock(options.clock ?? monotonicClock);
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
    this.fires = new FireRound(
      backend, this.book, this.sync, this.checkIns, this.clock, this.tally,
      { plan: { ...DEFAULT_PLAN_OPTIONS, graceMs: options.graceMs ?? DEFAULT_PLAN_OPTIONS.graceMs }, keepHistory: options.keepHistory ?? 1_000 },
      (event) => this.emit('fire', event),
    );
    this.leader = new LeaderTurn(backend, this.id, this.book, this.checkIns, this.sync, this.fires, this.clock, this.stopping.signal);
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
    return this.checkIns.epoch !== null ? this.leader.run() : this.standBy();
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
    const counts = await this.fires.send(this.fires.prepare(now, (entry) => now < this.knownAt(entry)), true);
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
}
