/**
 * The audit log (Backend.recordAudit, listAudit): one entry per mutating call to the task
 * center's API, newest first, with bounded retention. audit-log.ts holds what both stores share.
 */

/** Entries a store keeps when no other bound is given: older ones are deleted as new ones come. */
export const DEFAULT_AUDIT_KEEP = 10_000;

/** Which token a call carried: `none` when no configured token matched (or none is configured). */
export type AuditToken = 'admin' | 'read' | 'none';

/**
 * What a call did beyond its target: its path parameters and a whitelisted summary of its body,
 * by name, e.g. `{"queue": "mail", "state": "dead"}` or `{"action": "delete", "q": "state:dead"}`.
 * Bounded: at most 16 members, each value a scalar, texts cut to 500 characters.
 */
export type AuditDetail = Record<string, string | number | boolean | null>;

export interface AuditEntry {
  /** When the call came in, epoch ms. */
  at: number;
  token: AuditToken;
  method: string;
  /** The route's pattern, e.g. `/api/v1/tasks/:id/run`. */
  route: string;
  /** The id, queue or type the path names, or null. */
  target: string | null;
  /** The HTTP status answered. */
  status: number;
  /** The error code answered (`TL_…`), or null for a success. */
  code: string | null;
  /** Path parameters and a body summary (AuditDetail), or null for none. Optional when recording. */
  detail?: AuditDetail | null;
}

export interface AuditPage {
  /** Newest first. */
  entries: AuditEntry[];
  /** Pass back for older entries; null at the end. */
  nextCursor: string | null;
}
