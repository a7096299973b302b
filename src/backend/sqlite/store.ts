/**
 * The context every SQLite module works through: the database, its statement cache, the
 * store's clock, the notifier, and the two ways to run work on it — one write transaction per
 * state transition, one read-only snapshot per read.
 */
import type Database from 'better-sqlite3';
import { TasklineError } from '../../core/errors.js';
import { openDatabase, retryBusy, StatementCache, type Synchronous } from './database.js';
import { HostClock } from './host-clock.js';
import { Notifier } from './notifier.js';
import { Transition } from './transition.js';
import { settleWorkflows } from './workflows.js';

export interface SqliteBackendOptions {
  /** Test only: ms added to the store's clock, to simulate a skewed clock. Default 0. */
  clockOffsetMs?: number;
  /**
   * `NORMAL`: a commit survives the crash or SIGKILL of any process, not an OS crash or power
   * loss; `FULL`: also those, with an fsync per commit. Default `NORMAL`.
   */
  synchronous?: Synchronous;
  /** ms a transaction waits inside SQLite for another process's write lock. Default 2000. */
  busyTimeoutMs?: number;
  /**
   * Commits of other processes are noticed through a watch on the WAL file (see notifier.ts);
   * this is the interval of the safety-net check in ms. Default 100 (5 where the file cannot be
   * watched: an in-memory database, or `watchFile: false`).
   */
  pollIntervalMs?: number;
  /** Watch the WAL file for commits of other processes. Default true. */
  watchFile?: boolean;
}

export class SqliteStore {
  readonly sql: StatementCache;
  readonly notifier: Notifier;
  private readonly offset: number;
  private readonly hostClock = new HostClock();
  private readonly transaction: Database.Transaction<(work: () => unknown) => unknown>;
  private closed = false;

  private constructor(private readonly db: Database.Database, options: SqliteBackendOptions) {
    this.offset = options.clockOffsetMs ?? 0;
    this.sql = new StatementCache(db);
    const walFile = options.watchFile === false || db.memory ? null : `${db.name}-wal`;
    this.notifier = new Notifier(this.sql, { walFile, intervalMs: options.pollIntervalMs ?? (walFile === null ? 5 : 100) });
    this.transaction = db.transaction((work: () => unknown) => work());
  }

  /** Opens (creating when missing) the database file at `path` and migrates its schema. */
  static open(path: string, options: SqliteBackendOptions): SqliteStore {
    const db = openDatabase(path, { busyTimeoutMs: options.busyTimeoutMs ?? 2000, synchronous: options.synchronous ?? 'NORMAL' });
    return new SqliteStore(db, options);
  }

  /** The store's clock: the host kernel's (see host-clock.ts), plus a test offset. */
  clock(): number {
    return this.hostClock.now() + this.offset;
  }

  ensureOpen(): void {
    if (this.closed) throw new TasklineError('TL_CLOSED', 'the SQLite backend is closed');
  }

  /** Runs one state transition in one BEGIN IMMEDIATE transaction, then announces what it changed. */
  async write<T>(work: (t: Transition) => T): Promise<T> {
    this.ensureOpen();
    const [result, t] = await retryBusy(() => {
      this.ensureOpen();
      return this.transaction.immediate(() => {
        const transition = new Transition(this.sql, this.clock());
        const value = work(transition);
        settleWorkflows(transition);
        transition.flush();
        return [value, transition] as const;
      }) as readonly [T, Transition];
    });
    this.notifier.committed(t.woken, t.events);
    return result;
  }

  /** Runs reads in one deferred (read-only) transaction: a consistent snapshot. */
  async read<T>(work: (now: number) => T): Promise<T> {
    this.ensureOpen();
    return retryBusy(() => {
      this.ensureOpen();
      return this.transaction.deferred(() => work(this.clock())) as T;
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.hostClock.close();
    this.notifier.close();
    this.db.close();
  }
}
