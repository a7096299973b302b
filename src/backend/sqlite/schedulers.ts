/**
 * The scheduler instances on SQLite: the leader lease, the registry of live
 * instances and the record of scheduler downtime. The SQLite counterpart of
 * redis/lua/schedulers.lua, with the same semantics.
 */
import { MAX_DOWNTIME_GAPS, type SchedulerCheckIn, type SchedulerInstance, type SchedulerLease, type SchedulerList, type SchedulerStatus } from '../contract.js';
import type { Transition } from './transition.js';
import { decodeSchedulerInstance, parseStoredObject } from '../shared.js';

interface LeaderRow {
  holder: string;
  epoch: number;
  expires_at: number;
  fired_through: number | null;
}

interface DowntimeRow {
  schedules_version: number;
  alive_at: number | null;
  since: number | null;
  gaps: string;
}

/** The lease while it is valid (any holder), else null. */
export function currentLease(t: Transition): SchedulerLease | null {
  const row = t.get<LeaderRow>('SELECT holder, epoch, expires_at, fired_through FROM scheduler_leader WHERE id = 1');
  if (!row || row.expires_at <= t.now) return null;
  return { holder: row.holder, epoch: row.epoch, expiresAt: row.expires_at, firedThrough: row.fired_through };
}

/**
 * Takes the lease when it is free or expired (the epoch goes up by one), or renews it for its
 * holder (same epoch). Returns the epoch, or null while another holder's lease is valid.
 */
export function acquireLeadership(t: Transition, holder: string, ttlMs: number): number | null {
  const current = t.get<LeaderRow>('SELECT holder, epoch, expires_at, fired_through FROM scheduler_leader WHERE id = 1');
  const valid = current !== undefined && current.expires_at > t.now;
  if (valid && current.holder !== holder) return null;
  const mine = valid && current.holder === holder;
  const epoch = mine ? current.epoch : (current?.epoch ?? 0) + 1;
  // A new holder has handled nothing yet.
  const firedThrough = mine ? current.fired_through : null;
  t.run('INSERT OR REPLACE INTO scheduler_leader (id, holder, epoch, expires_at, fired_through) VALUES (1, ?, ?, ?, ?)', holder, epoch, t.now + ttlMs, firedThrough);
  return epoch;
}

/** Frees the lease if `holder` holds it (the epoch is kept, so the next holder's is greater). */
export function releaseLeadership(t: Transition, holder: string): void {
  t.run('UPDATE scheduler_leader SET expires_at = 0 WHERE id = 1 AND holder = ?', holder);
}

/** A check-in more than `ttlMs` after the latest one (of any instance) records the time between as a gap. */
function noteAlive(t: Transition, ttlMs: number): DowntimeRow {
  const row = t.get<DowntimeRow>('SELECT schedules_version, alive_at, since, gaps FROM scheduler_downtime WHERE id = 1')!;
  let { since, gaps } = row;
  if (row.alive_at === null || since === null) {
    since = t.now;
    gaps = '[]';
  } else if (t.now - row.alive_at > ttlMs) {
    const list = JSON.parse(gaps) as [number, number][];
    list.push([row.alive_at, t.now]);
    while (list.length > MAX_DOWNTIME_GAPS) since = Math.max(since, list.shift()![1]);
    gaps = JSON.stringify(list);
  }
  const aliveAt = Math.max(row.alive_at ?? t.now, t.now);
  t.run('UPDATE scheduler_downtime SET alive_at = ?, since = ?, gaps = ? WHERE id = 1', aliveAt, since, gaps);
  return { ...row, alive_at: aliveAt, since, gaps };
}

export function checkInScheduler(t: Transition, instance: SchedulerInstance, options: { leaseMs: number; bid: boolean }): SchedulerCheckIn {
  const downtime = noteAlive(t, options.leaseMs);
  t.run('DELETE FROM scheduler_instances WHERE expires_at <= ?', t.now);
  t.run(
    `INSERT INTO scheduler_instances (id, info, last_seen_at, expires_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET info = excluded.info, last_seen_at = excluded.last_seen_at, expires_at = excluded.expires_at`,
    instance.id, JSON.stringify(instance), t.now, t.now + options.leaseMs,
  );
  let epoch: number | null;
  if (options.bid) epoch = acquireLeadership(t, instance.id, options.leaseMs);
  else {
    const lease = currentLease(t);
    epoch = lease?.holder === instance.id ? lease.epoch : null;
  }
  return {
    now: t.now,
    epoch,
    lease: currentLease(t),
    schedulesVersion: downtime.schedules_version,
    downtime: { since: downtime.since!, gaps: JSON.parse(downtime.gaps) as [number, number][] },
  };
}

/** Removes the instance from the registry and releases its lease. */
export function leaveSchedulers(t: Transition, id: string): void {
  releaseLeadership(t, id);
  t.run('DELETE FROM scheduler_instances WHERE id = ?', id);
}

export function listSchedulers(t: Transition): SchedulerList {
  const lease = currentLease(t);
  const rows = t.all<{ info: string; last_seen_at: number }>('SELECT info, last_seen_at FROM scheduler_instances WHERE expires_at > ?', t.now);
  const instances: SchedulerStatus[] = [];
  for (const row of rows) {
    // One unreadable check-in is left out, never a failed listing.
    const instance = decodeSchedulerInstance(parseStoredObject(row.info));
    if (instance === null) continue;
    const leader = lease !== null && lease.holder === instance.id;
    instances.push({ ...instance, lastSeenAt: row.last_seen_at, leader, epoch: leader ? lease.epoch : null });
  }
  const down = t.get<DowntimeRow>('SELECT schedules_version, alive_at, since, gaps FROM scheduler_downtime WHERE id = 1')!;
  const downtime = down.since === null ? null : { since: down.since, gaps: JSON.parse(down.gaps) as [number, number][] };
  return { instances: instances.sort((a, b) => a.startedAt - b.startedAt || a.id.localeCompare(b.id)), lease, downtime };
}
