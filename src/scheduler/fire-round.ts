/**
 * One round of fires: plan every schedule that is due, send the fires (each
 * queue's in one store call), then apply the results to the run states and put the schedules back
 * in the book. The leader runs a round when fires are due; a standby runs one to take over fires
 * the leader has left overdue. A fire is recorded at most once whoever sends it: its id is
 * deterministic and the store claims it atomically with its task.
 */
import type { FireBatch, FireRequest, FireResult, SchedulingBackend } from '../backend/contract.js';
import type { Schedule, ScheduleState } from '../core/schedule.js';
import type { BookSync } from './book-sync.js';
import type { CheckIns } from './check-in.js';
import type { FireTally } from './fire-tally.js';
import { fireBatch, fireCalls, fireRequest, planFires, type PlanOptions } from './plan.js';
import type { BookEntry, ScheduleBook } from './schedule-book.js';
import type { StoreClock } from './store-clock.js';

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

export interface PreparedFires {
  batches: FireBatch[];
  pending: { entry: BookEntry; state: ScheduleState; batch: FireBatch | null }[];
  /** A schedule had more due fires than one plan takes. */
  behind: boolean;
}

export interface SentFires {
  /** Each prepared schedule with its new run state, back in the book. */
  settled: { entry: BookEntry; state: ScheduleState }[];
  /** Fires recorded by this round. */
  fresh: number;
  /** Fires found recorded before (by the leader, or by another standby). */
  existing: number;
}

export class FireRound {
  constructor(
    private readonly backend: SchedulingBackend,
    private readonly book: ScheduleBook,
    private readonly sync: BookSync,
    private readonly checkIns: CheckIns,
    private readonly clock: StoreClock,
    private readonly tally: FireTally,
    private readonly options: { plan: PlanOptions; keepHistory: number },
    private readonly onFire: (event: FireEvent) => void,
  ) {}

  /**
   * Plans every schedule due at `now` (store time): the fire batches and the new run states.
   * Fires the leader's progress covers count as handled; a standby's takeover leaves out the
   * schedules the leader may not have seen yet (`leaveOut`).
   */
  prepare(now: number, leaveOut: ((entry: BookEntry) => boolean) | null): PreparedFires {
    const batches: FireBatch[] = [];
    const pending: PreparedFires['pending'] = [];
    let behind = false;
    const handled = this.book.handledThrough;
    for (const entry of this.book.takeDue(now)) {
      if (leaveOut?.(entry)) {
        this.book.settle(entry, entry.schedule.state);
        continue;
      }
      const schedule = entry.schedule.state.watermark >= handled ? entry.schedule : { ...entry.schedule, state: { ...entry.schedule.state, watermark: handled } };
      const plan = planFires(schedule, entry.cron, now, this.options.plan, this.checkIns.downtime);
      if (plan.fires.length >= this.options.plan.maxFires) behind = true;
      const fires: FireRequest[] = [];
      if (schedule.state.buffered && schedule.overlap === 'bufferOne') {
        fires.push(fireRequest(schedule, schedule.state.buffered.nominalAt, 'enqueue', schedule.state.buffered.fireId));
      }
      for (const fire of plan.fires) fires.push(fireRequest(schedule, fire.nominalAt, fire.action));
      const state: ScheduleState = { ...schedule.state, watermark: plan.watermark, nextRunAt: plan.nextRunAt };
      const batch = fires.length > 0 ? fireBatch(schedule, fires, { keepHistory: this.options.keepHistory }) : null;
      if (batch) batches.push(batch);
      pending.push({ entry, state, batch });
      this.sync.firing(schedule.id);
    }
    return { batches, pending, behind };
  }

  /** Puts prepared schedules back in the book unchanged: their watermarks stayed, so the same fires are due at the next look. */
  putBack(prepared: PreparedFires): void {
    for (const { entry } of prepared.pending) this.book.settle(entry, entry.schedule.state);
  }

  /** Sends the prepared fires (each queue's in one call; see fireCalls), applies the results and settles the book. */
  async send(prepared: PreparedFires, takeover: boolean): Promise<SentFires> {
    const { batches, pending } = prepared;
    const results = new Map<FireBatch, FireResult[]>();
    try {
      for (const chunk of fireCalls(batches)) {
        const replies = await this.backend.fire(chunk);
        chunk.forEach((batch, i) => results.set(batch, replies[i]));
      }
    } catch (error) {
      // Nothing is lost: the watermarks stayed, so the same fires are due at the next look.
      this.putBack(prepared);
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
      this.onFire({
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
