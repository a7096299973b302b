/**
 * The processor: claims tasks into free slots (one round trip for all free slots), runs them,
 * and writes their acks through the Acker. A slot is free again as soon as its handler returns,
 * so the next claim goes out while the previous acks are still in flight instead of after them.
 * An idle processor blocks on the store until work may be there, instead of polling.
 */
import type { AckResult, Backend, ClaimedTask, LeaseRef } from '../backend/contract.js';
import type { Acker } from './acker.js';
import { runAttempt, type AttemptOutcome, type AttemptPolicy } from './attempt.js';
import { sleep, type Component } from './component.js';
import { ActiveExecutions } from './active-executions.js';
import { AttemptContext, Execution, type ContextHost } from './context.js';
import type { QueuePicker } from './queue-picker.js';
import type { TimeoutWatch } from './timeout-watch.js';

export interface ProcessorOptions {
  backend: Backend;
  workerId: string;
  concurrency: number;
  leaseMs: number;
  /** Longest single block on the store while idle (ms). */
  idleWaitMs: number;
  picker: QueuePicker;
  acker: Acker<Execution>;
  timeouts: TimeoutWatch;
  policy: AttemptPolicy;
  onAttemptDone: (execution: Execution, outcome: AttemptOutcome, stale: boolean) => void;
  onError: (error: unknown, where: string) => void;
}

const REPORT_DELAY_MS = 500;
/** Most tasks one claim asks for (Redis's Lua unpacks a batch into ~8,000 values at most). */
const MAX_CLAIM = 1000;

export class Processor implements Component, ContextHost {
  readonly name = 'processor';
  /** Running tasks, and finished ones whose ack is not written yet. */
  readonly active = new ActiveExecutions();
  /** Attempts whose handler has not returned yet (the rest of `active` waits for its ack). */
  private running = 0;
  private slotWake: NodeJS.Immediate | null = null;
  private loop: Promise<void> | null = null;
  private stopClaiming = new AbortController();
  private slotWaiters: (() => void)[] = [];
  private idleWaiters: (() => void)[] = [];
  private wakeIdle: (() => void) | null = null;
  private readonly reportTimers = new Map<Execution, NodeJS.Timeout>();

  constructor(private readonly options: ProcessorOptions) {}

  start(): void {
    this.stopClaiming = new AbortController();
    this.loop = this.claimLoop();
  }

  /** Stops claiming; running tasks go on (the worker decides how long to wait for them). */
  async stop(): Promise<void> {
    this.stopClaiming.abort();
    if (this.slotWake) clearImmediate(this.slotWake);
    this.slotWake = null;
    this.wakeSlotWaiters();
    await this.loop;
    this.loop = null;
  }

