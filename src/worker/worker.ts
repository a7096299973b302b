import { EventEmitter } from 'node:events';
import type { Backend } from '../backend/contract.js';
import { TasklineError } from '../core/errors.js';
import { shortId } from '../core/ids.js';
import { validateBackoffSpec, type BackoffOption } from '../core/backoff.js';
import { isTaskDefinition, type TaskDefinition } from '../core/define-task.js';
import { Acker } from './acker.js';
import type { Middleware } from './attempt.js';
import type { AttemptOutcome } from './context.js';
import { CancelListener } from './cancel-listener.js';
import { sleep } from '../core/sleep.js';
import type { Component } from './component.js';
import { taskMeta, type Execution, type TaskContext, type TaskMeta } from './context.js';
import { HandlerRegistry, type Handler } from './handlers.js';
import { Heartbeat } from './heartbeat.js';
import { Peers } from './task-types.js';
import { createLeaseKeeper } from './lease-keeper.js';
import { createJanitor } from './janitor.js';
import { createMaintenance } from './maintenance.js';
import { Processor } from './processor.js';
import { parseQueues, QueuePicker } from './queue-picker.js';
import { TimeoutWatch } from './timeout-watch.js';
import { quote } from '../core/validate.js';
import { validateTaskId } from '../core/options.js';

/** Options of a Worker. Each default is given in its comment. */
export interface WorkerOptions {
  /** Tasks run at once. Default 10. */
  concurrency?: number;
  /** Queues served, with weights: `['a','b']`, `{ critical: 6, default: 3 }` or `'critical=6,default=3'`. Default `['default']`. */
  queues?: string[] | Record<string, number> | string;
  /** Always drain higher-weight queues first instead of a weighted random pick. Default false. */
  strict?: boolean;
  /** ms a claimed task is leased to this worker; renewed every lease/3. Default 30 000. */
  leaseMs?: number;
  /** ms `stop()` waits for running tasks before aborting and requeueing them. Default 30 000. */
  shutdownTimeout?: number;
  /** Backoff between attempts when the task sets none. Default exponential, base 10 s, max 1 h, 25 % jitter. */
  backoff?: BackoffOption;
  /** Return false for an error that is not a failure: the task retries without using an attempt. Default: every error is a failure. */
  isFailure?: (error: unknown) => boolean;
  /** A stable id for this worker. Default: a random id. */
  id?: string;
  /** ms between recoveries of expired leases (with the forwarder, in one round trip). Default 15 000. */
  recoverInterval?: number;
  /** ms between moves of due scheduled/retrying tasks; an idle processor also wakes when the next one is due. Default 15 000. */
  forwardInterval?: number;
  /** ms between deletions of finished tasks past retention. Default 60 000. */
  janitorInterval?: number;
  /** ms between heartbeats; a worker is listed until 3 intervals after its last one. Default 15 000. */
  heartbeatInterval?: number;
  /** Longest single wait on the store while idle and nothing is scheduled, in ms (new tasks wake it at once). Default 30 000. */
  idleWait?: number;
}

export interface WorkerEvents {
  completed: [task: TaskMeta, result: unknown];
  /** An attempt failed; `next` is what happens to the task. */
  failed: [task: TaskMeta, error: unknown, next: 'retrying' | 'dead' | 'cancelled' | 'queued'];
  /**
   * The attempt's outcome was not stored because its lease was lost (the task was recovered,
   * and may run elsewhere): the lease keeper found the lease gone before the ack was written, or
   * the store refused the ack's token. Neither `completed` nor `failed` follows for the attempt.
   */
  stale: [task: TaskMeta];
  /** This worker has no handler for the task's type; it went back, without using an attempt, for the live worker `peer` that has one. */
  'handed-back': [task: TaskMeta, peer: string];
  /** A background error (store unreachable …); the worker keeps going. */
  error: [error: unknown, where: string];
}

type Phase = 'idle' | 'running' | 'stopping' | 'stopped';

/** Waits for a promise, but at most `ms`; the timer never outlives the wait. */
async function settleWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  const timer = new AbortController();
  try {
    await Promise.race([promise, sleep(ms, timer.signal)]);
  } finally {
    timer.abort();
  }
}

