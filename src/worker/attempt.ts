/**
 * Runs one attempt of a claimed task — validation, middleware, handler, timeout — and turns
 * what happened into the ack to write.
 */
import type { Ack } from '../backend/contract.js';
import { backoffDelay, DEFAULT_BACKOFF, type BackoffOption } from '../core/backoff.js';
import { PermanentError, RetryableError, TasklineError } from '../core/errors.js';
import type { AttemptRecord } from '../core/task.js';
import { validatePayload } from '../core/define-task.js';
import { inTraceContext } from '../observability/tracing.js';
import type { AttemptOutcome, Execution, TaskContext } from './context.js';
import type { HandlerRegistry } from './handlers.js';
import type { Peers } from './task-types.js';

export type Middleware = (ctx: TaskContext, next: () => Promise<unknown>) => Promise<unknown>;

export interface AttemptPolicy {
  registry: HandlerRegistry;
  middleware: Middleware[];
  backoff: BackoffOption | undefined;
  isFailure: ((error: unknown) => boolean) | undefined;
  workerId: string;
  /** The other live workers: where a task this worker has no handler for can run. */
  peers: Peers;
}

/** ms a handed-back task waits before it is claimable again (the worker that has its handler takes it). */
export const HAND_BACK_DELAY_MS = 500;

const STACK_LINES = 6;

/**
 * Runs the attempt and calls `ended` once with its outcome; never throws. `ack: null` means the
 * lease was lost: nothing may be written. Callbacks rather than async functions: a worker runs
 * tens of thousands of attempts a second, and each await costs promises and a suspended frame.
 */
export function runAttempt(
  execution: Execution,
  ctx: TaskContext,
  policy: AttemptPolicy,
  ended: (execution: Execution, outcome: AttemptOutcome) => void,
): void {
  const { task } = execution;
  let value: unknown;
  try {
    if (task.deadline !== null && task.deadline <= task.startedAt) {
      throw new PermanentError('deadline exceeded');
    }
    const registration = policy.registry.find(task.type);
    if (!registration) {
      handBackOrFail(execution, policy, ended);
      return;
    }
    if (registration.definition?.schema) {
      try {
        ctx.payload = validatePayload(registration.definition, ctx.payload);
      } catch (error) {
        throw new PermanentError((error as Error).message);
      }
    }
    const { handler } = registration;
    const run = policy.middleware.length === 0 ? () => handler(ctx.payload, ctx) : () => compose(policy.middleware, handler)(ctx);
    // W3C trace context from the producer, when the task carries one.
    value = task.headers.traceparent === undefined ? run() : inTraceContext(task.headers, run);
  } catch (error) {
    ended(execution, outcomeOf(execution, false, error, policy));
    return;
  }
  let settled = false;
  const settle = (ok: boolean, result: unknown) => {
    if (settled) return;
    settled = true;
    execution.onAbort = null;
    ended(execution, outcomeOf(execution, ok, result, policy));
  };
  // A timeout, deadline, lost lease or shutdown ends the wait at once (the handler was told
  // through its signal); a cancel waits for the handler to honour it. A hook on the execution
  // rather than a signal listener: no AbortSignal per task.
  const onAbort = () => {
    if (execution.abortReason !== 'cancelled' || execution.endedBy !== null) settle(false, execution.abortError ?? new Error('aborted'));
  };
  let then: unknown;
  try {
    then = value !== null && (typeof value === 'object' || typeof value === 'function') ? (value as { then?: unknown }).then : undefined;
  } catch (error) {
    settle(false, error); // a `then` getter that throws
    return;
  }
  if (typeof then !== 'function') {
    if (execution.abortReason !== null) onAbort();
    settle(true, value);
    return;
  }
  execution.onAbort = onAbort;
  if (execution.abortReason !== null) onAbort();
  try {
    (then as PromiseLike<unknown>['then']).call(
      value,
      (result: unknown) => settle(true, result),
      (error: unknown) => settle(false, error),
    );
  } catch (error) {
    settle(false, error);
  }
}