  /** Resolves when every running task has finished and its ack is written (or given up). */
  idle(): Promise<void> {
    if (this.active.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  leases(): LeaseRef[] {
    return this.active.values().filter((e) => e.abortReason !== 'lease-lost').map((e) => ({ id: e.task.id, queue: e.task.queue, token: e.task.token }));
  }

  private get stopping(): boolean {
    return this.stopClaiming.signal.aborted;
  }

  /**
   * One claim at a time, for all the free slots; the overlap between this process and the store
   * comes from the acks (up to two batches in flight, see Acker): while the store writes one
   * batch's acks, the handlers of the next claim run. Two claims of half the slots each cost
   * ~12 % more worker CPU per task for the same throughput (docs/performance.md).
   */
  private async claimLoop(): Promise<void> {
    const { backend, picker, concurrency, leaseMs } = this.options;
    // Queues a claim found empty (or paused) since a handler last ended.
    const exhausted = new Set<string>();
    // ms until the earliest scheduled or retrying task is due, as the last claim saw it.
    let nextDueIn: number | null = null;
    let failures = 0;
    while (!this.stopping) {
      // Handlers running take the slots; tasks waiting for their ack are bounded by concurrency too.
      const free = Math.min(concurrency - this.running, 2 * concurrency - this.active.size);
      if (free <= 0) {
        await this.slotFreed();
        exhausted.clear();
        continue;
      }
      // At most MAX_CLAIM per call: a store script unpacks a batch into one call's arguments.
      const requests = picker.plan(Math.min(free, MAX_CLAIM), exhausted);
      if (requests.length === 0) {
        await this.waitForWork(exhausted, nextDueIn);
        nextDueIn = null;
        continue;
      }
      let results;
      try {
        results = await backend.claim(this.options.workerId, requests, leaseMs);
        failures = 0;
      } catch (error) {
        this.options.onError(error, 'claim');
        failures += 1;
        await sleep(Math.min(5000, 100 * 2 ** failures), this.stopClaiming.signal);
        continue;
      }
      for (const [i, result] of results.entries()) {
        if (result.paused || !result.more || result.tasks.length < requests[i].count) exhausted.add(result.queue);
        if (result.nextDueAt !== null) {
          const dueIn = Math.max(0, result.nextDueAt - result.now);
          nextDueIn = nextDueIn === null ? dueIn : Math.min(nextDueIn, dueIn);
        }
        for (const task of result.tasks) {
          try {
            this.startTask(task);
          } catch (error) {
            // Nothing in startTask throws; were it to, the other tasks of the claim still start.
            this.options.onError(error, 'start');
          }
        }
      }
    }
  }

  private async waitForWork(exhausted: Set<string>, nextDueIn: number | null): Promise<void> {
    const wait = nextDueIn === null ? this.options.idleWaitMs : Math.min(this.options.idleWaitMs, nextDueIn + 5);
    // Wakes on new work (the store's notification), on poke() or on stop.
    const wake = new AbortController();
    this.wakeIdle = () => wake.abort();
    const onStop = () => wake.abort();
    this.stopClaiming.signal.addEventListener('abort', onStop, { once: true });
    try {
      if (!this.stopping) await this.options.backend.waitForWork(this.options.picker.names, wait, wake.signal);
    } finally {
      this.stopClaiming.signal.removeEventListener('abort', onStop);
      this.wakeIdle = null;
    }
    exhausted.clear();
  }

  /**
   * Ends an idle wait now: this process knows of new work (e.g. its recoverer just moved
   * tasks), which matters when another process's blocked connection took the store's wake-up.
   */
  poke(): void {
    this.wakeIdle?.();
  }

  private slotFreed(): Promise<void> {
    if (this.stopping) return Promise.resolve();
    return new Promise((resolve) => this.slotWaiters.push(resolve));
  }

  /**
   * Wakes the claim loop once the current burst of finishing attempts is over (setImmediate), so
   * that one claim fills all the slots they freed, and goes out in the same write as their acks.
   */
  private slotsFreed(): void {
    this.slotWake ??= setImmediate(() => {
      this.slotWake = null;
      this.wakeSlotWaiters();
    });
  }

  private wakeSlotWaiters(): void {
    const waiters = this.slotWaiters;
    this.slotWaiters = [];
    for (const wake of waiters) wake();
  }

  private startTask(task: ClaimedTask): void {
    const execution = new Execution(task, Date.now());
    this.active.add(execution);
    this.running += 1;
    let payload: unknown;
    try {
      payload = JSON.parse(task.payload);
    } catch {
      payload = task.payload;
    }
    const ctx = new AttemptContext(this, execution, payload);
    this.options.timeouts.add(execution);
    runAttempt(execution, ctx, this.options.policy, this.attemptEnded);
  }

  /** The handler is done (or was given up on): its slot is free, and the ack goes to the acker. */
  private readonly attemptEnded = (execution: Execution, outcome: AttemptOutcome): void => {
    try {
      this.options.timeouts.remove(execution);
      this.running -= 1;
      this.slotsFreed();
      this.cancelReport(execution);
      if (!outcome.ack) {
        this.finish(execution, outcome, false);
        return;
      }
      execution.outcome = outcome;
      const report = execution.takeReport();
      if (report) void this.writeReport(execution, report).then(() => this.options.acker.write(outcome.ack!, execution));
      else this.options.acker.write(outcome.ack, execution);
    } catch (error) {
      // Nothing above throws; this guards the bookkeeping.
      this.options.onError(error, 'execute');
      this.finish(execution, { ack: null, error }, false);
    }
  };

  /** The acker stored (or gave up on) an attempt's ack. */
  ackWritten(execution: Execution, result: AckResult | 'abandoned'): void {
    // An abandoned ack was not stored (the store stayed away through shutdown): no completed or
    // failed event for it; the task runs again once its lease expires.
    const outcome = result === 'abandoned' ? { ack: null, error: execution.outcome?.error } : (execution.outcome ?? { ack: null });
    this.finish(execution, outcome, result === 'stale');
  }

  private finish(execution: Execution, outcome: AttemptOutcome, stale: boolean): void {
    execution.outcome = null;
    this.active.delete(execution);
    this.slotsFreed();
    try {
      this.options.onAttemptDone(execution, outcome, stale);
    } finally {
      if (this.active.size === 0) {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const wake of waiters) wake();
      }
    }
  }

  async extendLease(execution: Execution): Promise<void> {
    const { task } = execution;
    const result = await this.options.backend.renewLeases([{ id: task.id, queue: task.queue, token: task.token }], this.options.leaseMs);
    if (result.lost.length > 0) {
      execution.abort('lease-lost', 'lease lost');
      throw execution.abortError ?? new Error('lease lost');
    }
  }

  scheduleReport(execution: Execution): void {
    if (this.reportTimers.has(execution)) return;
    this.reportTimers.set(
      execution,
      setTimeout(() => {
        this.reportTimers.delete(execution);
        const report = execution.takeReport();
        if (report) void this.writeReport(execution, report);
      }, REPORT_DELAY_MS),
    );
  }

  private cancelReport(execution: Execution): void {
    const timer = this.reportTimers.get(execution);
    if (timer) clearTimeout(timer);
    this.reportTimers.delete(execution);
  }

  private async writeReport(execution: Execution, report: ReturnType<Execution['takeReport']> & object): Promise<void> {
    const { task } = execution;
    try {
      await this.options.backend.reportProgress({ id: task.id, queue: task.queue, token: task.token }, report);
    } catch (error) {
      this.options.onError(error, 'report progress');
    }
  }

  /** Aborts every running task (shutdown timeout passed). */
  abortAll(reason: 'shutdown', message: string): void {
    for (const execution of this.active.values()) execution.abort(reason, message);
  }
}
