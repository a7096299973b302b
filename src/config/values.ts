/**
 * Parsers for setting values given as text (flags, environment) or as JSON (config file).
 * Each throws TL_INVALID_CONFIG with one line naming the setting, the value and the accepted form.
 */
import { isRedisUrl, redisTarget } from '../backend/redis/target.js';
import { TasklineError } from '../core/errors.js';
import { validateQueueName } from '../core/options.js';

/** Where a setting came from; the CLI reports flag errors as usage errors (exit 2). */
export type SettingSource = 'flag' | 'env' | 'file' | 'default';

export function configError(setting: string, value: unknown, accepted: string, source: SettingSource): TasklineError {
  const shown = typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value) ?? String(value);
  return new TasklineError('TL_INVALID_CONFIG', `${setting}=${shown} is not accepted: ${accepted}`, { details: { setting, source } });
}

const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
export const DURATION_FORM = 'a duration such as 500ms, 30s, 5m, 1h, 2d, or a whole number of ms';

/** `30s`, `500ms`, `5m`, `1h`, `2d`, or a bare whole number of milliseconds. */
export function parseDuration(setting: string, value: unknown, source: SettingSource, options: { min?: number; max?: number } = {}): number {
  const min = options.min ?? 0;
  const max = options.max ?? Number.MAX_SAFE_INTEGER;
  let ms: number | null = null;
  if (typeof value === 'number' && Number.isInteger(value)) ms = value;
  else if (typeof value === 'string') {
    const match = DURATION.exec(value.trim());
    if (match) {
      const amount = Number(match[1]);
      const unit = match[2];
      // A bare number is ms and must be whole; "1.5s" is fine.
      if (unit !== undefined || Number.isInteger(amount)) ms = Math.round(amount * UNIT_MS[unit ?? 'ms']);
    }
  }
  if (ms === null || !Number.isSafeInteger(ms) || ms < min || ms > max) {
    const accepted = options.max !== undefined
      ? `a duration from ${shortDuration(min)} to ${shortDuration(max)}, such as ${shortDuration(Math.min(max, Math.max(min, 3_000)))}, or a whole number of ms`
      : `${DURATION_FORM}${min > 0 ? ` (at least ${min} ms)` : ''}`;
    throw configError(setting, value, accepted, source);
  }
  return ms;
}

export function parseInteger(setting: string, value: unknown, source: SettingSource, range: { min: number; max: number }): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < range.min || n > range.max) {
    throw configError(setting, value, `a whole number from ${range.min} to ${range.max}`, source);
  }
  return n;
}

export function parsePort(setting: string, value: unknown, source: SettingSource): number {
  return parseInteger(setting, value, source, { min: 1, max: 65_535 });
}

export function parseQueue(setting: string, value: unknown, source: SettingSource): string {
  try {
    return validateQueueName(value);
  } catch {
    throw configError(setting, value, 'a queue name: 1–100 letters, digits and _ . : - starting with a letter or digit', source);
  }
}

export const BACKEND_FORM = 'redis://host:port[/db], rediss://host:port[/db], redis+sentinel://host:port[,host:port…]/<master name>[/db], redis+cluster://host:port[,host:port…] (each may add ?durability=replicated) or sqlite:<path>';

/** A backend URL: `redis://…`, `rediss://…`, `redis+sentinel://…`, `redis+cluster://…` or `sqlite:<path>` (the path must not be empty). */
export function parseBackendUrl(setting: string, value: unknown, source: SettingSource): string {
  if (typeof value === 'string') {
    const url = value.trim();
    if (isRedisUrl(url)) {
      try {
        // The same reading as the backend's (redis/target.ts): hosts, database, options; what it
        // finds wrong is named.
        redisTarget(url);
        // Several hosts (Sentinels, Cluster nodes) are no URL that URL reads: redisTarget checked them.
        if (url.startsWith('redis+sentinel://') || url.startsWith('redis+cluster://')) return url;
        const parsed = new URL(url.split('?')[0]);
        // The database is a whole number (`/2`) or left out; `/abc` would select NaN.
        if (parsed.hostname !== '' && /^\/?\d{0,5}$/.test(parsed.pathname)) return url;
      } catch (error) {
        if (error instanceof TasklineError) throw configError(setting, value, `${error.message.replace(/^.*?: /, '')}; accepted: ${BACKEND_FORM}`, source);
      }
    } else if (url.startsWith('sqlite:') && url.length > 'sqlite:'.length) {
      return url;
    }
  }
  throw configError(setting, value, BACKEND_FORM, source);
}

/** A non-empty string without whitespace (tokens, key prefixes). */
export function parseToken(setting: string, value: unknown, source: SettingSource): string {
  if (typeof value !== 'string' || value.length === 0 || /\s/.test(value)) {
    throw configError(setting, typeof value === 'string' ? '…' : value, 'a non-empty string without spaces', source);
  }
  return value;
}

export function parseBoolean(setting: string, value: unknown, source: SettingSource): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') {
    const v = value.trim().toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(v)) return true;
    if (['0', 'false', 'no', 'off'].includes(v)) return false;
  }
  throw configError(setting, value, 'true or false (also 1/0, yes/no, on/off)', source);
}

/** 300ms, 3s, 10m: the largest unit that divides the value. */
function shortDuration(ms: number): string {
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1_000]] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
