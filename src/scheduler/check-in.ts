/**
 * The check-in: every third of the lease, each instance, leader or standby, reports
 * itself in the registry and bids for the leader lease, in one atomic store call. The answer says
 * who leads (with the fencing epoch that makes a deposed leader's writes refused), how far the
 * leader has fired, the schedules' version and the downtime, and it sets the store clock.
 */
import { hostname } from 'node:os';
import type { SchedulerDowntime, SchedulerInstance, SchedulerLease, SchedulingBackend } from '../backend/contract.js';
import { VERSION } from '../version.js';
import type { FireTally } from './fire-tally.js';
import type { StoreClock } from './store-clock.js';

const HOST = hostname();

/** What a check-in tells the rest of the instance. */
export interface CheckInListener {
  /** After every check-in, with the lease as the store has it, before a change of leadership. */
  checkedIn(lease: SchedulerLease | null): void;
  /** This instance took the lease, with a new epoch. */
  leading(epoch: number): void;
  /** This instance no longer leads: another took the lease, or the store refused a write of its epoch. */
  following(): void;
}

export class CheckIns {
  /** ms between check-ins: a third of the lease, so the leader renews it twice before it could expire. */
  readonly intervalMs: number;
  private held: number | null = null;
  private seenLease: SchedulerLease | null = null;
  private seenDowntime: SchedulerDowntime | undefined;
  private seenVersion: number | null = null;
  /** Host time of the next check-in. */
  private nextAt = 0;
  private startedAt: number | null = null;
  private lastTickAt = 0;

  constructor(
    private readonly backend: SchedulingBackend,
    private readonly clock: StoreClock,
    private readonly tally: FireTally,
    private readonly options: { id: string; leaseMs: number },
    private readonly listener: CheckInListener,
  ) {
    this.intervalMs = Math.max(50, Math.floor(options.leaseMs / 3));
  }

  /** This instance's fencing epoch while it holds the leader lease, else null. */
  get epoch(): number | null {
    return this.held;
  }

  /** The valid lease (any holder) as of the latest check-in, or null. */
  get lease(): SchedulerLease | null {
    return this.seenLease;
  }

  /** When no instance ran, as of the latest check-in (undefined before the first). */
  get downtime(): SchedulerDowntime | undefined {
    return this.seenDowntime;
  }

  /** The store's schedules version as of the latest check-in (null before the first). */
  get schedulesVersion(): number | null {
    return this.seenVersion;
  }

  /** The next check-in is due (host clock). */
  get due(): boolean {
    return this.clock.host.now() >= this.nextAt;
  }

  /** Reports this instance, bids for the lease, and learns the leader's progress, the schedules' version and the downtime. */
  async checkIn(): Promise<void> {
    const result = await this.backend.checkInScheduler(this.instance(), { leaseMs: this.options.leaseMs, bid: true });
    this.clock.sync(result.now);
    this.startedAt ??= result.now;
    this.nextAt = this.clock.host.now() + this.intervalMs;
    this.seenLease = result.lease;
    this.seenDowntime = result.downtime;
    this.listener.checkedIn(result.lease);
    this.seenVersion = result.schedulesVersion;
    if (result.epoch !== this.held) {
      const led = this.held !== null;
      this.held = result.epoch;
      if (result.epoch !== null) this.listener.leading(result.epoch);
      else if (led) this.listener.following();
    }
  }

  /** Makes the next turn check in first: after a failure or a refused write, the lease and the schedules may have moved. */
  checkInNext(): void {
    this.nextAt = 0;
  }

  /** The store refused a write with `epoch`: another instance leads now. */
  fencedOut(epoch: number): void {
    if (this.held === epoch) {
      this.held = null;
      this.listener.following();
    }
    this.nextAt = 0;
  }

  /** Leaves the registry and releases the lease (the scheduler stops). */
  async leave(): Promise<void> {
    this.held = null;
    await this.backend.leaveSchedulers(this.options.id);
  }

  /** Notes a turn of the loop, for the registry's `lastTickAt`. */
  ticked(): void {
    this.lastTickAt = this.clock.now();
  }

  /** Host ms until the store time `at` or the next check-in, whichever is first (`at` null: the check-in). */
  msUntil(at: number | null): number {
    const untilCheckIn = this.nextAt - this.clock.host.now();
    if (at === null) return Math.max(0, untilCheckIn);
    return Math.max(0, Math.min(untilCheckIn, at - this.clock.now()));
  }

  /** This instance as the registry shows it. */
  private instance(): SchedulerInstance {
    const now = this.clock.now();
    return {
      id: this.options.id,
      host: HOST,
      pid: process.pid,
      version: VERSION,
      startedAt: this.startedAt ?? now,
      lastTickAt: this.lastTickAt || now,
      firesLastMinute: this.tally.lastMinute(now),
    };
  }
}
