import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ClaimedTask } from '../../src/backend/contract.js';
import { ActiveExecutions } from '../../src/worker/active-executions.js';
import { Execution } from '../../src/worker/context.js';
import { TimeoutWatch } from '../../src/worker/timeout-watch.js';

function execution(id: string, timeout = 60_000, localStart = Date.now()): Execution {
  const task: ClaimedTask = {
    id, type: 't', queue: 'q', payload: '{}', attempt: 1, maxRetries: 3, timeout, deadline: null, createdAt: 0, startedAt: 0,
    headers: {}, links: {}, backoff: null, token: '1', leaseExpiresAt: 30_000,
  };
  return new Execution(task, localStart, { capacity: 1, running: 1, waiter: null });
}

describe('ActiveExecutions', () => {
  it('adds, finds and removes executions, reusing freed slots', () => {
    const active = new ActiveExecutions();
    const [a, b, c] = [execution('a'), execution('b'), execution('c')];
    active.add(a);
    active.add(b);
    active.add(a); // already there: no second entry
    expect(active.size).toBe(2);
    active.delete(a);
    active.delete(a); // already gone: nothing changes
    expect(active.size).toBe(1);
    active.add(c);
    expect(c.slot).toBe(0);
    expect(active.values()).toEqual([c, b]);
    expect(active.withId('b')).toEqual([b]);
    expect(active.withId('a')).toEqual([]);
  });

  it('holds two executions of one task id apart (the task came back after its lease was lost)', () => {
    const active = new ActiveExecutions();
    const [first, second] = [execution('x', 60_000, 1), execution('x', 60_000, 2)];
    active.add(first);
    active.add(second);
    expect(active.withId('x')).toEqual([first, second]);
    active.delete(first);
    expect(active.withId('x')).toEqual([second]);
  });
});

describe('TimeoutWatch', () => {
  // Its one timer runs on vitest's fake timers, and its clock is the fake Date: no sleeps.
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('aborts only the executions whose timeout passed, and none that ended before', () => {
    const active = new ActiveExecutions();
    const watch = new TimeoutWatch(() => active.values());
    const start = Date.now();
    const [short, ended, long] = [execution('short', 20, start), execution('ended', 20, start), execution('long', 60_000, start)];
    for (const e of [short, ended, long]) {
      active.add(e);
      watch.add(e);
    }
    watch.remove(ended);
    vi.advanceTimersByTime(19);
    expect(short.abortReason).toBeNull();
    vi.advanceTimersByTime(1);
    expect(short.abortReason).toBe('timeout');
    expect(short.abortError?.message).toBe('timeout after 20 ms');
    expect(ended.abortReason).toBeNull();
    expect(long.abortReason).toBeNull();
    watch.clear();
  });

  it('re-arms for the next expiry after it fires, and one armed timer serves later additions', () => {
    const active = new ActiveExecutions();
    const watch = new TimeoutWatch(() => active.values());
    const start = Date.now();
    const first = execution('first', 100, start);
    const second = execution('second', 250, start);
    const earlier = execution('earlier', 50, start + 10);
    for (const e of [first, second, earlier]) {
      active.add(e);
      watch.add(e);
    }
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(60);
    expect([earlier.abortReason, first.abortReason, second.abortReason]).toEqual(['timeout', null, null]);
    vi.advanceTimersByTime(40);
    expect(first.abortReason).toBe('timeout');
    vi.advanceTimersByTime(149);
    expect(second.abortReason).toBeNull();
    vi.advanceTimersByTime(1);
    expect(second.abortReason).toBe('timeout');
    expect(vi.getTimerCount()).toBe(0);
  });
});
