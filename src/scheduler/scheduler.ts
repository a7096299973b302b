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
import type { SchedulingBackend } from '../backend/contract.js';
import type { Clock } from '../core/clock.js';
import { shortId } from '../core/ids.js';
import { sleep } from '../core/sleep.js';
import { BookSync } from './book-sync.js';
import { CheckIns } from './check-in.js';
import { FireRound, type FireEvent } from './fire-round.js';
import { FireTally } from './fire-tally.js';
import { LeaderTurn } from './leader-turn.js';
import { DEFAULT_PLAN_OPTIONS } from './plan.js';
import { ScheduleBook } from './schedule-book.js';
import { StandbyTurn } from './standby-turn.js';
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
  private readonly tally = new FireTally();
  private readonly sync: BookSync;
  private readonly fires: FireRound;
  private readonly leader: LeaderTurn;
  private readonly standby: StandbyTurn;
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
      checkedIn: (lease) => {
        this.standby.checkedIn(lease);
        this.resolveFirstCheckIn();
      },
      leading: (epoch) => {
        // A new leader plans from the store's watermarks: what it finds handled answers `exists`.
        this.book.invalidate();
        this.standby.resetBackoff();
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
    this.standby = new StandbyTurn(this.book, this.checkIns, this.sync, this.fires, this.clock, this.takeoverDelayMs, this.stopping.signal);
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
    return this.checkIns.epoch !== null ? this.leader.run() : this.standby.run();
  }
}
