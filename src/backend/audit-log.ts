/** What both stores share for the audit log: entry checks, page bounds and the cursor. */
import { createHash } from 'node:crypto';
import { TasklineError } from '../core/errors.js';
import { clip, quote } from '../core/validate.js';
import { DEFAULT_AUDIT_KEEP, type AuditDetail, type AuditEntry, type AuditToken } from './audit-contract.js';
import { pageLimit } from './page-cursor.js';
import { countWithin } from './shared.js';

/** Most entries a store may be asked to keep. */
export const MAX_AUDIT_KEEP = 1_000_000;
/** Longest route, method or target stored (longer ones are cut). */
const MAX_TEXT = 500;
const TOKENS: readonly AuditToken[] = ['admin', 'read', 'none'];
/** Most members of an entry's detail (more are left out), and the longest name kept. */
const MAX_DETAIL_MEMBERS = 16;
const MAX_DETAIL_NAME = 100;

/**
 * An entry's detail as stored: at most MAX_DETAIL_MEMBERS members, names and texts cut, a value
 * that is not a scalar stored as its quoted text; null for none (or an empty one).
 */
export function storableDetail(detail: unknown): AuditDetail | null {
  if (typeof detail !== 'object' || detail === null || Array.isArray(detail)) return null;
  const members = Object.entries(detail).slice(0, MAX_DETAIL_MEMBERS);
  if (members.length === 0) return null;
  const kept: AuditDetail = {};
  for (const [name, value] of members) {
    const scalar = value === null || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
    kept[clip(name, MAX_DETAIL_NAME)] = scalar ? (value as AuditDetail[string]) : clip(typeof value === 'string' ? value : quote(value), MAX_TEXT);
  }
  return kept;
}

/** An entry as stored: checked, its texts cut to MAX_TEXT. Throws TL_INVALID_ARGUMENT for one that is not an entry. */
export function storableEntry(entry: AuditEntry): AuditEntry {
  if (!Number.isSafeInteger(entry.at) || !TOKENS.includes(entry.token) || !Number.isSafeInteger(entry.status) || typeof entry.method !== 'string' || typeof entry.route !== 'string') {
    throw new TasklineError('TL_INVALID_ARGUMENT', `not an audit entry: ${quote(entry)}`);
  }
  return {
    at: entry.at, token: entry.token, method: clip(entry.method, MAX_TEXT), route: clip(entry.route, MAX_TEXT),
    target: typeof entry.target === 'string' ? clip(entry.target, MAX_TEXT) : null, status: entry.status, code: typeof entry.code === 'string' ? clip(entry.code, 100) : null,
    detail: storableDetail(entry.detail),
  };
}

/** How many entries to keep: DEFAULT_AUDIT_KEEP, else 1 … MAX_AUDIT_KEEP (TL_INVALID_ARGUMENT). */
export function auditKeep(keep: number | undefined): number {
  return keep === undefined ? DEFAULT_AUDIT_KEEP : countWithin('keep', keep, MAX_AUDIT_KEEP);
}

/** A stored entry as read; one that cannot be read is left out (null). */
export function readEntry(value: unknown): AuditEntry | null {
  const e = value as Partial<AuditEntry> | null;
  if (typeof e !== 'object' || e === null || typeof e.at !== 'number' || typeof e.route !== 'string' || typeof e.method !== 'string' || typeof e.status !== 'number') return null;
  return {
    at: e.at, token: TOKENS.includes(e.token as AuditToken) ? (e.token as AuditToken) : 'none', method: e.method, route: e.route,
    target: typeof e.target === 'string' ? e.target : null, status: e.status, code: typeof e.code === 'string' ? e.code : null,
    detail: storableDetail(e.detail),
  };
}

/** The page size and the position after the page before (the store's entry id), checked. */
export function auditBounds<T extends string | number>(page: { limit?: number; cursor?: string }, valid: (position: unknown) => position is T) {
  return { limit: pageLimit(page.limit), after: decodeAuditCursor(page.cursor, valid) };
}

export function encodeAuditCursor(position: string | number): string {
  const body = Buffer.from(JSON.stringify([position])).toString('base64url');
  return `${body}.${checkOf(body)}`;
}

function decodeAuditCursor<T>(cursor: unknown, valid: (position: unknown) => position is T): T | null {
  if (cursor === undefined) return null;
  if (typeof cursor === 'string' && cursor.length <= 200) {
    const [body, check] = cursor.split('.');
    if (check !== undefined && check === checkOf(body)) {
      let parts: unknown;
      try {
        parts = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
      } catch {
        parts = null;
      }
      if (Array.isArray(parts) && parts.length === 1 && valid(parts[0])) return parts[0];
    }
  }
  throw new TasklineError('TL_INVALID_ARGUMENT', `invalid cursor ${quote(cursor)}: cursor must be a value returned as next_cursor (nextCursor) by a previous page of the audit log; leave it out for the first page`);
}

function checkOf(body: string): string {
  return createHash('sha256').update(`audit\n${body}`).digest('base64url').slice(0, 12);
}
