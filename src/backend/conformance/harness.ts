/**
 * Shared pieces of the conformance suite: the store factory every backend provides, a per-test
 * store (opened before each test, cleaned up after it), and helpers that build tasks the way the
 * Client does and move them through the lifecycle.
 */
import { afterEach, beforeEach, expect } from 'vitest';
import { isTasklineError, type ErrorCode } from '../../core/errors.js';
import { DEFAULT_MAX_PAYLOAD_BYTES, normalizeEnqueue, type InternalEnqueueOptions } from '../../core/options.js';
import type { AttemptRecord, NewTask, TaskState } from '../../core/task.js';
import type { Ack, Backend, BackendEvent, ClaimedTask } from '../contract.js';

/** A store under test: a backend, a way to open more backends on the same store, and a clean-up. */
export interface ConformanceStore {
  backend: Backend;
  /** Opens another backend on the same store (as another process would), its clock shifted by `clockOffsetMs`. */
  reopen(options?: { clockOffsetMs?: number }): Promise<Backend>;
  /** Closes every backend it opened and deletes what the test stored. */
  cleanup(): Promise<void>;
}

export type OpenStore = () => Promise<ConformanceStore>;

export interface StoreHandle {
  readonly backend: Backend;
  reopen(options?: { clockOffsetMs?: number }): Promise<Backend>;
  /** A backend on the same store whose clock is `ms` ahead: time-based behaviour without sleeping. */
  later(ms: number): Promise<Backend>;
}

/** Opens a fresh store before each test of the enclosing describe block and cleans it up after. */
export function useStore(openStore: OpenStore): StoreHandle {
  let store: ConformanceStore | null = null;
  beforeEach(async () => {
    store = await openStore();
  });
  afterEach(async () => {
    const current = store;
    store = null;
    if (current) await current.cleanup();
  });
  const current = (): ConformanceStore => {
    if (!store) throw new Error('the conformance store is only open inside a test');
    return store;
  };
  return {
    get backend() {
      return current().backend;
    },
    reopen: (options) => current().reopen(options),
    later: (ms) => current().reopen({ clockOffsetMs: ms }),
  };
}

export const WORKER = 'worker-1';
export const LEASE_MS = 30_000;
export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

/** A task as the Client would build it. */
export function newTask(type: string, payload: unknown = {}, options: InternalEnqueueOptions = {}): NewTask {
  return normalizeEnqueue(type, payload, options, { maxPayloadBytes: DEFAULT_MAX_PAYLOAD_BYTES, defaults: {} });
}

/** Enqueues one task and returns its id; fails the test if it was not stored. */
export async function enqueueOne(backend: Backend, type = 'test:task', payload: unknown = {}, options: InternalEnqueueOptions = {}): Promise<string> {
  const task = newTask(type, payload, options);
  const [outcome] = await backend.enqueue([task]);
  expect(outcome).toMatchObject({ ok: true });
  return task.id;
}

/** Claims exactly one task from a queue (the test expects one to be there). */
export async function claimOne(backend: Backend, queue = 'default', leaseMs = LEASE_MS, worker = WORKER): Promise<ClaimedTask> {
  const [result] = await backend.claim(worker, [{ queue, count: 1 }], leaseMs);
  expect(result.tasks).toHaveLength(1);
  return result.tasks[0];
}

/** Claims a task and checks it is the expected one. */
export async function claimTask(backend: Backend, id: string, queue = 'default', leaseMs = LEASE_MS): Promise<ClaimedTask> {
  const claimed = await claimOne(backend, queue, leaseMs);
  expect(claimed.id).toBe(id);
  return claimed;
}

export function attemptOf(task: ClaimedTask, outcome: AttemptRecord['outcome'], error: string | null = null): AttemptRecord {
  return { attempt: task.attempt, startedAt: task.startedAt, finishedAt: task.startedAt + 5, outcome, error, stack: null, workerId: WORKER };
}

export function completeAck(task: ClaimedTask, result: unknown = null): Extract<Ack, { kind: 'complete' }> {
  return { kind: 'complete', id: task.id, queue: task.queue, token: task.token, attempt: attemptOf(task, 'completed'), result: JSON.stringify(result) };
}

