/**
 * Schema migrations: numbered, append-only SQL files in `migrations/` (`0001_init.sql`, …),
 * applied in order, each in the same `BEGIN IMMEDIATE` transaction as its row in
 * `schema_migrations` — so several processes opening one file at once apply each exactly once.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { TasklineError } from '../../core/errors.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);
const FILE_NAME = /^(\d{4})_([a-z0-9_]+)\.sql$/;

/** The migrations shipped with this build, in version order. */
export function loadMigrations(dir: URL = MIGRATIONS_DIR): Migration[] {
  const migrations = readdirSync(dir)
    .map((file) => ({ file, match: FILE_NAME.exec(file) }))
    .filter((entry): entry is { file: string; match: RegExpExecArray } => entry.match !== null)
    .map(({ file, match }) => ({ version: Number(match[1]), name: match[2], sql: readFileSync(new URL(file, dir), 'utf8') }))
    .sort((a, b) => a.version - b.version);
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`SQLite migrations must be numbered 0001, 0002, … without gaps; found ${String(m.version).padStart(4, '0')}_${m.name}.sql at place ${i + 1}`);
  });
  return migrations;
}

/** The schema version of an open database (0: none applied). */
export function schemaVersion(db: Database.Database): number {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
  if (!table) return 0;
  const row = db.prepare('SELECT MAX(version) AS version FROM schema_migrations').get() as { version: number | null };
  return row.version ?? 0;
}

/** Brings the database up to the newest schema. Returns the versions applied now. */
export function migrate(db: Database.Database, migrations: Migration[] = loadMigrations()): number[] {
  const latest = migrations.length === 0 ? 0 : migrations[migrations.length - 1].version;
  // Fast path, without the write lock: already current.
  const before = schemaVersion(db);
  if (before === latest) return [];
  if (before > latest) throw newerSchemaError(before, latest);
  const apply = db.transaction(() => {
    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version    INTEGER PRIMARY KEY,
      name       TEXT NOT NULL,
      applied_at INTEGER NOT NULL
    )`);
    const current = schemaVersion(db);
    if (current > latest) throw newerSchemaError(current, latest);
    const applied: number[] = [];
    const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
    for (const migration of migrations) {
      if (migration.version <= current) continue;
      db.exec(migration.sql);
      record.run(migration.version, migration.name, Date.now());
      applied.push(migration.version);
    }
    return applied;
  });
  return apply.immediate();
}

function newerSchemaError(found: number, known: number): TasklineError {
  return new TasklineError(
    'TL_STORE_ERROR',
    `the SQLite database has schema version ${found}, newer than this Taskline knows (${known}); upgrade Taskline to use it`,
  );
}
