/** The audit log on Redis: one stream (keys.ts `audit`), newest entries kept, read newest first. */
import type { AuditEntry, AuditPage } from '../audit-contract.js';
import { auditBounds, auditKeep, encodeAuditCursor, readEntry, storableEntry } from '../audit-log.js';
import type { RedisConnection } from './connection.js';

export async function recordAudit(c: RedisConnection, entry: AuditEntry, keep?: number): Promise<void> {
  const stored = storableEntry(entry);
  // Exact trimming: MAXLEN ~ removes only whole stream nodes (100 entries each), so the bound
  // would not hold; trimming the one oldest entry per XADD costs O(1).
  const max = auditKeep(keep);
  await c.call(() => c.redis.xadd(c.keys.audit, 'MAXLEN', max, '*', 'e', JSON.stringify(stored)));
}

function isStreamId(position: unknown): position is string {
  return typeof position === 'string' && /^\d{1,20}-\d{1,20}$/.test(position);
}

export async function listAudit(c: RedisConnection, page: { limit?: number; cursor?: string } = {}): Promise<AuditPage> {
  const { limit, after } = auditBounds(page, isStreamId);
  // One past the page tells whether older entries follow; `(id` excludes the page before's last.
  const rows = await c.call(() => c.redis.xrevrange(c.keys.audit, after === null ? '+' : `(${after}`, '-', 'COUNT', limit + 1));
  const entries: AuditEntry[] = [];
  for (const [, fields] of rows.slice(0, limit)) {
    let value: unknown = null;
    try {
      value = JSON.parse(fields[fields.indexOf('e') + 1] ?? 'null');
    } catch {
      // an entry that is not JSON is left out
    }
    const read = readEntry(value);
    if (read) entries.push(read);
  }
  return { entries, nextCursor: rows.length > limit ? encodeAuditCursor(rows[limit - 1][0]) : null };
}