/**
 * A task of a type this worker has no handler for: handed back without using an
 * attempt when another live worker serving its queue handles the type; otherwise a failed
 * attempt, so it dies only when no worker has handled it for longer than its retries allow.
 */
function handBackOrFail(execution: Execution, policy: AttemptPolicy, ended: (execution: Execution, outcome: AttemptOutcome) => void): void {
  const { task } = execution;
  const failed = (why: string) => ended(execution, outcomeOf(execution, false, new Error(`no handler for task type ${JSON.stringify(task.type)} in worker ${policy.workerId}; ${why}`), policy));
  policy.peers.handlerOf(task.type, task.queue).then(
    (peer) => {
      if (peer === null) return failed(`no live worker serving queue ${task.queue} handles it`);
      if (execution.abortReason !== null || execution.endedBy !== null) return failed('handed back');
      const why = `handed back for worker ${peer}, which handles it`;
      const message = `no handler for task type ${JSON.stringify(task.type)} in worker ${policy.workerId}; ${why}`;
      ended(execution, {
        ack: { kind: 'hand-back', ...base(execution, 'interrupted', message, policy.workerId), delay: HAND_BACK_DELAY_MS },
        handedBack: peer,
      });
    },
    () => failed('the live workers could not be listed'),
  );
}

/** The outcome of a finished handler; never throws, whatever the handler returned or threw. */
function outcomeOf(execution: Execution, ok: boolean, value: unknown, policy: AttemptPolicy): AttemptOutcome {
  try {
    return ok ? completion(execution, value, policy) : { ack: failureAck(execution, value, policy), error: value };
  } catch {
    const error = new Error('the handler ended with a value that cannot be described');
    return { ack: failureAck(execution, error, policy), error };
  }
}

/** The largest result a workflow node may return, in bytes of JSON. */
export const MAX_WORKFLOW_RESULT_BYTES = 1024 * 1024;
// A string of fewer UTF-16 units than this cannot be over the bound (at most 3 bytes a unit).
const MAX_WORKFLOW_RESULT_CHARS = Math.floor(MAX_WORKFLOW_RESULT_BYTES / 3);

function completion(execution: Execution, result: unknown, policy: AttemptPolicy): AttemptOutcome {
  let serialized: string | undefined;
  try {
    serialized = result === undefined ? '' : JSON.stringify(result);
  } catch (error) {
    const failure = new PermanentError(`the handler's result is not JSON-serialisable: ${errorText(error)}`);
    return { ack: failureAck(execution, failure, policy), error: failure };
  }
  const { task } = execution;
  // A workflow keeps each node's result for its children: a bound keeps a 10,000-node chord readable.
  if (task.links.workflowNode !== undefined && serialized !== undefined && serialized.length > MAX_WORKFLOW_RESULT_CHARS && Buffer.byteLength(serialized) > MAX_WORKFLOW_RESULT_BYTES) {
    const failure = new PermanentError(`the handler's result is ${Buffer.byteLength(serialized)} bytes of JSON; a workflow node's result may be at most ${MAX_WORKFLOW_RESULT_BYTES} bytes (store large data elsewhere and return a reference)`);
    return { ack: failureAck(execution, failure, policy), error: failure };
  }
  return {
    ack: { kind: 'complete', id: task.id, queue: task.queue, token: task.token, attempt: attemptRecord(execution, 'completed', null, policy.workerId), result: serialized ?? '' },
    result,
  };
}

type HandlerFn = (payload: any, ctx: TaskContext) => unknown;

function compose(middleware: Middleware[], handler: HandlerFn): (ctx: TaskContext) => Promise<unknown> {
  return (ctx) => {
    const dispatch = (index: number): Promise<unknown> => {
      if (index === middleware.length) return Promise.resolve().then(() => handler(ctx.payload, ctx));
      let called = false;
      return Promise.resolve().then(() =>
        middleware[index](ctx, () => {
          if (called) return Promise.reject(new Error('middleware called next() twice'));
          called = true;
          return dispatch(index + 1);
        }),
      );
    };
    return dispatch(0);
  };
}

