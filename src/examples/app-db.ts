/**
 * The example application's own database (not Taskline's store): a SQLite file with the
 * `sessions` table that clean_expired_sessions prunes and the `external_records` table that
 * sync_external_data fills. The schema is created if missing.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

export type AppDatabase = Database.Database;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS sessions (
  id           TEXT PRIMARY KEY,
  user_id      TEXT NOT NULL,
  created_at   INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_last_seen ON sessions (last_seen_at);
CREATE TABLE IF NOT EXISTS external_records (
  source    TEXT NOT NULL,
  id        TEXT NOT NULL,
  data      TEXT NOT NULL,
  synced_at INTEGER NOT NULL,
  PRIMARY KEY (source, id)
);
`;

export function openAppDatabase(path: string): AppDatabase {
  mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  db.exec(SCHEMA);
  return db;
}
