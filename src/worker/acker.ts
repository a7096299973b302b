import type { Ack, AckResult, Backend } from '../backend/contract.js';
import { sleep } from './component.js';

interface Pending {
  ack: Ack;
  resolve: (result: AckResult | 'abandoned') => void;
}

/**
 * Writes acks in batches: while one batch is in flight, new acks gather for the next (a group
 * commit), so a busy worker writes many acks per round trip. A batch that fails because the
 * store is away is retried until it succeeds or the worker gives up (`abandon`), so a finished
 * attempt is never silently dropped.
 */
export class Acker {
  private pending: Pending[] = [];
  private flushing: Promise<void> | null = null;
  private abandoned = false;

  constructor(
    private readonly backend: Backend,
    private readonly onError: (error: unknown) => void,
    private readonly maxBatch = 1000,
  ) {}

  write(ack: Ack): Promise<AckResult | 'abandoned'> {
    if (this.abandoned) return Promise.resolve('abandoned');
    return new Promise((resolve) => {
      this.pending.push({ ack, resolve });
      this.flushing ??= this.flushLoop();
    });
  }

  private async flushLoop(): Promise<void> {
    // Let acks of tasks finishing in the same tick join this batch.
    await new Promise((resolve) => setImmediate(resolve));
    let failures = 0;
    while (this.pending.length > 0 && !this.abandoned) {
      const batch = this.pending.slice(0, this.maxBatch);
      try {
        const results = await this.backend.ack(batch.map((p) => p.ack));
        this.pending.splice(0, batch.length);
        batch.forEach((p, i) => p.resolve(results[i]));
        failures = 0;
      } catch (error) {
        this.onError(error);
        failures += 1;
        await sleep(Math.min(2000, 50 * 2 ** failures));
      }
    }
    this.flushing = null;
    if (this.pending.length > 0 && !this.abandoned) this.flushing = this.flushLoop();
  }

  /** Resolves once every ack written so far is stored. */
  async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  /** Stops retrying: pending acks resolve as 'abandoned' (their leases will expire and recover). */
  abandon(): void {
    this.abandoned = true;
    for (const p of this.pending.splice(0)) p.resolve('abandoned');
  }
}
