/**
 * "Now" for a scheduler instance is the store's clock: each check-in reads it, and
 * between check-ins it is carried on the host clock, which only paces the sleeps. So instances
 * whose host clocks disagree still fire each nominal time at the same store time.
 */
import type { Clock } from '../core/clock.js';

/** Monotonic ms on the epoch scale (performance.now() never steps). */
export const monotonicClock: Clock = { now: () => performance.timeOrigin + performance.now() };

export class StoreClock {
  /** Store time minus host time, as of the latest check-in (an underestimate: never early). */
  private offset = 0;

  /** `host` paces the sleeps; a monotonic clock, so a step of the wall clock neither stalls nor hurries them. */
  constructor(readonly host: Clock) {}

  /** The store's time now (ms), as carried since the latest check-in. */
  now(): number {
    return this.host.now() + this.offset;
  }

  /** Takes the store's time as a check-in read it. */
  sync(storeNow: number): void {
    this.offset = storeNow - this.host.now();
  }
}
