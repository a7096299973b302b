/**
 * Opening the database file, and running statements against it safely from several processes.
 *
 * Durability: WAL journal with `synchronous=NORMAL` by default. A commit is in the WAL file (the
 * OS's page cache) before `enqueue` resolves, so it survives SIGKILL or a crash of any process;
 * only a power loss or OS crash can lose the last commits. `synchronous: 'FULL'` also fsyncs the
 * WAL at every commit and survives those, at a large cost in write throughput.
 *
 * Concurrency: every write is one `BEGIN IMMEDIATE` transaction, so it takes the file's single
 * write lock before it reads anything: two processes can never both claim one task. A writer
 * that finds the lock taken waits up to `busy_timeout` inside SQLite, then this module retries
 * the whole transaction a bounded number of times with a short async pause.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { TasklineError } from '../../core/errors.js';
import { migrate } from './schema.js';

export type Synchronous = 'NORMAL' | 'FULL';

export interface OpenOptions {
  busyTimeoutMs: number;
  synchronous: Synchronous;
}

/** Opens (creating when missing) a database file in WAL mode and brings its schema up to date. */
export function openDatabase(path: string, options: OpenOptions): Database.Database {
  let db: Database.Database | null = null;
  try {
    if (path !== ':memory:' && path !== '') mkdirSync(dirname(path), { recursive: true });
    db = new Database(path, { timeout: options.busyTimeoutMs });
    db.pragma(`busy_timeout = ${options.busyTimeoutMs}`);
    // Changing to WAL needs a moment of exclusive access; another process opening at once may hold it.
    retryBusySync(() => db!.pragma('journal_mode = WAL'));
    db.pragma(`synchronous = ${options.synchronous}`);
    db.pragma('foreign_keys = OFF');
    db.pragma('temp_store = MEMORY');
    retryBusySync(() => migrate(db!));
    return db;
  } catch (error) {
    db?.close();
    if (error instanceof TasklineError) throw error;
    throw new TasklineError('TL_STORE_UNAVAILABLE', `cannot open the SQLite database ${JSON.stringify(path)}: ${(error as Error).message}`, { cause: error });
  }
}

/** Prepared statements, prepared once per SQL text and reused. */
export class StatementCache {
  private readonly statements = new Map<string, Database.Statement>();

  constructor(readonly db: Database.Database) {}

  get(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}

/** Total tries of one transaction that keeps finding the database locked. */
const BUSY_TRIES = 6;

export function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/** Runs `work`; when the database stays locked past busy_timeout, tries again (bounded) after a pause. */
export async function retryBusy<T>(work: () => T): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return work();
    } catch (error) {
      if (!isBusy(error) || attempt >= BUSY_TRIES) throw storeError(error);
      const pause = Math.min(200, 5 * 2 ** attempt) * (0.5 + Math.random());
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

function retryBusySync<T>(work: () => T): T {
  for (let attempt = 1; ; attempt++) {
    try {
      return work();
    } catch (error) {
      if (!isBusy(error) || attempt >= BUSY_TRIES) throw error;
    }
  }
}

export function storeError(error: unknown): TasklineError {
  if (error instanceof TasklineError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  const unavailable = isBusy(error) || code === 'SQLITE_CANTOPEN' || code === 'SQLITE_IOERR' || /database connection is not open/.test(message);
  return new TasklineError(unavailable ? 'TL_STORE_UNAVAILABLE' : 'TL_STORE_ERROR', `SQLite: ${message}`, { cause: error });
}
