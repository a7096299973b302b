/**
 * The scheduler (DESIGN §6.1): any number of instances may run. One leads at a time (a lease
 * with a fencing epoch, so a deposed leader's writes are refused), but exactly-once does not
 * depend on it: every fire has a deterministic id and claiming it is atomic with enqueueing its
 * task, so two instances firing the same nominal time enqueue one task. "Now" is the store's
 * clock; the host clock only paces the sleeps.
 */
import { EventEmitter } from 'node:events';
import type { FireBatch, FireRequest, FireResult, SchedulingBackend, ScheduleUpdate } from '../backend/contract.js';
import { systemClock, type Clock } from '../core/clock.js';
import { shortId } from '../core/ids.js';
import { sleep } from '../worker/component.js';
import { parseCron, type CronSchedule } from './cron.js';
import { DEFAULT_PLAN_OPTIONS, fireBatch, fireRequest, planFires, type PlanOptions } from './plan.js';
import type { Schedule, ScheduleState } from './schedule.js';

export interface SchedulerOptions {
  /** This instance's id in the leader lease. Default: pid + random. */
  id?: string;
  /** ms the leader lease lasts; renewed every third of it. Default 30 000 (LOCK_TTL). */
  leaseMs?: number;
  /** Longest sleep between two looks at the schedules, ms (new schedules are seen this fast). Default 1 000. */
  maxSleepMs?: number;
  /** A fire later than this is missed and handled by the catch-up policy. Default 2 000 ms. */
  graceMs?: number;
  /** Fire records kept per schedule. Default 1 000. */
  keepHistory?: number;
  /** The host clock (tests shift it). Default: the system clock. */
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
}

export interface SchedulerEvents {
  fire: [event: FireEvent];
  leader: [epoch: number];
  follower: [];
  error: [error: unknown];
}

/** How early the next fires are prepared (listing and planning), in ms. */
const LOOKAHEAD_MS = 250;

interface PreparedTick {
  batches: FireBatch[];
  pending: { schedule: Schedule; state: ScheduleState; batch: FireBatch | null }[];
  nextDue: number;
  behind: boolean;
}

interface CompiledSchedule {
  cron: CronSchedule;
  key: string;
}

export class Scheduler extends EventEmitter<SchedulerEvents> {
  readonly id: string;
  private readonly leaseMs: number;
  private readonly maxSleepMs: number;
  private readonly keepHistory: number;
  private readonly clock: Clock;
  private readonly planOptions: PlanOptions;
  private epoch: number | null = null;
  private leaseRenewAt = 0;
  private loop: Promise<void> | null = null;
  private readonly stopping = new AbortController();
  private readonly compiled = new Map<string, CompiledSchedule>();

  constructor(readonly backend: SchedulingBackend, options: SchedulerOptions = {}) {
    super();
    this.id = options.id ?? `scheduler-${process.pid}-${shortId()}`;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.maxSleepMs = options.maxSleepMs ?? 1_000;
    this.keepHistory = options.keepHistory ?? 1_000;
    this.clock = options.clock ?? systemClock;
    this.planOptions = { ...DEFAULT_PLAN_OPTIONS, graceMs: options.graceMs ?? DEFAULT_PLAN_OPTIONS.graceMs };
  }

  /** True while this instance holds the leader lease. */
  get isLeader(): boolean {
    return this.epoch !== null;
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop;
    if (this.epoch !== null) {
      this.epoch = null;
      await this.backend.releaseLeadership(this.id).catch((error: unknown) => this.report(error));
    }
  }

