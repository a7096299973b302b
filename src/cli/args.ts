/** Parsers of option and argument values; a bad value is a usage error (exit 2) saying what is accepted. */
import { InvalidArgumentError } from 'commander';
import { TASK_STATES, type TaskState } from '../core/task.js';
import { MAX_RATE_INTERVAL_MS, MAX_RATE_LIMIT } from '../backend/contract.js';
import { DURATION_FORM, parseDuration } from '../config/index.js';
import { UsageError } from './errors.js';

export function positiveInt(max = 1_000_000): (value: string) => number {
  return (value) => {
    const n = /^\d+$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(n) || n < 1 || n > max) throw new InvalidArgumentError(`give a whole number from 1 to ${max}.`);
    return n;
  };
}

export function wholeNumber(max = 1_000_000): (value: string) => number {
  return (value) => {
    const n = /^\d+$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(n) || n > max) throw new InvalidArgumentError(`give a whole number from 0 to ${max}.`);
    return n;
  };
}

/** A keep bound: a whole number of tasks, or `none` (no bound; kept as the text, commander drops a null). */
export function keepBound(max: number): (value: string) => number | 'none' {
  return (value) => {
    if (value === 'none') return value;
    const n = /^\d+$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(n) || n > max) throw new InvalidArgumentError(`give a whole number of tasks from 0 to ${max}, or none (no bound).`);
    return n;
  };
}

/** A limit's count (1 … max) or none (no limit). */
export function limitCount(max: number): (value: string) => number | 'none' {
  return (value) => {
    if (value === 'none') return value;
    const n = /^\d+$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(n) || n < 1 || n > max) throw new InvalidArgumentError(`give a whole number from 1 to ${max}, or none (no limit).`);
    return n;
  };
}

/** A rate limit: `<starts>/<interval>` (100/1s, 5/250ms, 1000/1m) or none. */
export function rateLimit(value: string): { limit: number; intervalMs: number } | 'none' {
  if (value === 'none') return value;
  const form = `give <starts>/<interval>, as 100/1s, 5/250ms, 1000/1m or 10/1m30s (starts a whole number from 1 to ${MAX_RATE_LIMIT}; interval whole ms, s, m or h from 1ms to 24h), or none (no limit)`;
  const match = /^([^/]*)\/(.*)$/.exec(value);
  if (!match) throw new InvalidArgumentError(`${form}.`);
  const limit = /^\d+$/.test(match[1]) ? Number(match[1]) : Number.NaN;
  if (!(limit >= 1 && limit <= MAX_RATE_LIMIT)) throw new InvalidArgumentError(`the starts ${JSON.stringify(match[1])} are not a whole number from 1 to ${MAX_RATE_LIMIT}: ${form}.`);
  const intervalMs = wholeInterval(match[2]);
  if (intervalMs === null || intervalMs < 1 || intervalMs > MAX_RATE_INTERVAL_MS) {
    throw new InvalidArgumentError(`the interval ${JSON.stringify(match[2])} is not whole ms, s, m or h from 1ms to 24h: ${form}.`);
  }
  return { limit, intervalMs };
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** A rate's interval: whole numbers of units (1s, 250ms, 1m30s), in ms; null when it is not one. */
function wholeInterval(text: string): number | null {
  if (!/^(\d+(ms|s|m|h))+$/.test(text)) return null;
  let ms = 0;
  for (const [, n, unit] of text.matchAll(/(\d+)(ms|s|m|h)/g)) ms += Number(n) * UNIT_MS[unit];
  return ms;
}

export function duration(min = 0): (value: string) => number {
  return (value) => {
    try {
      return parseDuration('value', value, 'flag', { min });
    } catch {
      throw new InvalidArgumentError(`give ${DURATION_FORM}${min > 0 ? ` (at least ${min} ms)` : ''}.`);
    }
  };
}

export function taskState(value: string): TaskState {
  if (!(TASK_STATES as readonly string[]).includes(value)) throw new InvalidArgumentError(`give one of ${TASK_STATES.join(', ')}.`);
  return value as TaskState;
}

/** A payload given as JSON text; `-` reads it from stdin. */
export async function parsePayload(text: string | undefined): Promise<unknown> {
  if (text === undefined) return {};
  const source = text === '-' ? await readStdin() : text;
  try {
    return JSON.parse(source);
  } catch (error) {
    throw new UsageError(`the payload is not valid JSON (${(error as Error).message}); give a JSON value such as '{"to":"a@example.com"}', or - to read it from stdin`);
  }
}

/** All of standard input, as UTF-8 text. */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
