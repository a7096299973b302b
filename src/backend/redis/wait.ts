/** Waiting for work: BZPOPMIN on the queues' markers, on a connection of its own. */
import { sleep } from '../../core/sleep.js';
import type { RedisClient, RedisConnection } from './connection.js';

/** How late Redis may time a blocked command out: it checks about every 100 ms (hz 10). */
const REDIS_TIMEOUT_SLACK_MS = 100;

export class WorkWaiter {
  /** The blocking connections: one (key ''), or on a Cluster one per queue waited on. */
  private readonly blocking = new Map<string, RedisClient>();

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
   * away). On a Cluster the markers of several queues lie in different slots, which one command
   * cannot name: each queue is waited on by a connection of its own, and the first to wake ends
   * the wait.
   */
  private async block(queues: string[], timeoutMs: number, signal: AbortSignal): Promise<boolean> {
    if (!this.c.isCluster) return this.blockOn('', queues, timeoutMs, signal);
    if (queues.length === 1) return this.blockOn(queues[0], queues, timeoutMs, signal);
    // The first wake ends the others' waits (their connections are dropped); timeouts end together.
    const done = new AbortController();
    const onAbort = () => done.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const waits = queues.map((queue) => this.blockOn(queue, [queue], timeoutMs, done.signal));
      const woken = new Promise<boolean>((resolve) => {
        for (const wait of waits) void wait.then((w) => w && resolve(true));
      });
      return await Promise.race([woken, Promise.all(waits).then((all) => all.some(Boolean))]);
    } finally {
      signal.removeEventListener('abort', onAbort);
      done.abort();
    }
  }

  /** BZPOPMIN on `queues`' markers on the blocking connection named `key`. */
  private async blockOn(key: string, queues: string[], timeoutMs: number, signal: AbortSignal): Promise<boolean> {
    let blocking = this.blocking.get(key);
    if (!blocking) this.blocking.set(key, (blocking = this.c.open('blocking')));
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
        if (this.blocking.get(key) === blocking) this.blocking.delete(key);
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
  }
}
