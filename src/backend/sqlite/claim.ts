/** Working: claiming queued tasks into leases. */
import { shortId } from '../../core/ids.js';
import type { ClaimRequest, ClaimResult } from '../contract.js';
import { FORWARD_LIMIT } from '../shared.js';
import { forwardDue, nextDueAt } from './lifecycle.js';
import { decodeClaimed, type ClaimRow } from './rows.js';
import type { Transition } from './transition.js';

const SELECT_QUEUED = `SELECT t.id, t.type, t.attempt, t.max_retries, t.timeout, t.deadline, t.created_at, t.headers, t.links, t.backoff,
    p.body AS payload
  FROM tasks t LEFT JOIN payloads p ON p.id = t.id
  WHERE t.queue = ? AND t.state = 'queued' ORDER BY t.sort_key LIMIT ?`;

const START_ATTEMPT = `UPDATE tasks SET state = 'running', attempt = attempt + 1, started_at = ?, worker_id = ?, sort_key = ?,
    lease_token = ?, next_run_at = NULL
  WHERE id = ?`;

export interface ClaimOutcome {
  results: ClaimResult[];
  /** Each queue's signal as of this claim: waitForWork returns at once if it has moved since. */
  signals: Map<string, number>;
}

/**
 * Claims up to `count` queued tasks (oldest first) from each requested queue for a worker,
 * leasing each for `leaseMs`; first moves the queue's due scheduled/retrying tasks to queued.
 */
export function claimTasks(t: Transition, workerId: string, requests: ClaimRequest[], leaseMs: number): ClaimOutcome {
  const results = requests.map((request): ClaimResult => {
    const { queue } = request;
    forwardDue(t, queue, FORWARD_LIMIT);
    if (t.queue(queue).paused) return { queue, tasks: [], paused: true, more: false, nextDueAt: nextDueAt(t, queue), now: t.now };
    const rows = request.count > 0 ? t.all<ClaimRow>(SELECT_QUEUED, queue, request.count) : [];
    const expires = t.now + leaseMs;
    const tokenBase = rows.length > 0 ? shortId() : '';
    const tasks = rows.map((row, i) => {
      const token = `${tokenBase}.${i}`;
      t.run(START_ATTEMPT, t.now, workerId, expires, token, row.id);
      t.moved(queue, 'queued', 'running');
      t.emitLifecycle('started', queue, row.id, String(row.attempt + 1), row.type);
      return decodeClaimed(queue, row, t.now, token, expires);
    });
    const more = t.get("SELECT 1 FROM tasks WHERE queue = ? AND state = 'queued' LIMIT 1", queue) !== undefined;
    return { queue, tasks, paused: false, more, nextDueAt: nextDueAt(t, queue), now: t.now };
  });
  const signals = new Map(requests.map((r) => [r.queue, t.queue(r.queue).signal]));
  return { results, signals };
}
