import { systemClock, type Clock } from './clock.js';

/** A value read from a store and reused while fresh, with at most one read in flight. */
export class FreshRead<T> {
  private value: { at: number; value: T } | null = null;
  private reading: Promise<T> | null = null;

  constructor(
    private readonly read: () => Promise<T>,
    private readonly freshMs: number,
    private readonly clock: Clock = systemClock,
  ) {}

  get(): Promise<T> {
    if (this.value !== null && this.clock.now() - this.value.at < this.freshMs) return Promise.resolve(this.value.value);
    this.reading ??= this.read()
      .then((value) => {
        this.value = { at: this.clock.now(), value };
        return value;
      })
      .finally(() => {
        this.reading = null;
      });
    return this.reading;
  }
}
