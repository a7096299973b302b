/**
 * The processor: claims tasks into free slots (one round trip for all free slots), runs them,
 * and writes their acks through the Acker. A slot is free again as soon as its handler returns,
 * so the next claim goes out while the previous acks are still in flight (both in one write on
 * the pipelined connection) instead of after them. An idle processor blocks on the store until
 * work may be there, instead of polling.
 */
import type { Backend, ClaimedTask, LeaseRef } from '../backend/contract.js';
import type { Acker } from './acker.js';
import { runAttempt, type AttemptOutcome, type AttemptPolicy } from './attempt.js';
import { sleep, type Component } from './component.js';
import { Execution, type TaskContext } from './context.js';
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
  acker: Acker;
  timeouts: TimeoutWatch;
  policy: AttemptPolicy;
  onAttemptDone: (execution: Execution, outcome: AttemptOutcome, stale: boolean) => void;
  onError: (error: unknown, where: string) => void;
}

const REPORT_DELAY_MS = 500;

export class Processor implements Component {
  readonly name = 'processor';
  /** Running tasks by id. */
  readonly active = new Map<string, Execution>();
  /** Attempts whose handler has not returned yet (the rest of `active` waits for its ack). */
  private running = 0;
  private slotWake: NodeJS.Immediate | null = null;
  private loop: Promise<void> | null = null;
  private stopClaiming = new AbortController();
  private slotWaiters: (() => void)[] = [];
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

  /** Resolves when every running task has finished and its ack is written. */
  async idle(): Promise<void> {
    while (this.active.size > 0) await Promise.all([...this.active.values()].map((e) => e.done));
  }

  leases(): LeaseRef[] {
    return [...this.active.values()].filter((e) => e.abortReason !== 'lease-lost').map((e) => ({ id: e.task.id, queue: e.task.queue, token: e.task.token }));
  }

  private get stopping(): boolean {
    return this.stopClaiming.signal.aborted;
  }

  private async claimLoop(): Promise<void> {
    const { backend, picker, concurrency, leaseMs } = this.options;
    const exhausted = new Set<string>();
    let failures = 0;
    while (!this.stopping) {
      // Handlers running take the slots; tasks waiting for their ack are bounded by concurrency too.
      const free = Math.min(concurrency - this.running, 2 * concurrency - this.active.size);
      if (free <= 0) {
        await this.slotFreed();
        exhausted.clear();
        continue;
      }
      const requests = picker.plan(free, exhausted);
      if (requests.length === 0) {
        await this.waitForWork(exhausted, null);
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
      let nextDueIn: number | null = null;
      for (const [i, result] of results.entries()) {
        if (result.paused || !result.more || result.tasks.length < requests[i].count) exhausted.add(result.queue);
        if (result.nextDueAt !== null) {
          const dueIn = Math.max(0, result.nextDueAt - result.now);
          nextDueIn = nextDueIn === null ? dueIn : Math.min(nextDueIn, dueIn);
        }
        for (const task of result.tasks) this.startTask(task);
      }
      if (this.stopping) break;
      if (exhausted.size === picker.queues.length) await this.waitForWork(exhausted, nextDueIn);
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
    this.active.set(task.id, execution);
    this.running += 1;
    execution.done = this.execute(execution);
  }

  private async execute(execution: Execution): Promise<void> {
    const { task } = execution;
    let payload: unknown;
    try {
      payload = JSON.parse(task.payload);
    } catch {
      payload = task.payload;
    }
    const ctx = this.createContext(execution, payload);
    this.options.timeouts.add(execution);
    let outcome: AttemptOutcome;
    let stale = false;
    let handlerDone = false;
    const endHandler = () => {
      if (handlerDone) return;
      handlerDone = true;
      this.running -= 1;
      this.slotsFreed();
    };
    try {
      outcome = await runAttempt(execution, ctx, this.options.policy);
      this.options.timeouts.remove(execution);
      endHandler();
      this.cancelReport(execution);
      if (outcome.ack) {
        const report = execution.takeReport();
        if (report) await this.writeReport(execution, report);
        const result = await this.options.acker.write(outcome.ack);
        stale = result === 'stale';
      }
    } catch (error) {
      // runAttempt never throws; this guards the bookkeeping above.
      this.options.onError(error, 'execute');
      outcome = { ack: null, error };
    } finally {
      this.options.timeouts.remove(execution);
      this.active.delete(task.id);
      if (handlerDone) this.slotsFreed();
      else endHandler();
    }
    this.options.onAttemptDone(execution, outcome, stale);
  }

  private createContext(execution: Execution, payload: unknown): TaskContext {
    const { task } = execution;
    return {
      task: {
        id: task.id, type: task.type, queue: task.queue, attempt: task.attempt, maxRetries: task.maxRetries,
        createdAt: task.createdAt, headers: task.headers, links: task.links,
      },
      payload,
      get signal() {
        return execution.signal;
      },
      log: (...parts: unknown[]) => {
        const message = parts.map((p) => (typeof p === 'string' ? p : safeJson(p))).join(' ');
        execution.pendingLogs.push({ at: Date.now(), message: message.slice(0, 4000) });
        this.scheduleReport(execution);
      },
      progress: (value: unknown) => {
        execution.pendingProgress = value;
        execution.hasPendingProgress = true;
        this.scheduleReport(execution);
      },
      extendLease: async () => {
        const result = await this.options.backend.renewLeases([{ id: task.id, queue: task.queue, token: task.token }], this.options.leaseMs);
        if (result.lost.length > 0) {
          execution.abort('lease-lost', 'lease lost');
          throw execution.abortError ?? new Error('lease lost');
        }
      },
    };
  }

  private scheduleReport(execution: Execution): void {
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

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
