/**
 * The scheduler: any number of instances may run, and every one keeps the
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
import { BookSync } from './book-sync.js';
import { CheckIns } from './check-in.js';
import { FireRound, type FireEvent } from './fire-round.js';
import { FireTally } from './fire-tally.js';
import { FiringLoop } from './firing-loop.js';
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
 * It only wires its parts together:
 *
 * | part | file | what it does |
 * |---|---|---|
 * | store clock | `store-clock.ts` | "now" is the store's time, carried on the host clock between check-ins |
 * | check-ins | `check-in.ts` | registry record, lease bid, epoch, leader's progress, downtime; leave at stop |
 * | book | `schedule-book.ts` | each held schedule's next due time, in a min-heap |
 * | book sync | `book-sync.ts` | reads what changed into the book; the run state the leader owes |
 * | fire round | `fire-round.ts` | plans the due fires, sends them, applies the results |
 * | leader turn | `leader-turn.ts` | fires on time (look-ahead, never early), advances with the epoch |
 * | standby turn | `standby-turn.ts` | takes over fires the leader left overdue, with a backoff |
 * | firing loop | `firing-loop.ts` | check-in, catch-up, then the leader's or the standby's turn |
 */
export class Scheduler extends EventEmitter<SchedulerEvents> {
  readonly name = 'scheduler';
  readonly id: string;
  readonly leaseMs: number;
  readonly takeoverDelayMs: number;
  private readonly checkIns: CheckIns;
  private readonly standby: StandbyTurn;
  private readonly loop: FiringLoop;
  private running: Promise<void> | null = null;
  private readonly stopping = new AbortController();
  private firstCheckIn: Promise<void>;
  private resolveFirstCheckIn!: () => void;

  constructor(readonly backend: SchedulingBackend, options: SchedulerOptions = {}) {
    super();
    this.id = options.id ?? `scheduler-${process.pid}-${shortId()}`;
    this.leaseMs = options.leaseMs ?? 3_000;
    this.takeoverDelayMs = options.takeoverDelayMs ?? 500;
    const clock = new StoreClock(options.clock ?? monotonicClock);
    const book = new ScheduleBook();
    const tally = new FireTally();
    this.firstCheckIn = new Promise((resolve) => (this.resolveFirstCheckIn = resolve));
    this.checkIns = new CheckIns(backend, clock, tally, { id: this.id, leaseMs: this.leaseMs }, {
      checkedIn: (lease) => {
        this.standby.checkedIn(lease);
        this.resolveFirstCheckIn();
      },
      leading: (epoch) => {
        // A new leader plans from the store's watermarks: what it finds handled answers `exists`.
        book.invalidate();
        this.standby.resetBackoff();
        this.emit('leader', epoch);
      },
      following: () => this.emit('follower'),
    });
    const sync = new BookSync(backend, book, this.checkIns, clock, (error) => this.report(error));
    const fires = new FireRound(
      backend, book, sync, this.checkIns, clock, tally,
      { plan: { ...DEFAULT_PLAN_OPTIONS, graceMs: options.graceMs ?? DEFAULT_PLAN_OPTIONS.graceMs }, keepHistory: options.keepHistory ?? 1_000 },
      (event) => this.emit('fire', event),
    );
    const leader = new LeaderTurn(backend, this.id, book, this.checkIns, sync, fires, clock, this.stopping.signal);
    this.standby = new StandbyTurn(book, this.checkIns, sync, fires, clock, this.takeoverDelayMs, this.stopping.signal);
    this.loop = new FiringLoop(book, this.checkIns, sync, leader, this.standby, this.stopping.signal, (error) => {
      this.report(error);
      this.resolveFirstCheckIn();
    });
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

  /** Begins the loop (once: a stopped scheduler does not start again). */
  start(): void {
    this.running ??= this.loop.run();
  }

  /** Resolves after the first check-in (successful or not) of a started scheduler. */
  ready(): Promise<void> {
    return this.firstCheckIn;
  }

  /** Ends the loop (a fire being waited for goes back to the book), then leaves the registry and releases the lease. */
  async stop(): Promise<void> {
    this.stopping.abort();
    this.resolveFirstCheckIn();
    await this.running;
    if (this.running === null) return;
    await this.checkIns.leave().catch((error: unknown) => this.report(error));
  }

  private report(error: unknown): void {
    if (this.listenerCount('error') > 0) this.emit('error', error);
  }
}
