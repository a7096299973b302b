/**
 * The processor: claims tasks into free slots (one round trip for all free slots of a lane), runs
 * them, and hands their acks to the Acker. A slot is free again as soon as its handler returns;
 * the lane's next claim carries the acks written meanwhile (Backend.ackAndClaim), and the Acker
 * writes those no claim takes. An idle processor blocks on the store until work may be there,
 * instead of polling.
 */
import type { AckAndClaimResult, AckResult, Backend, ClaimedTask, LeaseRef } from '../backend/contract.js';
import type { Acker } from './acker.js';
import { HAND_BACK_DELAY_MS, runAttempt, type AttemptPolicy } from './attempt.js';
import { sleep } from '../core/sleep.js';
import type { Component } from './component.js';
import { ActiveExecutions } from './active-executions.js';
import { AttemptContext, Execution, type AttemptOutcome, type ContextHost, type Lane } from './context.js';
import type { QueuePicker } from './queue-picker.js';
import type { TimeoutWatch } from './timeout-watch.js';
import { workflowInputsOf } from './workflow-inputs.js';

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
  /** How many lanes the slots are split into (see Lane); 1 unless the store is remote. */
  lanes: number;
}

/** Splits `concurrency` slots into `count` lanes as evenly as possible (none empty). */
export function splitLanes(concurrency: number, count: number): Lane[] {
  const lanes = Math.max(1, Math.min(count, concurrency));
  return Array.from({ length: lanes }, (_, i) => ({
    capacity: Math.floor(concurrency / lanes) + (i < concurrency % lanes ? 1 : 0),
    running: 0,
    waiter: null,
  }));
}

const REPORT_DELAY_MS = 500;
/** How long after a hand-back an idle wait ignores due tasks: the hand-back's delay and a margin for the worker with the handler to claim it. */
const HAND_BACK_HOLD_MS = HAND_BACK_DELAY_MS + 500;
/** Most tasks one claim asks for (Redis's Lua unpacks a batch into ~8,000 values at most). */
const MAX_CLAIM = 1000;

export class Processor implements Component, ContextHost {
  readonly name = 'processor';
  /** Running tasks, and finished ones whose ack is not written yet. */
  readonly active = new ActiveExecutions();
  readonly lanes: Lane[];
  private slotWake: NodeJS.Immediate | null = null;
  private loop: Promise<void> | null = null;
  private stopClaiming = new AbortController();
  private idleWaiters: (() => void)[] = [];
  private wakeIdle: (() => void) | null = null;
  /** The one wait on the store while no lane finds work: lanes that find none join it. */
  private workWait: Promise<void> | null = null;
  /** Queues a claim found empty (or paused), until a lane wakes for a freed slot or an idle wait ends (shared by the lanes). */
  private readonly exhausted = new Set<string>();
  /**
   * After handing a task back (no handler here), an idle wait of this worker does not end for
   * a due task before this time (Date.now): the handed-back task falls due first, and the
   * worker with its handler — woken by the hand-back — claims it. Claims for new
   * work are not held back, so this worker's own tasks run on.
   */
  private handedBackUntil = 0;
  /** The first claim after an idle wait, while it is in flight (see claimLoop). */
  private probe: Promise<void> | null = null;
  /** ms until the earliest scheduled or retrying task is due, as the last claim saw it. */
  private nextDueIn: number | null = null;
  private readonly reportTimers = new Map<Execution, NodeJS.Timeout>();

  constructor(private readonly options: ProcessorOptions) {
    this.lanes = splitLanes(options.concurrency, options.lanes);
  }

  start(): void {
    this.stopClaiming = new AbortController();
    this.loop = Promise.all(this.lanes.map((lane) => this.claimLoop(lane))).then(() => undefined);
  }

