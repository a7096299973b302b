import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { isTasklineError } from '../../src/core/errors.js';
import { SqliteBackend } from '../../src/backend/sqlite/sqlite-backend.js';
import { loadMigrations, migrate, schemaVersion } from '../../src/backend/sqlite/schema.js';
import { tempDir } from '../helpers/stores.js';

describe('SQLite schema and settings', () => {
  const dirs: { remove: () => void }[] = [];
  const backends: SqliteBackend[] = [];

  function freshFile(): string {
    const dir = tempDir('taskline-schema');
    dirs.push(dir);
    return join(dir.path, 'store.db');
  }

  async function open(file: string, options: Parameters<typeof SqliteBackend.open>[1] = {}): Promise<SqliteBackend> {
    const backend = await SqliteBackend.open(file, options);
    backends.push(backend);
    return backend;
  }

  afterEach(async () => {
    await Promise.all(backends.splice(0).map((b) => b.close()));
    dirs.splice(0).forEach((d) => d.remove());
  });

  it('ships migrations numbered from 0001 without gaps', () => {
    const migrations = loadMigrations();
    expect(migrations.length).toBeGreaterThan(0);
    expect(migrations.map((m) => m.version)).toEqual(migrations.map((_, i) => i + 1));
    expect(migrations[0].name).toBe('init');
  });

  it('creates the schema on a new file and records its version', async () => {
    const file = freshFile();
    await open(file);
    const db = new Database(file, { readonly: true });
    try {
      expect(schemaVersion(db)).toBe(loadMigrations().length);
      const rows = db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all();
      expect(rows).toEqual(loadMigrations().map((m) => ({ version: m.version, name: m.name })));
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();
      expect(tables).toEqual(expect.arrayContaining(['tasks', 'payloads', 'queues', 'unique_keys', 'stats', 'workers', 'events']));
    } finally {
      db.close();
    }
  });

  it('applies each migration once, also when several backends open the file', async () => {
    const file = freshFile();
    await Promise.all([open(file), open(file), open(file)]);
    await open(file);
    const db = new Database(file, { readonly: true });
    try {
      expect(db.prepare('SELECT COUNT(*) FROM schema_migrations').pluck().get()).toBe(loadMigrations().length);
    } finally {
      db.close();
    }
  });

  it('applies only the migrations a database lacks, in order', () => {
    const root = tempDir('taskline-mig');
    dirs.push(root);
    const dir = mkdtempSync(join(root.path, 'm-'));
    writeFileSync(join(dir, '0001_first.sql'), 'CREATE TABLE a (x INTEGER);');
    writeFileSync(join(dir, '0002_second.sql'), 'ALTER TABLE a ADD COLUMN y TEXT;');
    writeFileSync(join(dir, 'README.txt'), 'not a migration');
    const all = loadMigrations(new URL(`file://${dir}/`));
    const db = new Database(':memory:');
    try {
      expect(migrate(db, all.slice(0, 1))).toEqual([1]);
      expect(migrate(db, all)).toEqual([2]);
      expect(migrate(db, all)).toEqual([]);
      expect(schemaVersion(db)).toBe(2);
      expect(db.prepare("SELECT name FROM pragma_table_info('a')").pluck().all()).toEqual(['x', 'y']);
    } finally {
      db.close();
    }
  });

  it('refuses a database whose schema is newer than this build knows', async () => {
    const file = freshFile();
    await (await open(file)).close();
    const db = new Database(file);
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(999, 'future', Date.now());
    db.close();
    const error: unknown = await SqliteBackend.open(file).catch((e: unknown) => e);
    expect(isTasklineError(error, 'TL_STORE_ERROR')).toBe(true);
    expect((error as Error).message).toMatch(/schema version 999/);
  });

  it('uses WAL with synchronous NORMAL by default, FULL on request', async () => {
    const file = freshFile();
    await open(file);
    const db = new Database(file, { readonly: true });
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      db.close();
    }
    // synchronous is per connection: read it from the backend's own.
    const normal = await open(file);
    expect((normal as unknown as { store: { db: Database.Database } }).store.db.pragma('synchronous', { simple: true })).toBe(1);
    const full = await open(file, { synchronous: 'FULL' });
    expect((full as unknown as { store: { db: Database.Database } }).store.db.pragma('synchronous', { simple: true })).toBe(2);
  });

  it('creates missing parent directories, and reports a file it cannot open', async () => {
    const dir = tempDir('taskline-dirs');
    dirs.push(dir);
    await open(join(dir.path, 'a', 'b', 'store.db'));
    writeFileSync(join(dir.path, 'not-a-dir'), 'x');
    const error: unknown = await SqliteBackend.open(join(dir.path, 'not-a-dir', 'store.db')).catch((e: unknown) => e);
    expect(isTasklineError(error, 'TL_STORE_UNAVAILABLE')).toBe(true);
    expect((error as Error).message).toContain('not-a-dir');
  });
});
