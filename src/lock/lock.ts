/**
 * Distributed locks with fencing tokens, on any backend with the LockStore
 * operations. Release and extend act only while the caller still owns the lock; each acquisition
 * gets a token strictly greater than the previous one, so a resource can refuse writes from a
 * holder whose lock has since expired and been taken by someone else.
 */
import type { LockStore } from '../backend/contract.js';
import { TasklineError } from '../core/errors.js';
import { shortId } from '../core/ids.js';
import { sleep } from '../core/sleep.js';
import { quote } from '../core/validate.js';

export interface LockOptions {
  /** ms the lock is held unless extended. Default 30 000. */
  ttl?: number;
}

export interface WithLockOptions extends LockOptions {
  /** ms to keep trying to acquire before giving up with TL_TIMEOUT. Default 0 (one try). */
  wait?: number;
  /** ms between tries while waiting. Default 100. */
  retryDelay?: number;
}

export class LockHandle {
  private released = false;

  constructor(
    private readonly store: LockStore,
    readonly key: string,
    readonly owner: string,
    /** The fencing token of this acquisition. */
    readonly token: number,
  ) {}

  /** Extends the lock to `ttl` ms from now; false when it was lost (expired and taken, or released). */
  async extend(ttl: number): Promise<boolean> {
    if (this.released) return false;
    return this.store.extendLock(this.key, this.owner, this.token, positiveTtl(ttl));
  }

  /** Releases the lock if still held; false when it had already been lost. */
  async release(): Promise<boolean> {
    if (this.released) return false;
    this.released = true;
    return this.store.releaseLock(this.key, this.owner, this.token);
  }
}

function positiveTtl(ttl: unknown): number {
  if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 10) {
    throw new TasklineError('TL_INVALID_ARGUMENT', `lock ttl must be a whole number of ms >= 10, got ${quote(ttl)}`);
  }
  return ttl;
}

export class Locks {
  /** This process's owner id; every handle it acquires carries it. */
  readonly owner: string;

  constructor(private readonly store: LockStore, options: { owner?: string } = {}) {
    this.owner = options.owner ?? `${process.pid}-${shortId()}`;
  }

  /** Tries once; null when another owner holds the lock. */
  async acquire(key: string, options: LockOptions = {}): Promise<LockHandle | null> {
    const ttl = positiveTtl(options.ttl ?? 30_000);
    const token = await this.store.acquireLock(key, this.owner, ttl);
    return token === null ? null : new LockHandle(this.store, key, this.owner, token);
  }

  /**
   * Runs `fn` while holding the lock, extending it every ttl/3. If the lock is lost (an extend
   * fails), `signal` aborts. The lock is released when `fn` settles.
   */
  async withLock<T>(key: string, fn: (signal: AbortSignal, handle: LockHandle) => Promise<T>, options: WithLockOptions = {}): Promise<T> {
    const ttl = positiveTtl(options.ttl ?? 30_000);
    const deadline = Date.now() + (options.wait ?? 0);
    let handle = await this.acquire(key, { ttl });
    while (!handle && Date.now() < deadline) {
      await sleep(Math.min(options.retryDelay ?? 100, Math.max(1, deadline - Date.now())));
      handle = await this.acquire(key, { ttl });
    }
    if (!handle) throw new TasklineError('TL_TIMEOUT', `lock ${quote(key)} is held by another owner`);
    const held = handle;
    const lost = new AbortController();
    const timer = setInterval(() => {
      held.extend(ttl).then(
        (ok) => {
          if (!ok) lost.abort(new TasklineError('TL_LOCK_NOT_HELD', `lock ${quote(key)} was lost`));
        },
        (error: unknown) => lost.abort(error),
      );
    }, Math.max(5, Math.floor(ttl / 3)));
    try {
      return await fn(lost.signal, held);
    } finally {
      clearInterval(timer);
      await held.release().catch(() => false);
    }
  }
}