  private report(error: unknown): void {
    if (this.listenerCount('error') > 0) this.emit('error', error);
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopping.signal.aborted) {
      let wait = this.maxSleepMs;
      try {
        await this.keepLease();
        if (this.epoch !== null) wait = await this.tick();
        else wait = Math.min(this.maxSleepMs, Math.max(50, this.leaseRenewAt - this.clock.now()));
        failures = 0;
      } catch (error) {
        this.report(error);
        failures += 1;
        wait = Math.min(5_000, 100 * 2 ** failures);
      }
      await sleep(Math.max(0, wait), this.stopping.signal);
    }
  }

  /** Takes or renews the lease every third of its length. */
  private async keepLease(): Promise<void> {
    if (this.clock.now() < this.leaseRenewAt) return;
    const epoch = await this.backend.acquireLeadership(this.id, this.leaseMs);
    this.leaseRenewAt = this.clock.now() + Math.floor(this.leaseMs / 3);
    if (epoch !== null && this.epoch !== epoch) this.emit('leader', epoch);
    if (epoch === null && this.epoch !== null) this.emit('follower');
    this.epoch = epoch;
  }

  private compile(schedule: Schedule): CronSchedule {
    const key = `${schedule.cron}|${schedule.timezone}|${schedule.startAt ?? ''}`;
    const cached = this.compiled.get(schedule.id);
    if (cached?.key === key) return cached.cron;
    const cron = parseCron(schedule.cron, schedule.timezone, { anchor: schedule.startAt ?? 0 });
    this.compiled.set(schedule.id, { cron, key });
    return cron;
  }

  /**
   * Fires everything due; returns how long to sleep (host ms) before the next look. When the next
   * fire is less than LOOKAHEAD_MS away, its fires are prepared now and sent the moment they are
   * due, so listing and planning stay off the fire lag.
   */
  private async tick(): Promise<number> {
    const epoch = this.epoch!;
    const now = await this.backend.now();
    const offset = now - this.clock.now();
    const schedules = await this.backend.listSchedules();
    let prepared = this.prepare(schedules, now);
    if (prepared.batches.length === 0 && prepared.nextDue - now <= LOOKAHEAD_MS) {
      const dueAt = prepared.nextDue;
      prepared = this.prepare(schedules, dueAt);
      // Never early: a timer may fire a millisecond before its time by the wall clock, and the
      // store's clock is known here only to within a round trip, so wait until 1 ms past due.
      for (let round = 0; round < 3 && !this.stopping.signal.aborted; round++) {
        const wait = dueAt + 1 - offset - this.clock.now();
        if (wait <= 0) break;
        await sleep(wait, this.stopping.signal);
      }
      if (this.stopping.signal.aborted) return 0;
    }
    const { batches, pending, nextDue, behind } = prepared;
    const results = await this.backend.fire(batches);
    const updates: ScheduleUpdate[] = [];
    for (const entry of pending) {
      if (entry.batch) {
        const batchResults = results[batches.indexOf(entry.batch)];
        this.applyResults(entry.schedule, entry.state, entry.batch, batchResults, this.clock.now() + offset);
      }
      updates.push({ id: entry.schedule.id, generation: entry.schedule.generation, state: entry.state });
    }
    if (updates.length > 0 && !(await this.backend.advanceSchedules(this.id, epoch, updates))) {
      // Fenced out: another instance leads now. Fires already claimed stay exactly-once.
      this.epoch = null;
      this.leaseRenewAt = 0;
      this.emit('follower');
      return this.maxSleepMs;
    }
    if (behind) return 0;
    const untilDue = nextDue === Infinity ? this.maxSleepMs : nextDue - offset - this.clock.now() - LOOKAHEAD_MS;
    const untilRenew = this.leaseRenewAt - this.clock.now();
    return Math.max(0, Math.min(this.maxSleepMs, untilDue, untilRenew));
  }

  /** Plans every schedule as of `now` (store time): the fire batches and the new run states. */
  private prepare(schedules: Schedule[], now: number): PreparedTick {
    const batches: FireBatch[] = [];
    const pending: PreparedTick['pending'] = [];
    let nextDue = Infinity;
    let behind = false;
    for (const schedule of schedules) {
      let cron: CronSchedule;
      try {
        cron = this.compile(schedule);
      } catch (error) {
        this.report(error);
        continue;
      }
      const plan = planFires(schedule, cron, now, this.planOptions);
      if (plan.fires.length >= this.planOptions.maxFires) behind = true;
      const fires: FireRequest[] = [];
      if (schedule.state.buffered && schedule.overlap === 'bufferOne') {
        fires.push(fireRequest(schedule, schedule.state.buffered.nominalAt, 'enqueue', schedule.state.buffered.fireId));
      }
      for (const fire of plan.fires) fires.push(fireRequest(schedule, fire.nominalAt, fire.action));
      const state: ScheduleState = { ...schedule.state, watermark: plan.watermark, nextRunAt: plan.nextRunAt };
      if (plan.nextRunAt !== null) nextDue = Math.min(nextDue, plan.nextRunAt);
      let batch: FireBatch | null = null;
      if (fires.length > 0) {
        batch = fireBatch(schedule, fires, { keepHistory: this.keepHistory });
        batches.push(batch);
      }
      if (batch || !sameState(state, schedule.state)) pending.push({ schedule, state, batch });
    }
    return { batches, pending, nextDue, behind };
  }

  private applyResults(schedule: Schedule, state: ScheduleState, batch: FireBatch, results: FireResult[], now: number): void {
    const bufferedId = schedule.state.buffered?.fireId;
    if (bufferedId !== undefined && results.some((r) => r.fireId === bufferedId && r.outcome !== 'busy')) state.buffered = null;
    results.forEach((result, i) => {
      const fire = batch.fires[i];
      if (result.outcome === 'busy') state.buffered = { fireId: fire.fireId, nominalAt: fire.nominalAt };
      if (result.outcome === 'enqueued') {
        state.lastTaskId = result.taskId;
        state.lastFireAt = now;
      }
      if (result.outcome !== 'exists') state.lastOutcome = result.outcome;
      if (result.outcome !== 'exists') {
        this.emit('fire', {
          scheduleId: schedule.id,
          fireId: fire.fireId,
          nominalAt: fire.nominalAt,
          outcome: result.outcome,
          taskId: result.taskId,
          lagMs: now - fire.nominalAt,
        });
      }
    });
  }
}

function sameState(a: ScheduleState, b: ScheduleState): boolean {
  return a.watermark === b.watermark && a.nextRunAt === b.nextRunAt;
}