  /** Stops claiming; running tasks go on (the worker decides how long to wait for them). */
  async stop(): Promise<void> {
    this.stopClaiming.abort();
    if (this.slotWake) clearImmediate(this.slotWake);
    this.slotWake = null;
    this.wakeLanes();
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
   * A lane's claims, one at a time, for all its free slots. The lanes share what they learn of
   * the queues (empty ones, the next due time) and one idle wait on the store.
   */
  private async claimLoop(lane: Lane): Promise<void> {
    const { backend, picker, concurrency, leaseMs } = this.options;
    const exhausted = this.exhausted;
    let failures = 0;
    // This lane's next claim is the first after an idle wait: the other lanes wait for its answer.
    let probing = false;
    while (!this.stopping) {
      // Handlers running take the slots; tasks waiting for their ack are bounded by concurrency too.
      const free = Math.min(lane.capacity - lane.running, 2 * concurrency - this.active.size);
      if (free <= 0) {
        await this.slotFreed(lane);
        exhausted.clear();
        continue;
      }
      // At most MAX_CLAIM per call: a store script unpacks a batch into one call's arguments.
      const requests = picker.plan(Math.min(free, MAX_CLAIM), exhausted);
      if (requests.length === 0) {
        await this.waitForWork();
        // The first lane back looks at the queues; the others go on once it knows what is there
        // (an idle worker makes one claim per wait, not one per lane).
        if (this.probe) await this.probe;
        else probing = true;
        continue;
      }
      // The lane's acks waiting to be written go with its claim, in the same call.
      const acks = this.options.acker.take((execution) => execution.lane === lane);
      let reply: AckAndClaimResult;
      try {
        const claim = backend.ackAndClaim(
          acks.map((p) => p.ack),
          this.options.workerId,
          requests,
          leaseMs,
        );
        if (probing) {
          probing = false;
          const probe: Promise<void> = claim.then(
            () => undefined,
            () => undefined,
          ).finally(() => {
            if (this.probe === probe) this.probe = null;
          });
          this.probe = probe;
        }
        reply = await claim;
        failures = 0;
      } catch (error) {
        this.options.acker.giveBack(acks);
        this.options.onError(error, 'claim');
        failures += 1;
        await sleep(Math.min(5000, 100 * 2 ** failures), this.stopClaiming.signal);
        continue;
      }
      // After the try: a written ack is reported once, never also given back.
      this.options.acker.settle(acks, reply.acks);
      for (const [i, result] of reply.claims.entries()) {
        if (result.paused || !result.more || result.tasks.length < requests[i].count) exhausted.add(result.queue);
        // A limit says when it may let a task start (a rate's next start; the earliest lease to
        // expire under concurrency or groupConcurrency, a crashed worker's included): the idle
        // wait ends then, not later (an ack before then wakes the wait).
        const dueAt = result.limitedUntil === null ? result.nextDueAt : Math.min(result.limitedUntil, result.nextDueAt ?? Infinity);
        if (dueAt !== null) {
          const dueIn = Math.max(0, dueAt - result.now);
          this.nextDueIn = this.nextDueIn === null ? dueIn : Math.min(this.nextDueIn, dueIn);
        }
        // A workflow node's handler sees its parents' results: read for all of them in one call.
        const inputs = await workflowInputsOf(this.options.backend, result.tasks);
        for (const [index, task] of result.tasks.entries()) {
          try {
            this.startTask(task, lane, inputs?.[index] ?? null);
          } catch (error) {
            // Nothing in startTask throws; were it to, the other tasks of the claim still start.
            this.options.onError(error, 'start');
          }
        }
      }
    }
  }

  /** Waits for work with the other lanes: the first lane to find none starts the wait. */
  private waitForWork(): Promise<void> {
    if (!this.workWait) {
      const wait = this.blockForWork().finally(() => (this.workWait = null));
      this.workWait = wait;
    }
    return this.workWait;
  }

  private async blockForWork(): Promise<void> {
    let nextDueIn = this.nextDueIn;
    this.nextDueIn = null;
    // After a hand-back: not before the hold ends, and then at the latest — should the worker
    // with the handler not have claimed the task, this one looks again (and hands it back again).
    const holdBack = this.handedBackUntil - Date.now();
    if (holdBack > 0) nextDueIn = Math.max(nextDueIn ?? 0, holdBack);
    const wait = nextDueIn === null ? this.options.idleWaitMs : Math.min(this.options.idleWaitMs, nextDueIn + 5);
    // Wakes on new work (the store's notification), on poke() or on stop.
    const wake = new AbortController();
    this.wakeIdle = () => wake.abort();
    const onStop = () => wake.abort();
    this.stopClaiming.signal.addEventListener('abort', onStop, { once: true });
    try {
      if (!this.stopping) await this.options.backend.waitForWork(this.options.picker.names, wait, wake.signal, wait < this.options.idleWaitMs);
    } finally {
      this.stopClaiming.signal.removeEventListener('abort', onStop);
      this.wakeIdle = null;
    }
    this.exhausted.clear();
  }

  /**
   * Ends an idle wait now: this process knows of new work (e.g. its recoverer just moved
   * tasks), which matters when another process's blocked connection took the store's wake-up.
   */
  poke(): void {
    this.wakeIdle?.();
  }

  private slotFreed(lane: Lane): Promise<void> {
    if (this.stopping) return Promise.resolve();
    return new Promise((resolve) => (lane.waiter = resolve));
  }

  /**
   * Wakes the claim loops once the current burst of finishing attempts is over (setImmediate), so
   * that one claim per lane fills all the slots they freed, and goes out with their acks.
   */
  private slotsFreed(): void {
    this.slotWake ??= setImmediate(() => {
      this.slotWake = null;
      this.wakeLanes();
    });
  }

  private wakeLanes(): void {
    for (const lane of this.lanes) this.wakeLane(lane);
  }

  private wakeLane(lane: Lane): void {
    const wake = lane.waiter;
    lane.waiter = null;
    wake?.();
  }

  private startTask(task: ClaimedTask, lane: Lane, inputs: AttemptContext['inputs']): void {
    const execution = new Execution(task, Date.now(), lane);
    this.active.add(execution);
    lane.running += 1;
    let payload: unknown;
    try {
      payload = JSON.parse(task.payload);
    } catch {
      payload = task.payload;
    }
    const ctx = new AttemptContext(this, execution, payload);
    ctx.inputs = inputs;
    this.options.timeouts.add(execution);
    runAttempt(execution, ctx, this.options.policy, this.attemptEnded);
  }

  /** The handler is done (or was given up on): its slot is free, and the ack goes to the acker. */
  private readonly attemptEnded = (execution: Execution, outcome: AttemptOutcome): void => {
    try {
      this.options.timeouts.remove(execution);
      const { lane } = execution;
      lane.running -= 1;
      // The lane's last handler: its claim (carrying the acks written by then) leaves in this
      // turn of the event loop. A turn later the other lane's reply may have been read first,
      // and the two claims would leave together and come back together, ending the overlap.
      if (lane.running === 0 && lane.waiter) this.wakeLane(lane);
      else this.slotsFreed();
      this.cancelReport(execution);
      if (outcome.handedBack !== undefined) this.handedBackUntil = Date.now() + HAND_BACK_HOLD_MS;
      if (!outcome.ack) {
        // No ack: the lease was lost (a renewal found it taken over) — as stale as an ack the
        // store refuses, and reported the same way.
        this.finish(execution, outcome, leaseLost(execution));
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

/** The attempt was ended by the loss of its lease (also after a cancel the handler ignored). */
function leaseLost(execution: Execution): boolean {
  return execution.abortReason === 'lease-lost' || execution.endedBy === 'lease-lost';
}
