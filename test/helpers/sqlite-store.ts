/** A fresh SQLite database file per test, in its own temporary directory. */
import { join } from 'node:path';
import type { Backend } from '../../src/backend/contract.js';
import { SqliteBackend, type SqliteBackendOptions } from '../../src/backend/sqlite/sqlite-backend.js';
import type { TestStore } from './stores.js';
import { tempDir } from './temp-dir.js';

export interface SqliteTestStore extends TestStore {
  /** The database file. */
  file: string;
}

export async function sqliteStore(options: SqliteBackendOptions = {}): Promise<SqliteTestStore> {
  const dir = tempDir('taskline-sqlite');
  const file = join(dir.path, 'taskline.db');
  const opened: Backend[] = [];
  const open = async (extra: { clockOffsetMs?: number } = {}) => {
    const backend = await SqliteBackend.open(file, { ...options, ...extra });
    opened.push(backend);
    return backend;
  };
  const backend = await open();
  return {
    file,
    backend,
    reopen: open,
    cleanup: async () => {
      await Promise.all(opened.map((b) => b.close()));
      dir.remove();
    },
  };
}
