/**
 * Page bounds and cursors of the backends' listings (Backend.listTasks), shared by the stores.
 *
 * A cursor is opaque to callers: the store's position after a page's last task (Redis: an
 * offset; SQLite: a sort key and an id), followed by a check that ties it to the queue and state
 * it was made for. A cursor that no previous page of the same listing returned is refused with
 * TL_INVALID_ARGUMENT — never read as "from the start", or a caller that follows next_cursor
 * would go round the same pages for ever.
 */
import { createHash } from 'node:crypto';
import { TasklineError } from '../core/errors.js';
import { quote } from '../core/validate.js';
import { countWithin } from './shared.js';

/** Tasks per page when no limit is given. */
export const DEFAULT_PAGE_LIMIT = 50;
/** Most tasks per page. */
export const MAX_PAGE_LIMIT = 1000;
/** Longer than any cursor a store makes (and than the HTTP API accepts). */
const MAX_CURSOR_LENGTH = 500;

/** A page size: DEFAULT_PAGE_LIMIT when not given, else a whole number 1 … MAX_PAGE_LIMIT (TL_INVALID_ARGUMENT). */
export function pageLimit(limit: unknown): number {
  return limit === undefined ? DEFAULT_PAGE_LIMIT : countWithin('limit', limit, MAX_PAGE_LIMIT);
}

/** A position within one listing, as a store makes it. */
export type CursorPosition = readonly (string | number)[];

export function encodeCursor(queue: string, state: string, position: CursorPosition): string {
  const body = Buffer.from(JSON.stringify(position)).toString('base64url');
  return `${body}.${checkOf(queue, state, body)}`;
}

/**
 * The position a cursor holds, or null for no cursor (`undefined`: the first page). Throws
 * TL_INVALID_ARGUMENT for anything else that is not a cursor `encodeCursor` made for this queue
 * and state with a position `valid` accepts.
 */
export function decodeCursor<T extends CursorPosition>(
  cursor: unknown,
  queue: string,
  state: string,
  valid: (position: unknown[]) => position is unknown[] & T,
  /** The listing in the refusal's words; default: the tasks of the queue in the state. */
  listing = `the tasks of queue ${JSON.stringify(queue)} in state ${state}`,
): T | null {
  if (cursor === undefined) return null;
  if (typeof cursor === 'string' && cursor.length <= MAX_CURSOR_LENGTH) {
    const dot = cursor.indexOf('.');
    const body = cursor.slice(0, dot);
    if (dot > 0 && cursor.slice(dot + 1) === checkOf(queue, state, body)) {
      let position: unknown;
      try {
        position = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
      } catch {
        position = null;
      }
      if (Array.isArray(position) && valid(position)) return position;
    }
  }
  throw new TasklineError(
    'TL_INVALID_ARGUMENT',
    `invalid cursor ${quote(cursor)}: cursor must be a value returned as next_cursor (nextCursor) by a previous page of ${listing}; leave it out for the first page`,
  );
}

/** The workflow list of one state or of all, in a cursor's refusal. */
export function workflowListing(state: string | null): string {
  return state === null ? 'the workflow list (all states)' : `the workflow list in state ${state}`;
}

/** Ties a cursor to its listing: a cursor of another queue or state, or an edited one, fails the check. */
function checkOf(queue: string, state: string, body: string): string {
  return createHash('sha256').update(`${queue}\n${state}\n${body}`).digest('base64url').slice(0, 12);
}
