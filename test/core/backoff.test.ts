/** Backoff (pure): the delay before the next attempt, with the jitter's random source injected. */
import { describe, expect, it } from 'vitest';
import { backoffDelay, DEFAULT_BACKOFF, JITTER_FRACTION, validateBackoffSpec } from '../../src/core/backoff.js';

describe('backoffDelay', () => {
  const none = () => 0;
  const most = () => 0.999999;

  it('exponential: base · 2^(attempt-1), capped at max, plus up to 25 % jitter', () => {
    expect([1, 2, 3, 4].map((a) => backoffDelay(DEFAULT_BACKOFF, a, none))).toEqual([10_000, 20_000, 40_000, 80_000]);
    expect(backoffDelay(DEFAULT_BACKOFF, 20, none)).toBe(3_600_000);
    expect(backoffDelay(DEFAULT_BACKOFF, 1, most)).toBe(Math.round(10_000 * (1 + JITTER_FRACTION * 0.999999)));
    expect(backoffDelay(DEFAULT_BACKOFF, 1, () => 0.5)).toBe(11_250);
  });

  it('never overflows for huge attempt numbers, and attempt 0 counts as the first', () => {
    expect(backoffDelay(DEFAULT_BACKOFF, 10_000, none)).toBe(3_600_000);
    expect(backoffDelay(DEFAULT_BACKOFF, 0, none)).toBe(10_000);
  });

  it('fixed: the same delay every time, without jitter', () => {
    expect(backoffDelay({ type: 'fixed', delay: 1234 }, 7, most)).toBe(1234);
  });
});

describe('validateBackoffSpec', () => {
  it('fills the exponential defaults and refuses other shapes, naming where', () => {
    expect(validateBackoffSpec({ type: 'exponential' }, 'x')).toEqual({ type: 'exponential', base: 10_000, max: 3_600_000 });
    expect(() => validateBackoffSpec({ type: 'fixed', delay: -1 }, 'enqueue option')).toThrow(/^enqueue option: backoff must be/);
    expect(() => validateBackoffSpec(() => 5, 'enqueue option')).toThrow(/a backoff function is accepted only by the Worker/);
  });
});