function errorText(error: unknown): string {
  try {
    if (error instanceof Error) return String(error.message || error.name);
    if (typeof error === 'string') return error;
    return JSON.stringify(error) ?? String(error);
  } catch {
    try {
      return String(error);
    } catch {
      return 'an error that cannot be printed';
    }
  }
}

function stackHead(error: unknown): string | null {
  if (!(error instanceof Error) || typeof error.stack !== 'string') return null;
  return error.stack.split('\n').slice(0, STACK_LINES).join('\n');
}

function attemptRecord(execution: Execution, outcome: AttemptRecord['outcome'], error: unknown, workerId: string): AttemptRecord {
  const { task } = execution;
  return {
    attempt: task.attempt,
    startedAt: task.startedAt,
    finishedAt: task.startedAt + (Date.now() - execution.localStart),
    outcome,
    error: error === null ? null : errorText(error),
    stack: error === null ? null : stackHead(error),
    workerId,
  };
}

function base(execution: Execution, outcome: AttemptRecord['outcome'], error: unknown, workerId: string) {
  const { task } = execution;
  return { id: task.id, queue: task.queue, token: task.token, attempt: attemptRecord(execution, outcome, error, workerId) };
}

function failureAck(execution: Execution, error: unknown, policy: AttemptPolicy): Ack | null {
  const { task } = execution;
  // A lease lost after a cancel that the handler ignored: nothing may be written either.
  if (execution.endedBy === 'lease-lost') return null;
  switch (execution.abortReason) {
    case 'lease-lost':
      return null;
    case 'shutdown':
      return { kind: 'requeue', ...base(execution, 'interrupted', 'worker shut down', policy.workerId) };
    case 'cancelled':
      return { kind: 'cancelled', ...base(execution, 'cancelled', 'cancelled by operator', policy.workerId), error: 'cancelled by operator' };
    case 'deadline':
      return { kind: 'dead', ...base(execution, 'failed', 'deadline exceeded', policy.workerId), error: 'deadline exceeded' };
    default:
      break;
  }
  const message = execution.abortReason === 'timeout' ? `timeout after ${task.timeout} ms` : errorText(error);
  const failed = base(execution, 'failed', execution.abortReason === 'timeout' ? message : error, policy.workerId);
  if (error instanceof PermanentError || (error instanceof TasklineError && error.code === 'TL_VALIDATION_FAILED')) {
    return { kind: 'dead', ...failed, error: message };
  }
  const consumed = execution.abortReason === 'timeout' || policy.isFailure === undefined || safeIsFailure(policy.isFailure, error);
  if (consumed && task.attempt > task.maxRetries) return { kind: 'dead', ...failed, error: message };
  const delay = error instanceof RetryableError && error.retryIn !== undefined ? error.retryIn : retryDelay(execution, error, policy);
  return { kind: 'retry', ...failed, error: message, delay, consumed };
}

function safeIsFailure(isFailure: (error: unknown) => boolean, error: unknown): boolean {
  try {
    return isFailure(error) !== false;
  } catch {
    return true;
  }
}

function retryDelay(execution: Execution, error: unknown, policy: AttemptPolicy): number {
  const { task } = execution;
  if (task.backoff) return backoffDelay(task.backoff, task.attempt);
  const option = policy.backoff ?? DEFAULT_BACKOFF;
  if (typeof option !== 'function') return backoffDelay(option, task.attempt);
  try {
    const ms = option(task.attempt, error, {
      id: task.id, type: task.type, queue: task.queue, attempt: task.attempt, maxRetries: task.maxRetries, createdAt: task.createdAt, headers: task.headers,
    });
    if (typeof ms === 'number' && Number.isFinite(ms) && ms >= 0) return Math.round(ms);
  } catch {
    // fall through to the default policy
  }
  return backoffDelay(DEFAULT_BACKOFF, task.attempt);
}
