/** Working: claiming queued tasks into leases. */
import { shortId } from '../../core/ids.js';
import type { ClaimedTask, ClaimRequest, ClaimResult, QueueLimits } from '../contract.js';
import { FORWARD_LIMIT } from '../shared.js';
import { claimInTurns, FIRST_PARKED, PARKED } from './groups.js';
import { forwardDue, nextDueAt } from './lifecycle.js';
import { CLAIM_COLUMNS, decodeClaimed, type ClaimRow } from './rows.js';
import type { Transition } from './transition.js';

const SELECT_QUEUED = `${CLAIM_COLUMNS} WHERE t.queue = ? AND t.state = 'queued' ORDER BY t.sort_key LIMIT ?`;

const START_ATTEMPT = `UPDATE tasks SET state = 'running', attempt = attempt + 1, started_at = ?, worker_id = ?, sort_key = ?,
    lease_token = ?, next_run_at = NULL
  WHERE id = ?`;

export interface ClaimOutcome {
  results: ClaimResult[];
  /** Each queue's signal as of this claim: waitForWork returns at once if it has moved since. */
  signals: Map<string, number>;
}

/** The queue's running tasks whose lease is live at a time: its concurrency counts these. */
export const LIVE_LEASES = "SELECT COUNT(*) AS n FROM tasks WHERE queue = ? AND state = 'running' AND sort_key > ?";
/** The starts after a time (a rate's window) and the oldest of them. */
export const STARTS_IN_WINDOW = 'SELECT COALESCE(SUM(n), 0) AS n, MIN(at) AS oldest FROM queue_starts WHERE queue = ? AND at > ?';

/** How many tasks a claim may take under the queue's limits, and which limit binds (the tighter). */
interface Allowance {
  count: number;
  limit: 'rate' | 'concurrency' | null;
  /** When the rate allows the next start (the oldest start in the window leaves it). */
  until: number | null;
}

/**
 * Claims up to `count` queued tasks (oldest first) from each requested queue for a worker,
 * leasing each for `leaseMs`, within the queue's concurrency and rate; first moves the queue's
 * due scheduled/retrying tasks to queued. A queue that has had grouped tasks is claimed from in
 * its groups' turns, within its groupConcurrency (groups.ts).
 */
export function claimTasks(t: Transition, workerId: string, requests: ClaimRequest[], leaseMs: number): ClaimOutcome {
  const results = requests.map((request): ClaimResult => {
    const { queue } = request;
    forwardDue(t, queue, FORWARD_LIMIT);
    const { paused, limits, turn } = t.queue(queue);
    if (paused) return { queue, tasks: [], paused: true, more: false, nextDueAt: nextDueAt(t, queue), limited: null, limitedUntil: null, now: t.now };
    const allowed = limits.concurrency === null && limits.rate === null
      ? { count: request.count, limit: null, until: null }
      : allowance(t, queue, limits, request.count);
    const expires = t.now + leaseMs;
    let tokenBase = '';
    let started = 0;
    const start = (row: ClaimRow): ClaimedTask => {
      if (started === 0) tokenBase = shortId();
      const token = `${tokenBase}.${started++}`;
      t.run(START_ATTEMPT, t.now, workerId, expires, token, row.id);
      t.moved(queue, 'queued', 'running');
      t.emitLifecycle('started', queue, row.id, String(row.attempt + 1), row.type);
      return decodeClaimed(queue, row, t.now, token, expires);
    };
    let tasks: ClaimedTask[] = [];
    let groupsFull = false;
    if (allowed.count > 0 && turn === 0) tasks = t.all<ClaimRow>(SELECT_QUEUED, queue, allowed.count).map(start);
    else if (allowed.count > 0) ({ tasks, full: groupsFull } = claimInTurns(t, queue, allowed.count, start));
    if (limits.rate !== null && tasks.length > 0) {
      t.run('INSERT INTO queue_starts (queue, at, n) VALUES (?, ?, ?) ON CONFLICT (queue, at) DO UPDATE SET n = n + excluded.n', queue, t.now, tasks.length);
    }
    const more = t.get("SELECT 1 FROM tasks WHERE queue = ? AND state = 'queued' LIMIT 1", queue) !== undefined;
    // A limit held the claim back when it cut the count while tasks were left queued: the groups'
    // when groups running their groupConcurrency left some of the room untaken.
    // Room left untaken in a queue with groups: the rest is parked groups' (groups.ts), which
    // take turns again when a task of theirs ends, or when the first one's earliest lease expires.
    const groupsHeld = more && turn !== 0 && allowed.count > 0 && tasks.length < allowed.count && (groupsFull || limits.groupConcurrency !== null);
    const limited = !more ? null : groupsHeld ? 'group' : allowed.count < request.count ? allowed.limit : null;
    return { queue, tasks, paused: false, more, nextDueAt: nextDueAt(t, queue), limited, limitedUntil: limitedUntil(t, queue, limited, allowed), now: t.now };
  });
  const signals = new Map(requests.map((r) => [r.queue, t.queue(r.queue).signal]));
  return { results, signals };
}

/**
 * When the limit that held a claim back may let the next task start: a rate's next start; for
 * concurrency, the earliest live lease of the queue (this claim's included) — a slot frees then
 * at the latest, as an expired lease frees its slot at once (a crashed worker's, that no ack will
 * free); for groups, when the first parked group's earliest live lease expires (groups.ts). An
 * ack before then wakes the waiting workers.
 */
function limitedUntil(t: Transition, queue: string, limited: ClaimResult['limited'], allowed: Allowance): number | null {
  if (limited === 'rate') return allowed.until;
  if (limited === 'concurrency') return t.get<{ at: number | null }>(EARLIEST_LIVE_LEASE, queue, t.now)?.at ?? null;
  if (limited === 'group') {
    const parked = t.get<{ turn: number | null }>(FIRST_PARKED, queue)?.turn ?? null;
    return parked === null ? null : parked - PARKED;
  }
  return null;
}
const EARLIEST_LIVE_LEASE = "SELECT MIN(sort_key) AS at FROM tasks WHERE queue = ? AND state = 'running' AND sort_key > ?";

/**
 * What the queue's limits allow a claim of `count`: concurrency less the live leases (an expired
 * one frees its slot at once, before recovery runs), the rate's limit less the starts after
 * now − intervalMs (also those a process whose clock runs a little ahead stamped later than
 * now), whose older rows it deletes. Ending tasks gives no rate back.
 */
function allowance(t: Transition, queue: string, limits: QueueLimits, count: number): Allowance {
  let allowed: Allowance = { count, limit: null, until: null };
  if (limits.concurrency !== null) {
    const { n } = t.get<{ n: number }>(LIVE_LEASES, queue, t.now)!;
    const free = Math.max(0, limits.concurrency - n);
    if (free < allowed.count) allowed = { count: free, limit: 'concurrency', until: null };
  }
  if (limits.rate !== null) {
    const windowStart = t.now - limits.rate.intervalMs;
    t.run('DELETE FROM queue_starts WHERE queue = ? AND at <= ?', queue, windowStart);
    const { n, oldest } = t.get<{ n: number; oldest: number | null }>(
      STARTS_IN_WINDOW, queue, windowStart,
    )!;
    const budget = Math.max(0, limits.rate.limit - n);
    // The oldest start in the window is this claim's own when there was none before.
    if (budget < allowed.count) allowed = { count: budget, limit: 'rate', until: (oldest ?? t.now) + limits.rate.intervalMs };
  }
  return allowed;
}
