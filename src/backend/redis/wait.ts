/** Waiting for work: BZPOPMIN on the queues' markers, on a connection of its own. */
import { sleep } from '../../core/sleep.js';
import type { RedisClient, RedisConnection } from './connection.js';

/** How late Redis may time a blocked command out: it checks about every 100 ms (hz 10). */
const REDIS_TIMEOUT_SLACK_MS = 100;

export class WorkWaiter {
  /** The blocking connections: one (key ''), or on a Cluster one per queue waited on. */
  private readonly blocking = new Map<string, RedisClient>();
  /** On a Cluster: each queue's BZPOPMIN in flight, and the queues whose marker woke one since the last wait. */
  private readonly pending = new Map<string, Promise<void>>();
  private readonly woken = new Set<string>();

  constructor(private readonly c: RedisConnection) {}

  /**
   * Returns when a marker is added (lua: wake_workers), after `timeoutMs`, or on abort. Redis
   * checks a blocked command's timeout about every 100 ms (its `hz`): an `exact` wait (for a known
   * moment: a rate limit's next start, a task falling due) asks it to time out that much early and
   * sleeps the rest here, so it ends on time, not up to 100 ms late.
   */
  async waitForWork(queues: string[], timeoutMs: number, signal: AbortSignal, exact = false): Promise<void> {
    // After close: no new connection that nothing would close.
    if (signal.aborted || queues.length === 0 || this.c.isClosed) return;
    if (!exact) {
      await this.block(queues, timeoutMs, signal);
      return;
    }
    const deadline = Date.now() + timeoutMs;
    if (timeoutMs > REDIS_TIMEOUT_SLACK_MS + 10) {
      if (await this.block(queues, timeoutMs - REDIS_TIMEOUT_SLACK_MS, signal)) return;
    }
    const left = deadline - Date.now();
    if (left > 0) await sleep(left, signal);
  }

  /**
   * BZPOPMIN on the queues' markers for `timeoutMs`: true when a marker woke it (or Redis is
   * away).
   */
  private async block(queues: string[], timeoutMs: number, signal: AbortSignal): Promise<boolean> {
    return this.c.isCluster ? this.blockEach(queues, timeoutMs, signal) : this.blockOn(queues, timeoutMs, signal);
  }

  /**
   * On a Cluster the markers of several queues lie in different slots, which one command cannot
   * name: each queue has a blocking connection of its own, whose BZPOPMIN outlives the wait that
   * sent it. A wait ends at the first wake of any of its queues, or at its timeout; the other
   * queues' BZPOPMINs go on, and a wake one of them hears later is kept for the next wait (the
   * worker claims from all its queues after any wake), so no connection is dropped and reopened.
   */
  private async blockEach(queues: string[], timeoutMs: number, signal: AbortSignal): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    // Ends this wait's sleeps when it returns (or is aborted), so no timer outlives it.
    const ended = new AbortController();
    const end = () => ended.abort();
    signal.addEventListener('abort', end, { once: true });
    try {
      for (;;) {
        let woken = false;
        for (const queue of queues) if (this.woken.delete(queue)) woken = true;
        if (woken || signal.aborted) return true;
        const left = deadline - Date.now();
        if (left <= 0) return false;
        const pending = queues.map((queue) => this.pendingWait(queue, left));
        await Promise.race([...pending, sleep(left, ended.signal)]);
      }
    } finally {
      signal.removeEventListener('abort', end);
      ended.abort();
    }
  }

  /** The queue's BZPOPMIN in flight, or a new one for `ms`; a wake (or an error: Redis away) is noted in `woken`. */
  private pendingWait(queue: string, ms: number): Promise<void> {
    let pending = this.pending.get(queue);
    if (pending) return pending;
    let connection = this.blocking.get(queue);
    if (!connection) this.blocking.set(queue, (connection = this.c.open('blocking')));
    const seconds = Math.max(0.01, ms / 1000).toFixed(3);
    pending = connection
      .bzpopmin(this.c.keys.queueKey(queue, 'marker'), seconds)
      .then(
        (reply) => void (reply !== null && this.woken.add(queue)),
        () => void this.woken.add(queue),
      )
      .finally(() => this.pending.delete(queue));
    this.pending.set(queue, pending);
    return pending;
  }

  /** BZPOPMIN on all the queues' markers, on one server's blocking connection. */
  private async blockOn(queues: string[], timeoutMs: number, signal: AbortSignal): Promise<boolean> {
    let blocking = this.blocking.get('');
    if (!blocking) this.blocking.set('', (blocking = this.c.open('blocking')));
    const markers = queues.map((q) => this.c.keys.queueKey(q, 'marker'));
    const seconds = Math.max(0.01, timeoutMs / 1000).toFixed(3);
    let onAbort: (() => void) | undefined;
    let guard: NodeJS.Timeout | undefined;
    let popped = false;
    let woken = true;
    try {
      await Promise.race([
        blocking.bzpopmin(...markers, seconds).then(
          (reply) => (woken = reply !== null),
          () => undefined,
        ).finally(() => (popped = true)),
        new Promise<void>((resolve) => {
          onAbort = resolve;
          signal.addEventListener('abort', onAbort, { once: true });
          // Never wait much past the timeout, even if Redis is away and the command hangs.
          guard = setTimeout(resolve, timeoutMs + 1000);
        }),
      ]);
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort);
      clearTimeout(guard);
      if (!popped) {
        // Aborted while BZPOPMIN still blocks: left alone it would swallow the next wake-up and
        // hold up the next wait on this connection, so drop the connection.
        if (this.blocking.get('') === blocking) this.blocking.delete('');
        blocking.disconnect();
      }
    }
    // Redis away (an error): the caller's loop retries after its own pause, not after a sleep here.
    return woken || signal.aborted;
  }

  /** Drops the connection (QUIT would wait out its BZPOPMIN). */
  close(): void {
    for (const connection of this.blocking.values()) connection.disconnect();
    this.blocking.clear();
    this.pending.clear();
    this.woken.clear();
  }
}
