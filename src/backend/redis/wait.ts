/** Waiting for work: BZPOPMIN on the queues' markers, on a connection of its own. */
import type { Redis } from 'ioredis';
import type { RedisConnection } from './connection.js';

export class WorkWaiter {
  private blocking: Redis | null = null;

  constructor(private readonly c: RedisConnection) {}

  /** Returns when a marker is added (lua: wake_workers), after `timeoutMs`, or on abort. */
  async waitForWork(queues: string[], timeoutMs: number, signal: AbortSignal): Promise<void> {
    // After close: no new connection that nothing would close.
    if (signal.aborted || queues.length === 0 || this.c.isClosed) return;
    this.blocking ??= this.c.open('blocking');
    const blocking = this.blocking;
    const markers = queues.map((q) => this.c.keys.queueKey(q, 'marker'));
    const seconds = Math.max(0.01, timeoutMs / 1000).toFixed(3);
    let onAbort: (() => void) | undefined;
    let guard: NodeJS.Timeout | undefined;
    let popped = false;
    try {
      await Promise.race([
        blocking.bzpopmin(...markers, seconds).finally(() => (popped = true)),
        new Promise<void>((resolve) => {
          onAbort = resolve;
          signal.addEventListener('abort', onAbort, { once: true });
          // Never wait much past the timeout, even if Redis is away and the command hangs.
          guard = setTimeout(resolve, timeoutMs + 1000);
        }),
      ]);
    } catch {
      // Redis away: the caller's loop retries after its own pause.
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort);
      clearTimeout(guard);
      if (!popped) {
        // Aborted while BZPOPMIN still blocks: left alone it would swallow the next wake-up and
        // hold up the next wait on this connection, so drop the connection.
        if (this.blocking === blocking) this.blocking = null;
        blocking.disconnect();
      }
    }
  }

  /** Drops the connection (QUIT would wait out its BZPOPMIN). */
  close(): void {
    this.blocking?.disconnect();
    this.blocking = null;
  }
}
