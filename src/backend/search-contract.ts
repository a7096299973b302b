/**
 * Task search across queues and states (Backend.searchTasks). The filter is core's TaskFilter
 * (core/task-query.ts parses the query language); search-scope.ts holds what both stores share.
 *
 * Glossary
 * - scope: the tasks a search walks — every task, or those of the filter's queue and/or states.
 *   A store walks it segment by segment (one queue in one state, queues by name, states in
 *   lifecycle order), each in its listing order (Backend.listTasks), through its own indexes.
 * - scanned: how many tasks one call examined; each call examines at most `scanLimit`, so a
 *   call stays fast however many tasks the store holds, and returns a cursor to go on.
 * - total: how many tasks the scope held when the search began (counted by its first page).
 */
import type { TaskRecord } from '../core/task.js';

export type { PayloadMatch, TaskFilter } from '../core/task-query.js';

/** Tasks one search call examines when no scanLimit is given. */
export const DEFAULT_SCAN_LIMIT = 5000;
/** The most a caller may ask one search call to examine. */
export const MAX_SCAN_LIMIT = 10_000;

export interface SearchPageOptions {
  /** Matching tasks per page: 1 … 1000 (page-cursor.ts MAX_PAGE_LIMIT). Default 50. */
  limit?: number;
  /** The `nextCursor` of the page before, of the same filter; left out for the first page. */
  cursor?: string;
  /** Tasks this call examines at most: 1 … MAX_SCAN_LIMIT. Default DEFAULT_SCAN_LIMIT. */
  scanLimit?: number;
}

export interface TaskSearchPage {
  /** The matching tasks found by this call, in scope order; fewer than `limit` (even none) when it reached its scanLimit first. */
  tasks: TaskRecord[];
  /** Pass back to go on; null when the whole scope has been examined. */
  nextCursor: string | null;
  /** Tasks this call examined. */
  scanned: number;
  /** Tasks in the scope when the search began. */
  total: number;
}