function positive(name: string, value: number | undefined, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new TasklineError('TL_INVALID_OPTION', `worker option ${name} must be a whole number >= ${min}, got ${quote(value)}`);
  }
  return value;
}

const KNOWN_OPTIONS = new Set([
  'concurrency', 'queues', 'strict', 'leaseMs', 'shutdownTimeout', 'backoff', 'isFailure', 'id', 'recoverInterval',
  'forwardInterval', 'janitorInterval', 'heartbeatInterval', 'idleWait',
]);

/**
 * Pulls tasks from the store and runs their handlers. Composed of small components with one
 * start/stop shape: processor, lease keeper, cancel listener, maintenance (forwarder and
 * recoverer), janitor, heartbeat.
 */
export class Worker extends EventEmitter<WorkerEvents> {
  readonly id: string;
  private readonly registry = new HandlerRegistry();
  /** Added with use(); the producer's trace context is applied by the attempt itself (attempt.ts). */
  private readonly middleware: Middleware[] = [];
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly shutdownTimeout: number;
  private readonly picker: QueuePicker;
  private readonly acker: Acker<Execution>;
  private readonly timeouts = new TimeoutWatch(() => this.processor.active.values());
  private readonly processor: Processor;
  private readonly components: Component[];
  private readonly heartbeat: Heartbeat;
  private readonly cancels: CancelListener;
  private phase: Phase = 'idle';
  private stopping: Promise<void> | null = null;

  constructor(readonly backend: Backend, private readonly options: WorkerOptions = {}) {
    super();
    for (const key of Object.keys(options)) {
      if (!KNOWN_OPTIONS.has(key)) throw new TasklineError('TL_INVALID_OPTION', `unknown worker option ${quote(key)}; accepted: ${[...KNOWN_OPTIONS].join(', ')}`);
    }
    // Written into every task it claims: the same rules as a task id.
    this.id = options.id === undefined ? `${process.pid}-${shortId()}` : validateTaskId(options.id, 'worker id');
    this.concurrency = positive('concurrency', options.concurrency, 10);
    this.leaseMs = positive('leaseMs', options.leaseMs, 30_000, 300);
    this.shutdownTimeout = positive('shutdownTimeout', options.shutdownTimeout, 30_000, 0);
    if (options.backoff !== undefined && typeof options.backoff !== 'function') validateBackoffSpec(options.backoff, 'worker option');
    if (options.isFailure !== undefined && typeof options.isFailure !== 'function') {
      throw new TasklineError('TL_INVALID_OPTION', 'worker option isFailure must be a function (error) => boolean');
    }
    this.picker = new QueuePicker(parseQueues(options.queues), options.strict === true);
    const onError = (error: unknown, where: string) => this.reportError(error, where);
    this.acker = new Acker<Execution>(backend, (execution, result) => this.processor.ackWritten(execution, result), (error) => onError(error, 'ack'), 1000, backend.remote ? 2 : 1);
    this.processor = new Processor({
      backend,
      workerId: this.id,
      concurrency: this.concurrency,
      leaseMs: this.leaseMs,
      idleWaitMs: positive('idleWait', options.idleWait, 30_000),
      picker: this.picker,
      acker: this.acker,
      timeouts: this.timeouts,
      policy: {
        registry: this.registry, middleware: this.middleware, backoff: options.backoff, isFailure: options.isFailure, workerId: this.id, peers: new Peers(backend, this.id),
      },
      onAttemptDone: (execution, outcome, stale) => this.reportAttempt(execution, outcome, stale),
      onError,
      lanes: backend.remote ? 2 : 1,
    });
    const queues = this.picker.names;
    this.components = [
      createLeaseKeeper(backend, this.processor, this.leaseMs, onError),
      (this.cancels = new CancelListener(backend, this.processor, onError)),
      createMaintenance(
        backend,
        queues,
        { forwardMs: positive('forwardInterval', options.forwardInterval, 15_000), recoverMs: positive('recoverInterval', options.recoverInterval, 15_000) },
        onError,
        () => this.processor.poke(),
      ),
      createJanitor(backend, queues, positive('janitorInterval', options.janitorInterval, 60_000), onError),
      (this.heartbeat = new Heartbeat(
        backend,
        { id: this.id, queues, concurrency: this.concurrency, startedAt: Date.now() },
        this.registry,
        this.processor,
        positive('heartbeatInterval', options.heartbeatInterval, 15_000),
        onError,
      )),
    ];
  }

