/** The audit log on SQLite: the `audit_log` table (migrations/0006_audit_log.sql, 0007), trimmed on each insert. */
import type { AuditEntry, AuditPage } from '../audit-contract.js';
import { auditBounds, auditKeep, encodeAuditCursor, readEntry, storableEntry } from '../audit-log.js';
import type { StatementCache } from './database.js';
import type { Transition } from './transition.js';

export function recordAudit(t: Transition, entry: AuditEntry, keep?: number): void {
  const e = storableEntry(entry);
  const max = auditKeep(keep);
  const { lastInsertRowid } = t.run(
    'INSERT INTO audit_log (at, token, method, route, target, status, code, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    e.at, e.token, e.method, e.route, e.target, e.status, e.code, e.detail ? JSON.stringify(e.detail) : null,
  );
  // Ids only grow (AUTOINCREMENT): the newest `max` rows are those above this one minus max.
  t.run('DELETE FROM audit_log WHERE id <= ?', Number(lastInsertRowid) - max);
}

function isRowId(position: unknown): position is number {
  return Number.isSafeInteger(position) && (position as number) > 0;
}

export function listAudit(sql: StatementCache, page: { limit?: number; cursor?: string } = {}): AuditPage {
  const { limit, after } = auditBounds(page, isRowId);
  const columns = 'SELECT id, at, token, method, route, target, status, code, detail FROM audit_log';
  const rows = (
    after === null
      ? sql.get(`${columns} ORDER BY id DESC LIMIT ?`).all(limit + 1)
      : sql.get(`${columns} WHERE id < ? ORDER BY id DESC LIMIT ?`).all(after, limit + 1)
  ) as (Omit<AuditEntry, 'detail'> & { id: number; detail: string | null })[];
  const entries = rows.slice(0, limit).flatMap((row) => readEntry({ ...row, detail: parseDetail(row.detail) }) ?? []);
  return { entries, nextCursor: rows.length > limit ? encodeAuditCursor(rows[limit - 1].id) : null };
}

/** A stored detail (JSON text); one that cannot be read is none. */
function parseDetail(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
