/** A value read from a store and reused while fresh, with at most one read in flight. */
export class FreshRead<T> {
  private value: { at: number; value: T } | null = null;
  private reading: Promise<T> | null = null;

  constructor(
    private readonly read: () => Promise<T>,
    private readonly freshMs: number,
  ) {}

  get(): Promise<T> {
    if (this.value !== null && Date.now() - this.value.at < this.freshMs) return Promise.resolve(this.value.value);
    this.reading ??= this.read()
      .then((value) => {
        this.value = { at: Date.now(), value };
        return value;
      })
      .finally(() => {
        this.reading = null;
      });
    return this.reading;
  }
}
