/** The worker registry: one row per live worker, expiring when its heartbeats stop. */
import type { WorkerInfo } from '../contract.js';
import { decodeWorkerInfo } from '../shared.js';
import type { StatementCache } from './database.js';
import type { Transition } from './transition.js';

export function recordHeartbeat(t: Transition, info: WorkerInfo, ttlMs: number): void {
  t.run(
    'INSERT OR REPLACE INTO workers (id, info, expires_at) VALUES (?, ?, ?)',
    info.id, JSON.stringify({ ...info, lastHeartbeatAt: t.now }), t.now + ttlMs,
  );
}

export function removeWorker(t: Transition, id: string): void {
  t.run('DELETE FROM workers WHERE id = ?', id);
}

/** Live workers, soonest to expire first; expired entries are not returned. */
export function listWorkers(sql: StatementCache, now: number): WorkerInfo[] {
  const rows = sql.get('SELECT info FROM workers WHERE expires_at > ? ORDER BY expires_at, id').all(now) as { info: string }[];
  return rows.map((r) => decodeWorkerInfo(r.info)).filter((w): w is WorkerInfo => w !== null);
}

/** Drops expired entries (done by heartbeats, so that reading stays read-only). */
export function pruneWorkers(t: Transition): void {
  t.run('DELETE FROM workers WHERE expires_at <= ?', t.now);
}
