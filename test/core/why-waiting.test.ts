import { describe, expect, it } from 'vitest';
import { whyWaiting, type WaitingTask, type WaitingWorker } from '../../src/core/why-waiting.js';

const task = (over: Partial<WaitingTask> = {}): WaitingTask => ({ type: 'email:send', queue: 'mail', state: 'queued', nextRunAt: null, attempt: 0, maxRetries: 3, ...over });
const worker = (over: Partial<WaitingWorker> = {}): WaitingWorker => ({ queues: ['mail'], concurrency: 2, running: [], types: ['email:*'], ...over });
const T = Date.UTC(2026, 11, 2, 9, 30);

describe('why a task waits', () => {
  it('a task that runs or has finished has no reason', () => {
    for (const state of ['running', 'completed', 'dead', 'cancelled'] as const) expect(whyWaiting(task({ state }), { queuePaused: false, workers: [] })).toBeNull();
  });

  it('scheduled and retrying tasks wait for their time, even in a paused queue', () => {
    expect(whyWaiting(task({ state: 'scheduled', nextRunAt: T }), { queuePaused: false, workers: [] })).toEqual({ reason: 'scheduled', message: 'scheduled for 2026-12-02T09:30:00.000Z', until: T });
    expect(whyWaiting(task({ state: 'scheduled', nextRunAt: T }), { queuePaused: true, workers: [] })?.message).toBe('scheduled for 2026-12-02T09:30:00.000Z; the queue mail is paused');
    expect(whyWaiting(task({ state: 'retrying', nextRunAt: T, attempt: 1 }), { queuePaused: false, workers: [] })).toEqual({ reason: 'retrying', message: 'retrying at 2026-12-02T09:30:00.000Z (attempt 2 of 4)', until: T });
  });

  it('a stored time that is no time Date holds is named as such, never thrown on', () => {
    expect(whyWaiting(task({ state: 'scheduled', nextRunAt: 9_007_199_254_740_991 }), { queuePaused: false, workers: [] })).toEqual({ reason: 'scheduled', message: 'scheduled for a time that cannot be read', until: 9_007_199_254_740_991 });
  });

  it('a queued task: paused queue, then no worker for the queue, then none for the type, then all busy', () => {
    expect(whyWaiting(task(), { queuePaused: true, workers: [worker()] })?.reason).toBe('paused');
    expect(whyWaiting(task(), { queuePaused: false, workers: [worker({ queues: ['other'] })] })).toMatchObject({ reason: 'no-worker-for-queue', message: 'no live worker serves the queue mail' });
    expect(whyWaiting(task(), { queuePaused: false, workers: [worker({ types: ['sms:send'] })] })).toMatchObject({ reason: 'no-worker-for-type', message: 'no live worker of the queue mail handles the type email:send' });
    expect(whyWaiting(task(), { queuePaused: false, workers: [worker({ running: ['a', 'b'] }), worker({ types: ['sms:*'] })] })?.reason).toBe('workers-busy');
  });

  it('a queued task held back by its queue\'s rate or concurrency says which, and until when for a rate; a pause says more', () => {
    const limits = { rate: { limit: 50, intervalMs: 1000 }, concurrency: 5 };
    expect(whyWaiting(task(), { queuePaused: false, held: { limit: 'rate', until: T, ...limits }, workers: [worker()] })).toEqual({
      reason: 'rate-limited', message: 'the queue mail is rate-limited until 2026-12-02T09:30:00.000Z (at most 50 starts per 1s)', until: T,
    });
    expect(whyWaiting(task(), { queuePaused: false, held: { limit: 'concurrency', until: null, ...limits }, workers: [] })).toEqual({
      reason: 'concurrency-full', message: 'the queue mail runs as many tasks as its concurrency allows (5)', until: null,
    });
    expect(whyWaiting(task(), { queuePaused: true, held: { limit: 'concurrency', until: null, ...limits }, workers: [] })?.reason).toBe('paused');
    expect(whyWaiting(task({ state: 'scheduled', nextRunAt: T }), { queuePaused: false, held: { limit: 'rate', until: T + 5, ...limits }, workers: [] })?.reason).toBe('scheduled');
  });

  it('a queued task whose group runs as many as the queue\'s group concurrency allows says so, after the queue\'s own limits', () => {
    const grouped = task({ group: 'tenant-7' });
    const full = { groupConcurrency: 2, running: 2 };
    expect(whyWaiting(grouped, { queuePaused: false, group: full, workers: [worker()] })).toEqual({
      reason: 'group-concurrency-full', message: 'the group tenant-7 of the queue mail runs as many tasks as its group concurrency allows (2)', until: null,
    });
    // More running than the limit (it was lowered while they ran) is full too.
    expect(whyWaiting(grouped, { queuePaused: false, group: { groupConcurrency: 2, running: 5 }, workers: [worker()] })?.reason).toBe('group-concurrency-full');
    // A free slot in the group, no group concurrency, or no group: the worker reasons decide.
    expect(whyWaiting(grouped, { queuePaused: false, group: { groupConcurrency: 2, running: 1 }, workers: [worker()] })).toBeNull();
    expect(whyWaiting(grouped, { queuePaused: false, group: null, workers: [worker()] })).toBeNull();
    expect(whyWaiting(task(), { queuePaused: false, group: full, workers: [worker()] })).toBeNull();
    expect(whyWaiting(task({ group: null }), { queuePaused: false, group: full, workers: [] })?.reason).toBe('no-worker-for-queue');
    // Before the worker reasons; after a pause, a rate and the queue's concurrency.
    expect(whyWaiting(grouped, { queuePaused: false, group: full, workers: [] })?.reason).toBe('group-concurrency-full');
    expect(whyWaiting(grouped, { queuePaused: true, group: full, workers: [] })?.reason).toBe('paused');
    const limits = { rate: { limit: 50, intervalMs: 1000 }, concurrency: 5 };
    expect(whyWaiting(grouped, { queuePaused: false, held: { limit: 'rate', until: T, ...limits }, group: full, workers: [] })?.reason).toBe('rate-limited');
    expect(whyWaiting(grouped, { queuePaused: false, held: { limit: 'concurrency', until: null, ...limits }, group: full, workers: [] })?.reason).toBe('concurrency-full');
    expect(whyWaiting(task({ group: 'tenant-7', state: 'retrying', nextRunAt: T, attempt: 1 }), { queuePaused: false, group: full, workers: [] })?.reason).toBe('retrying');
  });

  it('a queued task a free worker can take has no reason; a worker that names no types may take any', () => {
    expect(whyWaiting(task(), { queuePaused: false, workers: [worker({ running: ['a'] })] })).toBeNull();
    expect(whyWaiting(task(), { queuePaused: false, workers: [worker({ types: undefined })] })).toBeNull();
    expect(whyWaiting(task({ type: 'email:send' }), { queuePaused: false, workers: [worker({ types: ['email:send'] })] })).toBeNull();
  });
});
