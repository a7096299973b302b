/**
 * The one validation layer for values Taskline stores (typed at every door). The
 * library, the HTTP API, the CLI and the config file all reach the store through these checks
 * (enqueue options, schedules, pauses; the stores check types, headers and unique keys once
 * more), so a value that passes can be read back and presented. Values stored before a rule
 * existed still may not pass: reads present them with a marker (server/present.ts).
 *
 * Each check names the field and the accepted form, and quotes at most QUOTE_LIMIT characters of
 * the bad value: a 1 MB mistake gives a one-line error, not a 1 MB one.
 */
import { TasklineError, type ErrorCode } from './errors.js';

/** How far from now a stored time may lie: 100 years either way (Date itself holds ±273,790 years). */
export const TIME_RANGE_MS = 100 * 365.25 * 24 * 3_600_000;
/** The longest duration accepted (a delay, timeout, retention, window…): 100 years. */
export const MAX_DURATION_MS = TIME_RANGE_MS;
/** At most this many characters of a bad value appear in an error message. */
export const QUOTE_LIMIT = 100;

/** A text cut to at most `max` characters, with … where it was cut. */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** A bad value as it appears in an error: JSON-ish, at most QUOTE_LIMIT characters. */
export function quote(value: unknown): string {
  let text: string;
  if (typeof value === 'string') {
    const head = value.length > QUOTE_LIMIT ? value.slice(0, QUOTE_LIMIT) : value;
    text = JSON.stringify(head);
    // Escapes (a lone surrogate is six characters) may make the quote longer than the text:
    // it is cut again, at an escape's start rather than inside one.
    if (head.length === value.length && text.length <= QUOTE_LIMIT + 2) return text;
    if (text.length > QUOTE_LIMIT + 2) text = `${text.slice(0, QUOTE_LIMIT + 1).replace(/\\(u[0-9a-fA-F]{0,3})?$/, '')}"`;
    return `${text}… (${value.length} characters)`;
  }
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'an invalid Date' : value.toISOString();
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  try {
    text = typeof value === 'bigint' ? `${value}n` : (JSON.stringify(value) ?? String(value));
  } catch {
    text = Object.prototype.toString.call(value);
  }
  return clip(text, QUOTE_LIMIT);
}

/** A failure of one field: `<field> must be <accepted>, got <quoted value>`. */
export function invalid(code: ErrorCode, field: string, accepted: string, value: unknown): TasklineError {
  return new TasklineError(code, `${field} must be ${accepted}, got ${quote(value)}`);
}

/** True when the string has no lone UTF-16 surrogate (it can be encoded as UTF-8 and back). */
export function isWellFormed(text: string): boolean {
  // String.prototype.isWellFormed is in Node 20+, though not in the ES2023 lib types.
  return (text as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/** The first key or string value inside a JSON-like value that is not well-formed, as a path; null when all are. */
export function malformedStringPath(value: unknown, path = '', depth = 0): string | null {
  if (typeof value === 'string') return isWellFormed(value) ? null : path || '(value)';
  if (typeof value !== 'object' || value === null || depth > 200) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = malformedStringPath(value[i], `${path}[${i}]`, depth + 1);
      if (found !== null) return found;
    }
    return null;
  }
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    const at = path === '' ? key : `${path}.${key}`;
    if (!isWellFormed(key)) return at;
    const found = malformedStringPath((value as Record<string, unknown>)[key], at, depth + 1);
    if (found !== null) return found;
  }
  return null;
}

export interface TextRule {
  /** Shortest length. Default 1. */
  min?: number;
  /** Longest length, in UTF-16 units. */
  max: number;
  /** Characters allowed, when narrower than "any well-formed text without control characters". */
  pattern?: RegExp;
  /** The accepted form, in words, for the error. */
  accepted: string;
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
// eslint-disable-next-line no-control-regex
const HEADER_VALUE = /^[^\u0000]*$/;

/** A string of well-formed Unicode, within the rule's length, without control characters. */
export function text(code: ErrorCode, field: string, value: unknown, rule: TextRule): string {
  const min = rule.min ?? 1;
  if (
    typeof value !== 'string' ||
    value.length < min ||
    value.length > rule.max ||
    !isWellFormed(value) ||
    (rule.pattern ? !rule.pattern.test(value) : CONTROL.test(value))
  ) {
    throw invalid(code, field, rule.accepted, value);
  }
  return value;
}

/** A whole number in [min, max]. */
export function wholeNumber(code: ErrorCode, field: string, value: unknown, min: number, max: number, unit = ''): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalid(code, field, `a whole number${unit} from ${min} to ${max}`, value);
  }
  return value;
}

/** A duration in ms: a whole number from `min` to MAX_DURATION_MS (100 years). */
export function duration(code: ErrorCode, field: string, value: unknown, min = 0): number {
  return wholeNumber(code, field, value, min, MAX_DURATION_MS, ' of milliseconds');
}

/** The earliest time accepted: 100 years ago, and never before 1970 (stores keep times unsigned). */
function earliest(now: number): number {
  return Math.max(0, now - TIME_RANGE_MS);
}

/** The accepted range of times around `now`, for messages. */
function timeRange(now: number): string {
  return `${new Date(earliest(now)).toISOString().slice(0, 10)} to ${new Date(now + TIME_RANGE_MS).toISOString().slice(0, 10)}`;
}

/**
 * A time as epoch ms: a number of ms, a Date, or (when `strings`) an ISO-8601 text; within 100
 * years of `now`, and never before 1970.
 */
export function time(code: ErrorCode, field: string, value: unknown, options: { now?: number; strings?: boolean } = {}): number {
  const now = options.now ?? Date.now();
  const accepted = `a time (${options.strings ? 'epoch ms, a Date or an ISO-8601 text' : 'epoch ms or a Date'}) from ${timeRange(now)}`;
  let ms: unknown = value;
  if (value instanceof Date) ms = value.getTime();
  else if (typeof value === 'string' && options.strings) ms = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < earliest(now) || ms > now + TIME_RANGE_MS) {
    throw invalid(code, field, accepted, value);
  }
  return Math.round(ms);
}

/** String headers: at most 100, names 1–200 characters, values up to 8,192, all well-formed. */
export function headers(code: ErrorCode, field: string, value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid(code, field, 'an object of string values', value);
  }
  const entries = Object.entries(value);
  if (entries.length > 100) throw new TasklineError(code, `${field} has ${entries.length} entries; at most 100 are accepted`);
  for (const [name, v] of entries) {
    text(code, `${field} name`, name, { max: 200, accepted: 'a name of 1–200 characters without control characters' });
    text(code, `${field}.${name.length > 40 ? `${name.slice(0, 40)}…` : name}`, v, {
      min: 0,
      max: 8192,
      pattern: HEADER_VALUE,
      accepted: 'a string of at most 8,192 characters without NUL',
    });
  }
  // fromEntries defines own properties, so a "__proto__" name stays a plain header.
  return Object.fromEntries(entries);
}
