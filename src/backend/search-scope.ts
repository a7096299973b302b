/**
 * What both stores share to search tasks (Backend.searchTasks): the segments of a scope, the
 * cursor, the bounds, and the matching of a task's fields and payload against a filter (the
 * Redis store matches in code; SQLite in SQL, with the same rules: sqlite/search.ts).
 */
import { createHash } from 'node:crypto';
import { TasklineError } from '../core/errors.js';
import { asciiLower, filterKey, type PayloadMatch, type TaskFilter } from '../core/task-query.js';
import { TASK_STATES, isFinished, type TaskState } from '../core/task.js';
import { quote } from '../core/validate.js';
import { pageLimit } from './page-cursor.js';
import { DEFAULT_SCAN_LIMIT, MAX_SCAN_LIMIT, type SearchPageOptions } from './search-contract.js';
import { countWithin } from './shared.js';

/** One queue in one state: a store walks a scope segment by segment. */
export interface Segment {
  queue: string;
  state: TaskState;
}

/** Where a search goes on: a segment, the store's position within it, and the scope's total. */
export interface SearchResume extends Segment {
  total: number;
  position: unknown[];
}

/** Longer than any cursor a store makes (and than the HTTP API accepts). */
export const MAX_SEARCH_CURSOR_LENGTH = 1000;

/** The limit, scan limit and cursor of a search call, checked (TL_INVALID_ARGUMENT). */
export function searchBounds(filter: TaskFilter, page: SearchPageOptions, validPosition: (position: unknown[]) => boolean) {
  return {
    limit: pageLimit(page.limit),
    scanLimit: page.scanLimit === undefined ? DEFAULT_SCAN_LIMIT : countWithin('scanLimit', page.scanLimit, MAX_SCAN_LIMIT),
    resume: decodeSearchCursor(page.cursor, filter, validPosition),
  };
}

/** The segments of a filter's scope over the given queues: queues by name, states in lifecycle order. */
export function searchSegments(queues: readonly string[], filter: TaskFilter): Segment[] {
  const names = filter.queue !== null ? (queues.includes(filter.queue) ? [filter.queue] : []) : [...queues].sort();
  const states = filter.states ?? TASK_STATES;
  return names.flatMap((queue) => states.map((state) => ({ queue, state })));
}

/** The index of the segment a search goes on in (a segment gone since is passed over), or 0. */
export function resumeIndex(segments: readonly Segment[], resume: SearchResume | null): number {
  if (resume === null) return 0;
  const rank = (s: Segment) => [s.queue, TASK_STATES.indexOf(s.state)] as const;
  const [queue, state] = rank(resume);
  const index = segments.findIndex((s) => {
    const [q, st] = rank(s);
    return q > queue || (q === queue && st >= state);
  });
  return index < 0 ? segments.length : index;
}

/** Whether the store lists a state's tasks newest first (finished ones), as listTasks does. */
export function newestFirst(state: TaskState): boolean {
  return isFinished(state);
}

export function encodeSearchCursor(filter: TaskFilter, resume: SearchResume): string {
  const body = Buffer.from(JSON.stringify([resume.queue, resume.state, resume.total, ...resume.position])).toString('base64url');
  return `${body}.${checkOf(filter, body)}`;
}

/**
 * The resume point a cursor holds; null for none (the first page). Anything but a cursor
 * encodeSearchCursor made for this same filter, with a position the store accepts, throws
 * TL_INVALID_ARGUMENT: never read as the first page, or a caller following cursors would loop.
 */
export function decodeSearchCursor(cursor: unknown, filter: TaskFilter, validPosition: (position: unknown[]) => boolean): SearchResume | null {
  if (cursor === undefined) return null;
  if (typeof cursor === 'string' && cursor.length <= MAX_SEARCH_CURSOR_LENGTH) {
    const dot = cursor.indexOf('.');
    const body = cursor.slice(0, dot);
    if (dot > 0 && cursor.slice(dot + 1) === checkOf(filter, body)) {
      let parts: unknown;
      try {
        parts = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
      } catch {
        parts = null;
      }
      if (Array.isArray(parts) && typeof parts[0] === 'string' && TASK_STATES.includes(parts[1] as TaskState) && Number.isSafeInteger(parts[2])) {
        const position = parts.slice(3);
        if (validPosition(position)) return { queue: parts[0], state: parts[1] as TaskState, total: parts[2] as number, position };
      }
    }
  }
  throw new TasklineError(
    'TL_INVALID_ARGUMENT',
    `invalid cursor ${quote(cursor)}: cursor must be a value returned as next_cursor (nextCursor) by a previous page of this same search; leave it out for the first page`,
  );
}

function checkOf(filter: TaskFilter, body: string): string {
  return createHash('sha256').update(`search\n${filterKey(filter)}\n${body}`).digest('base64url').slice(0, 12);
}

/** The fields of a task a filter tests besides its payload. */
export interface SearchedFields {
  id: string;
  type: string;
  createdAt: number;
  lastError: string | null;
}

/** Whether a task's fields match the filter's id, type, error, time and word terms (queue and state are its segment's). */
export function matchesFields(task: SearchedFields, filter: TaskFilter): boolean {
  if (filter.id !== null && task.id !== filter.id) return false;
  if (filter.type !== null && task.type !== filter.type) return false;
  if (filter.createdAfter !== null && !(task.createdAt >= filter.createdAfter)) return false;
  if (filter.createdBefore !== null && !(task.createdAt < filter.createdBefore)) return false;
  if (filter.errors.length > 0) {
    const error = asciiLower(task.lastError ?? '');
    if (task.lastError === null || !filter.errors.every((text) => error.includes(text))) return false;
  }
  if (filter.words.length > 0) {
    const id = asciiLower(task.id);
    const type = asciiLower(task.type);
    if (!filter.words.every((word) => id.includes(word) || type.includes(word))) return false;
  }
  return true;
}

/**
 * Whether a payload (as stored: JSON text) matches every payload term. A path names object keys
 * only; the value must be of the same JSON type and equal (objects and arrays: the same JSON
 * text, keys in the same order). A payload that is not JSON matches none.
 */
export function matchesPayload(text: string | null | undefined, matches: readonly PayloadMatch[]): boolean {
  if (matches.length === 0) return true;
  if (text === null || text === undefined) return false;
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch {
    return false;
  }
  return matchesPayloadValue(payload, matches);
}

/** Whether a payload's JSON text contains every `payload:` text (ASCII letters in any case). */
export function matchesPayloadText(text: string | null | undefined, texts: readonly string[]): boolean {
  if (texts.length === 0) return true;
  if (text === null || text === undefined) return false;
  const lower = asciiLower(text);
  return texts.every((t) => lower.includes(t));
}

/** matchesPayload on a payload already decoded (a record's `payload`). */
export function matchesPayloadValue(payload: unknown, matches: readonly PayloadMatch[]): boolean {
  return matches.every((match) => {
    let value = payload;
    for (const key of match.path) {
      if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, key)) return false;
      value = (value as Record<string, unknown>)[key];
    }
    return sameJson(value, match.value);
  });
}

function sameJson(actual: unknown, expected: unknown): boolean {
  if (expected === null || typeof expected !== 'object') return actual === expected;
  if (typeof actual !== 'object' || actual === null || Array.isArray(actual) !== Array.isArray(expected)) return false;
  return JSON.stringify(actual) === JSON.stringify(expected);
}
