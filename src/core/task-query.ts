/**
 * The task search language, parsed into a TaskFilter both stores apply the same way.
 *
 * A query is space-separated terms, all ANDed:
 * - `id:<id>`, `type:<type>`, `queue:<name>`, `state:<state>` — equality (each at most once);
 * - `err:<text>` — the last error contains the text;
 * - `after:<time>` / `before:<time>` — created at or after / before an ISO-8601 time
 *   (`2026-03-01`, `2026-03-01T09:00:00Z`; a time of day needs `Z` or an offset);
 * - `payload.<key>.<key>:<value>` — the payload's value at that path equals the value, read as
 *   JSON when it is JSON (`42`, `true`, `"42"`, `{"a":1}`), else as a string;
 * - `payload:<text>` — the payload, as its JSON text, contains the text (`payload:ada@example`);
 * - any other word — the id or the type contains it (`email:deliver`: the prefix is no key).
 * A value with spaces is written in double quotes (`err:"connection refused"`). Text matches
 * (`err:`, `payload:`, words) ignore the case of ASCII letters, on both stores.
 */
import { TasklineError } from './errors.js';
import { TASK_STATES, isTaskState, type TaskState } from './task.js';
import { quote } from './validate.js';

/** `payload.<path>:<value>`: the value at the path (object keys) equals `value`. */
export interface PayloadMatch {
  path: string[];
  value: unknown;
}

/** What a search matches: every non-empty field must hold (AND). */
export interface TaskFilter {
  id: string | null;
  type: string | null;
  queue: string | null;
  /** The states searched, in lifecycle order; null: every state. */
  states: TaskState[] | null;
  /** Substrings of the last error, ASCII-lowercased. */
  errors: string[];
  /** Created at or after (epoch ms), or null. */
  createdAfter: number | null;
  /** Created before (epoch ms), or null. */
  createdBefore: number | null;
  payload: PayloadMatch[];
  /** Substrings of the payload's JSON text, ASCII-lowercased. */
  texts: string[];
  /** Substrings of the id or the type, ASCII-lowercased. */
  words: string[];
}

/** A filter that matches every task (an empty query). */
export function emptyFilter(): TaskFilter {
  return { id: null, type: null, queue: null, states: null, errors: [], createdAfter: null, createdBefore: null, payload: [], texts: [], words: [] };
}

/** The longest query accepted, characters. */
export const MAX_QUERY_LENGTH = 2000;

/** Lowercases ASCII letters only (what SQLite's lower() does), so both stores fold case alike. */
export function asciiLower(text: string): string {
  return text.replace(/[A-Z]+/g, (s) => s.toLowerCase());
}

/** A stable text of a filter: the same query gives the same key (search cursors are tied to it). */
export function filterKey(filter: TaskFilter): string {
  return JSON.stringify([filter.id, filter.type, filter.queue, filter.states, filter.errors, filter.createdAfter, filter.createdBefore, filter.payload, filter.words, filter.texts]);
}

/** Whether the filter tests anything beyond the id, queue and state (which the stores' indexes answer). */
export function testsRecords(filter: TaskFilter): boolean {
  return filter.type !== null || filter.errors.length > 0 || filter.createdAfter !== null || filter.createdBefore !== null || filter.payload.length > 0 || filter.texts.length > 0 || filter.words.length > 0;
}

const FORMS = {
  id: 'id:<task id>',
  type: 'type:<task type>',
  queue: 'queue:<queue name>',
  state: `state:<state>, one of ${TASK_STATES.join(', ')}`,
  err: 'err:<text> (quote text with spaces: err:"connection refused")',
  after: 'after:<ISO-8601 time>, e.g. after:2026-03-01 or after:2026-03-01T09:00:00Z',
  before: 'before:<ISO-8601 time>, e.g. before:2026-03-01 or before:2026-03-01T09:00:00Z',
  payload: 'payload.<key>[.<key>…]:<JSON value or text>, e.g. payload.user_id:42, or payload:<text> for the payload containing the text',
} as const;
type Key = keyof typeof FORMS;

