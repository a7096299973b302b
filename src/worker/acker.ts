import type { Ack, AckResult, Backend } from '../backend/contract.js';
import { sleep } from '../core/sleep.js';
import { removeFrom } from './component.js';

export interface Pending<T> {
  ack: Ack;
  /** Handed back to `onWritten` with the ack's result. */
  owner: T;
}

/**
 * Holds the acks of finished attempts until they are written. Most leave with the processor's
 * next claim, in the same call (`take`, then `settle` or `giveBack`; Backend.ackAndClaim). The
 * others — no claim going out: slots busy, queues empty, shutting down — are written in
 * batches: acks of tasks finishing in the same turn of the event loop go in one call, and while
 * batches are in flight new acks gather for the next (a group commit); up to two batches are in
 * flight at once on a remote store.
 * A batch that fails because the store is away is retried until it succeeds or the worker gives
 * up (`abandon`), so a finished attempt is never silently dropped.
 */
export class Acker<T> {
  private pending: Pending<T>[] = [];
  /** An array, not a Set: see ActiveExecutions for what a Set that churns costs. */
  private readonly flushes: Promise<void>[] = [];
  private scheduled = false;
  private abandoned = false;

  constructor(
    private readonly backend: Backend,
    /** Called once per ack written: 'ok', 'stale' (the lease was lost), or 'abandoned'. */
    private readonly onWritten: (owner: T, result: AckResult | 'abandoned') => void,
    private readonly onError: (error: unknown) => void,
    private readonly maxBatch = 1000,
    private readonly maxInFlight = 2,
  ) {}

  /** Queues an ack; `onWritten(owner, result)` follows once it is stored or given up. */
  write(ack: Ack, owner: T): void {
    if (this.abandoned) {
      this.report({ ack, owner }, 'abandoned');
      return;
    }
    this.pending.push({ ack, owner });
    this.schedule();
  }

  /**
   * Takes the acks waiting to be written whose owner `mine` accepts (at most one batch), for
   * the caller to write with its claim. Each comes back through `settle` or `giveBack`.
   */
  take(mine: (owner: T) => boolean): Pending<T>[] {
    if (this.abandoned || this.pending.length === 0) return [];
    const taken: Pending<T>[] = [];
    const kept: Pending<T>[] = [];
    for (const p of this.pending) (taken.length < this.maxBatch && mine(p.owner) ? taken : kept).push(p);
    this.pending = kept;
    return taken;
  }

  /** Acks were written (taken ones, or a flush's batch): their owners hear the results, in order. */
  settle(taken: Pending<T>[], results: readonly AckResult[]): void {
    for (let i = 0; i < taken.length; i++) this.report(taken[i], results[i]);
  }

  /** Taken acks were not written (the call failed): they are retried like any other. */
  giveBack(taken: Pending<T>[]): void {
    if (this.abandoned) {
      for (const p of taken) this.report(p, 'abandoned');
      return;
    }
    this.pending.unshift(...taken);
    this.schedule();
  }

  /** Starts a flush once this turn's acks have gathered, unless enough are in flight. */
  private schedule(): void {
    if (this.scheduled || this.abandoned || this.pending.length === 0 || this.flushes.length >= this.maxInFlight) return;
    this.scheduled = true;
    const flush = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      this.scheduled = false;
      return this.flush();
    });
    this.flushes.push(flush);
    void flush.finally(() => {
      removeFrom(this.flushes, flush);
      this.schedule();
    });
  }

  private async flush(): Promise<void> {
    const batch = this.pending.splice(0, this.maxBatch);
    if (batch.length === 0) return;
    // More acks than one batch holds: the next flush may start now.
    this.schedule();
    let failures = 0;
    for (;;) {
      if (this.abandoned) {
        for (const p of batch) this.report(p, 'abandoned');
        return;
      }
      try {
        this.settle(batch, await this.backend.ack(batch.map((p) => p.ack)));
        return;
      } catch (error) {
        this.onError(error);
        failures += 1;
        await sleep(Math.min(2000, 50 * 2 ** failures));
      }
    }
  }

  /** Resolves once every ack written so far is stored (or abandoned). */
  async drain(): Promise<void> {
    while (this.flushes.length > 0) await Promise.all([...this.flushes]);
  }

  /** Stops retrying: pending acks resolve as 'abandoned' (their leases will expire and recover). */
  abandon(): void {
    this.abandoned = true;
    for (const p of this.pending.splice(0)) this.report(p, 'abandoned');
  }

  /** One owner's callback failing must not keep the others of its batch from theirs. */
  private report(pending: Pending<T>, result: AckResult | 'abandoned'): void {
    try {
      this.onWritten(pending.owner, result);
    } catch (error) {
      this.onError(error);
    }
  }
}