export function retryAck(task: ClaimedTask, error: string, delay: number, consumed = true): Ack {
  return { kind: 'retry', id: task.id, queue: task.queue, token: task.token, attempt: attemptOf(task, 'failed', error), error, delay, consumed };
}

export function deadAck(task: ClaimedTask, error: string): Ack {
  return { kind: 'dead', id: task.id, queue: task.queue, token: task.token, attempt: attemptOf(task, 'failed', error), error };
}

export function cancelledAck(task: ClaimedTask, error = 'cancelled by operator'): Ack {
  return { kind: 'cancelled', id: task.id, queue: task.queue, token: task.token, attempt: attemptOf(task, 'cancelled', error), error };
}

export function requeueAck(task: ClaimedTask): Ack {
  return { kind: 'requeue', id: task.id, queue: task.queue, token: task.token, attempt: attemptOf(task, 'interrupted', 'worker shut down') };
}

/** Applies one ack and expects it to be accepted. */
export async function ackOk(backend: Backend, ack: Ack): Promise<void> {
  expect(await backend.ack([ack])).toEqual(['ok']);
}

/** Expects a promise to reject with a TasklineError of the given code. */
export async function expectCode(promise: Promise<unknown>, code: ErrorCode): Promise<void> {
  let caught: unknown = null;
  try {
    await promise;
  } catch (error) {
    caught = error;
  }
  expect(caught, `expected a TasklineError ${code}`).not.toBeNull();
  expect(isTasklineError(caught) ? caught.code : caught).toBe(code);
}

/**
 * Creates one task in each requested state in a queue, returning the ids in the order asked.
 * Tasks that must be claimed are made first, so each claim takes the task just enqueued.
 */
export async function createInStates(backend: Backend, queue: string, states: TaskState[]): Promise<string[]> {
  const ids = new Array<string>(states.length);
  const claimed = new Set<TaskState>(['running', 'retrying', 'completed', 'dead']);
  const order = states.map((state, index) => ({ state, index })).sort((a, b) => Number(claimed.has(b.state)) - Number(claimed.has(a.state)));
  for (const { state, index } of order) {
    const options = state === 'scheduled' ? { queue, delay: HOUR } : { queue };
    const id = await enqueueOne(backend, `state:${state}`, { index }, options);
    ids[index] = id;
    if (claimed.has(state)) {
      const task = await claimTask(backend, id, queue);
      if (state === 'retrying') await ackOk(backend, retryAck(task, 'boom', HOUR));
      if (state === 'completed') await ackOk(backend, completeAck(task, { done: index }));
      if (state === 'dead') await ackOk(backend, deadAck(task, 'fatal'));
    } else if (state === 'cancelled') {
      expect(await backend.cancelTask(id)).toBe('cancelled');
    }
  }
  return ids;
}

/** Collects events from a backend until `predicate` holds, or fails after `timeoutMs`. */
export async function subscribeUntil(
  backend: Backend,
  predicate: (events: BackendEvent[]) => boolean,
  trigger: () => Promise<void>,
  timeoutMs = 5000,
): Promise<BackendEvent[]> {
  const events: BackendEvent[] = [];
  let done: () => void = () => undefined;
  const reached = new Promise<void>((resolve) => (done = resolve));
  const unsubscribe = await backend.subscribe((event) => {
    events.push(event);
    if (predicate(events)) done();
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    await trigger();
    await Promise.race([
      reached,
      new Promise<void>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`expected events did not arrive within ${timeoutMs} ms; got ${JSON.stringify(events)}`)), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    await unsubscribe();
  }
  return events;
}

/** ms elapsed while `fn` runs. */
export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/** Every task of a queue in a state, following the cursor to the end. */
export async function listAll(backend: Backend, queue: string, state: TaskState, limit = 1000): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 10_000; page++) {
    const result = await backend.listTasks(queue, state, { limit, cursor });
    ids.push(...result.tasks.map((t) => t.id));
    if (result.nextCursor === null) return ids;
    cursor = result.nextCursor;
  }
  throw new Error('listTasks never ended');
}
