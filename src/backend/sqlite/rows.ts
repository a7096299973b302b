/** Rows of the `tasks` table and their decoding into the contract's shapes. */
import type { AttemptRecord, BackoffSpec, TaskLinks, TaskLogLine, TaskRecord, TaskState } from '../../core/task.js';
import type { ClaimedTask } from '../contract.js';
import { normalizeAttempt, noteUnreadable, parseStoredJson } from '../shared.js';

/** A `tasks` row joined with its payload (see migrations/0001_init.sql). */
export interface TaskRow {
  id: string;
  queue: string;
  type: string;
  state: TaskState;
  sort_key: number;
  attempt: number;
  max_retries: number;
  timeout: number;
  deadline: number | null;
  last_error: string | null;
  result: string | null;
  created_at: number;
  enqueued_at: number | null;
  started_at: number | null;
  finished_at: number | null;
  next_run_at: number | null;
  worker_id: string | null;
  lease_token: string | null;
  cancel_requested: number;
  unique_key: string | null;
  retention: number | null;
  backoff: string | null;
  headers: string | null;
  links: string | null;
  /** The task's group (migration 0012), or null. */
  grp: string | null;
  progress: string | null;
  attempts: string;
  logs: string;
  payload: string | null;
}

/** Selects a full TaskRow: `${TASK_COLUMNS} FROM tasks t LEFT JOIN payloads p ON p.id = t.id`. */
export const TASK_COLUMNS = 'SELECT t.*, p.body AS payload';
export const TASK_FROM = 'FROM tasks t LEFT JOIN payloads p ON p.id = t.id';

/** The columns a claim needs. */
export type ClaimRow = Pick<TaskRow, 'id' | 'type' | 'attempt' | 'max_retries' | 'timeout' | 'deadline' | 'created_at' | 'headers' | 'links' | 'backoff' | 'grp' | 'payload'>;

/** Selects ClaimRows: `${CLAIM_COLUMNS} WHERE …` (tasks `t`). */
export const CLAIM_COLUMNS = `SELECT t.id, t.type, t.attempt, t.max_retries, t.timeout, t.deadline, t.created_at, t.headers, t.links, t.backoff, t.grp,
    p.body AS payload
  FROM tasks t LEFT JOIN payloads p ON p.id = t.id`;

function parseObject<T extends object>(text: string | null): T {
  const value = parseStoredJson(text);
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as T) : ({} as T);
}

export function decodeClaimed(queue: string, row: ClaimRow, startedAt: number, token: string, leaseExpiresAt: number): ClaimedTask {
  const task: ClaimedTask = {
    id: row.id,
    type: row.type,
    queue,
    payload: row.payload ?? 'null',
    attempt: row.attempt + 1,
    maxRetries: row.max_retries,
    timeout: row.timeout,
    deadline: row.deadline,
    createdAt: row.created_at,
    startedAt,
    headers: parseObject(row.headers),
    links: parseObject(row.links),
    backoff: parseStoredJson(row.backoff) as BackoffSpec | null,
    token,
    leaseExpiresAt,
  };
  if (row.grp !== null) task.group = row.grp;
  return task;
}

export function decodeRecord(row: TaskRow): TaskRecord {
  const attempts = parseStoredJson(row.attempts);
  const logs = parseStoredJson(row.logs);
  const unreadable: string[] = [];
  const record: TaskRecord = {
    id: row.id,
    type: row.type,
    payload: parseStoredJson(row.payload, () => unreadable.push('payload')),
    queue: row.queue,
    state: row.state,
    attempt: row.attempt,
    maxRetries: row.max_retries,
    timeout: row.timeout,
    deadline: row.deadline,
    lastError: row.last_error,
    result: parseStoredJson(row.result, () => unreadable.push('result')),
    createdAt: row.created_at,
    enqueuedAt: row.enqueued_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    nextRunAt: row.next_run_at,
    workerId: row.worker_id,
    uniqueKey: row.unique_key,
    retention: row.retention,
    backoff: parseStoredJson(row.backoff) as BackoffSpec | null,
    headers: parseObject<Record<string, string>>(row.headers),
    links: parseObject<TaskLinks>(row.links),
    group: row.grp,
    progress: parseStoredJson(row.progress, () => unreadable.push('progress')),
    cancelRequested: row.cancel_requested === 1,
    attempts: Array.isArray(attempts) ? (attempts as Partial<AttemptRecord>[]).map(normalizeAttempt) : [],
    logs: Array.isArray(logs) ? (logs as TaskLogLine[]) : [],
  };
  for (const field of unreadable) noteUnreadable(record, field);
  return record;
}
