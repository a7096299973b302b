/**
 * Distributed locks with fencing tokens on SQLite: one row per key. `fence` counts
 * acquisitions and is the token of the latest; the lock is held while `owner` is set and
 * `expires_at` is after now (the store clock). The counterpart of redis/lua/lock.lua.
 */
import type { Transition } from './transition.js';

interface LockRow {
  owner: string | null;
  fence: number;
  expires_at: number;
}

/** Returns the new fencing token (strictly increasing per key), or null while another holds the lock. */
export function acquireLock(t: Transition, key: string, owner: string, ttlMs: number): number | null {
  const row = t.get<LockRow>('SELECT owner, fence, expires_at FROM locks WHERE key = ?', key);
  if (row && row.owner !== null && row.expires_at > t.now) return null;
  const token = (row?.fence ?? 0) + 1;
  t.run(
    `INSERT INTO locks (key, owner, fence, expires_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, fence = excluded.fence, expires_at = excluded.expires_at`,
    key, owner, token, t.now + ttlMs,
  );
  return token;
}

const HELD = 'key = ? AND owner = ? AND fence = ? AND expires_at > ?';

/** Extends the lock to `ttlMs` from now if `owner` still holds it with `token`. */
export function extendLock(t: Transition, key: string, owner: string, token: number, ttlMs: number): boolean {
  return t.run(`UPDATE locks SET expires_at = ? WHERE ${HELD}`, t.now + ttlMs, key, owner, token, t.now).changes > 0;
}

/** Releases the lock if `owner` still holds it with `token` (the fence is kept). */
export function releaseLock(t: Transition, key: string, owner: string, token: number): boolean {
  return t.run(`UPDATE locks SET owner = NULL, expires_at = 0 WHERE ${HELD}`, key, owner, token, t.now).changes > 0;
}