  /** Registers the handler of a type, a defined task, or a prefix pattern (`email:*`). */
  handle<P, R, I = P>(type: string | TaskDefinition<P, R, I>, handler: Handler<P, R>): this {
    if (isTaskDefinition(type)) this.registry.register(type.type, handler as Handler, type);
    else this.registry.register(type, handler as Handler, null);
    return this;
  }

  /** Adds middleware; they run in registration order around every handler. */
  use(middleware: (ctx: TaskContext, next: () => Promise<unknown>) => Promise<unknown>): this {
    if (typeof middleware !== 'function') throw new TasklineError('TL_INVALID_ARGUMENT', 'use() takes a function (ctx, next) => Promise');
    this.middleware.push(middleware);
    return this;
  }

  get queues(): string[] {
    return this.picker.names;
  }

  /** Ids of the tasks running now. */
  get running(): string[] {
    return this.processor.active.ids();
  }

  async start(): Promise<void> {
    if (this.phase !== 'idle') throw new TasklineError('TL_INVALID_STATE', `worker ${this.id} cannot start: it is ${this.phase}`);
    this.phase = 'running';
    for (const component of this.components) component.start();
    // Before the first claim: this worker's entry and types are in the store (other workers
    // hand back tasks only this one handles from the start), and cancels reach it.
    await Promise.all([this.heartbeat.announce(), this.cancels.ready()]);
    // stop() during that wait: the processor never starts.
    if (this.phase === 'running') this.processor.start();
  }

  /**
   * Graceful shutdown: stop claiming, wait for running tasks up to `shutdownTimeout` (or the
   * given timeout), then abort them and put them back to queued without counting an attempt.
   */
  stop(options: { timeout?: number } = {}): Promise<void> {
    if (this.phase === 'idle') {
      this.phase = 'stopped';
      return Promise.resolve();
    }
    this.stopping ??= this.shutdown(options.timeout ?? this.shutdownTimeout);
    return this.stopping;
  }

  private async shutdown(timeout: number): Promise<void> {
    this.phase = 'stopping';
    await this.processor.stop();
    // No longer claiming: other workers stop handing tasks back to this one.
    await this.heartbeat.drain();
    await settleWithin(this.processor.idle(), timeout);
    if (this.processor.active.size > 0) {
      this.processor.abortAll('shutdown', 'worker shutting down');
      // Requeue acks are written now; if the store is away, give up after a while: the leases
      // will expire and recover the tasks.
      await settleWithin(this.processor.idle(), Math.max(5_000, this.leaseMs / 2));
    }
    await settleWithin(this.acker.drain(), 5_000);
    this.acker.abandon();
    this.timeouts.clear();
    // Senders before receivers: the lease keeper and listeners stop after the processor.
    for (const component of this.components) {
      try {
        await component.stop();
      } catch (error) {
        this.reportError(error, component.name);
      }
    }
    this.phase = 'stopped';
  }

  private reportAttempt(execution: Execution, outcome: AttemptOutcome, stale: boolean): void {
    const meta = taskMeta(execution.task);
    if (stale) {
      this.emit('stale', meta);
      return;
    }
    const ack = outcome.ack;
    if (!ack) return;
    if (outcome.handedBack !== undefined) {
      this.emit('handed-back', meta, outcome.handedBack);
      return;
    }
    if (ack.kind === 'complete') this.emit('completed', meta, outcome.result);
    else {
      const next = ack.kind === 'retry' || ack.kind === 'hand-back' ? 'retrying' : ack.kind === 'requeue' ? 'queued' : ack.kind;
      this.emit('failed', meta, outcome.error, next);
    }
  }

  private reportError(error: unknown, where: string): void {
    if (this.listenerCount('error') > 0) this.emit('error', error, where);
  }
}