const ISO_TIME = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2}))?$/;
/** A payload path key: no dot, colon, quote or backslash (the stores quote keys in their paths). */
const PATH_KEY = /^[^.:"\\\s]+$/;

/**
 * Parses a search query (see the top of this file). Throws TL_INVALID_REQUEST naming the term
 * and its accepted form; `where` names the query in messages (`query.q`, `body.q`).
 */
export function parseTaskQuery(text: string, where = 'q'): TaskFilter {
  if (text.length > MAX_QUERY_LENGTH) throw fail(where, `is longer than ${MAX_QUERY_LENGTH} characters`);
  const filter = emptyFilter();
  for (const term of splitTerms(text, where)) {
    const colon = term.indexOf(':');
    const key = colon > 0 ? term.slice(0, colon) : '';
    const raw = term.slice(colon + 1);
    if (key.startsWith('payload.')) {
      filter.payload.push(payloadMatch(term, key, raw, where));
    } else if (key === 'payload') {
      const text = raw === '' ? '' : unquote(raw);
      if (text === '') throw badTerm(where, term, 'payload', 'needs a text');
      filter.texts.push(asciiLower(text));
    } else if (Object.hasOwn(FORMS, key)) {
      applyTerm(filter, key as Key, term, raw === '' ? null : unquote(raw), where);
    } else {
      filter.words.push(asciiLower(unquote(term)));
    }
  }
  return filter;
}

function applyTerm(filter: TaskFilter, key: Key, term: string, value: string | null, where: string): void {
  if (value === null || value === '') throw badTerm(where, term, key, 'needs a value');
  const once = <T>(current: T | null, next: T): T => {
    if (current !== null && JSON.stringify(current) !== JSON.stringify(next)) {
      throw badTerm(where, term, key, `repeats ${key}: with another value, and terms are ANDed (search one ${key} at a time)`);
    }
    return next;
  };
  switch (key) {
    case 'id': filter.id = once(filter.id, value); break;
    case 'type': filter.type = once(filter.type, value); break;
    case 'queue': filter.queue = once(filter.queue, value); break;
    case 'state':
      if (!isTaskState(value)) throw badTerm(where, term, key, `has no state ${quote(value)}`);
      filter.states = once(filter.states, [value]);
      break;
    case 'err': filter.errors.push(asciiLower(value)); break;
    case 'after': filter.createdAfter = once(filter.createdAfter, time(where, term, key, value)); break;
    case 'before': filter.createdBefore = once(filter.createdBefore, time(where, term, key, value)); break;
    default: break;
  }
}

function time(where: string, term: string, key: Key, value: string): number {
  const ms = ISO_TIME.test(value) ? Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value) : Number.NaN;
  if (!Number.isFinite(ms)) throw badTerm(where, term, key, 'is not an ISO-8601 time');
  return ms;
}

function payloadMatch(term: string, key: string, raw: string, where: string): PayloadMatch {
  const path = key.slice('payload.'.length).split('.');
  if (path.some((k) => !PATH_KEY.test(k))) {
    throw badTerm(where, term, 'payload', 'has an empty key or one with " or \\ in its path');
  }
  if (raw === '') throw badTerm(where, term, 'payload', 'needs a value');
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    value = raw;
  }
  return { path, value };
}

/** The terms of a query: runs of non-space characters; a double quote runs to the next one. */
function splitTerms(text: string, where: string): string[] {
  const terms: string[] = [];
  let current = '';
  let quoteAt = -1;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoteAt >= 0) {
      current += ch;
      if (ch === '\\' && i + 1 < text.length) current += text[++i];
      else if (ch === '"') quoteAt = -1;
    } else if (/\s/.test(ch)) {
      if (current !== '') terms.push(current);
      current = '';
    } else {
      if (ch === '"') quoteAt = i;
      current += ch;
    }
  }
  if (quoteAt >= 0) throw fail(where, `has a double quote at character ${quoteAt + 1} that is not closed`);
  if (current !== '') terms.push(current);
  return terms;
}

/** A value as written, without its double quotes (`"a b"` → `a b`; JSON escapes apply inside). */
function unquote(value: string): string {
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
    try {
      return JSON.parse(value) as string;
    } catch {
      return value.slice(1, -1);
    }
  }
  return value;
}

function fail(where: string, problem: string): TasklineError {
  return new TasklineError('TL_INVALID_REQUEST', `${where} ${problem}`);
}

function badTerm(where: string, term: string, key: Key, problem: string): TasklineError {
  return fail(where, `term ${quote(term)} ${problem}; the accepted form is ${FORMS[key]}`);
}
