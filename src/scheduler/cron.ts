/**
 * Cron expressions with Taskline's time-zone rules. croner only matches fields:
 * it runs in UTC over "wall" times (local date-times written as UTC), and this module maps each
 * matching wall time to real instants in the schedule's zone:
 * - a fixed-time expression (no `*`, range or step in its second/minute/hour fields) whose time
 *   falls in a spring-forward gap fires once, shifted by the gap (02:30 → 03:30); in a fall-back
 *   overlap it fires once, at the first occurrence;
 * - an interval expression fires for real instants only: it skips times that do not exist and
 *   fires in both copies of a repeated hour.
 * Fire times strictly increase: next(t) > t always.
 */
import { Cron } from 'croner';
import { TasklineError } from '../core/errors.js';
import { instantsForWall, nearbyShift, validateTimeZone, wallClock } from './timezone.js';
import { isWellFormed, quote } from '../core/validate.js';

export interface CronSchedule {
  readonly expression: string;
  readonly timezone: string;
  /** fixed: fixed local times; interval: `*`/range/step in the time fields; every: `@every <duration>`. */
  readonly kind: 'fixed' | 'interval' | 'every';
  /** The first fire time strictly after `after` (epoch ms), or null if there is none. */
  next(after: number): number | null;
}

const DESCRIPTORS: Record<string, string> = {
  '@yearly': '0 0 0 1 1 *',
  '@annually': '0 0 0 1 1 *',
  '@monthly': '0 0 0 1 * *',
  '@weekly': '0 0 0 * * 0',
  '@daily': '0 0 0 * * *',
  '@midnight': '0 0 0 * * *',
  '@hourly': '0 0 * * * *',
};

const ACCEPTED =
  '5 fields (minute hour day-of-month month day-of-week) or 6 (with seconds first), with L, W and #; or @yearly, @monthly, @weekly, @daily, @hourly, or @every <duration> such as @every 5m';

/** The longest `@every` interval: a year (and a leap day). */
const MAX_EVERY_MS = 366 * 86_400_000;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses a duration such as `90s`, `5m`, `1h30m`, `2d`. */
export function parseDuration(text: string): number | null {
  const trimmed = text.trim();
  if (!/^(\d+(ms|s|m|h|d))+$/.test(trimmed)) return null;
  let total = 0;
  for (const match of trimmed.matchAll(/(\d+)(ms|s|m|h|d)/g)) total += Number(match[1]) * UNIT_MS[match[2]];
  return total;
}

/** Longest cron text accepted. */
export const MAX_CRON_LENGTH = 500;

function invalid(expression: unknown, why: string): TasklineError {
  return new TasklineError('TL_INVALID_CRON', `invalid cron expression ${quote(expression)}: ${why}; accepted: ${ACCEPTED}`);
}

/**
 * Parsed expressions, by expression, zone and anchor: a parse costs ~0.2 ms (croner builds its
 * pattern), and many schedules share an expression. A CronSchedule holds no state, so one serves
 * them all. Bounded; the oldest entry goes first.
 */
const PARSED = new Map<string, CronSchedule>();
const MAX_PARSED = 10_000;

/** Parses and checks an expression; throws TL_INVALID_CRON / TL_INVALID_TIMEZONE. */
export function parseCron(expression: unknown, timezone: unknown = 'UTC', options: { anchor?: number } = {}): CronSchedule {
  const key = typeof expression === 'string' && typeof timezone === 'string' ? `${expression}\u0000${timezone}\u0000${options.anchor ?? 0}` : null;
  const cached = key === null ? undefined : PARSED.get(key);
  if (cached) return cached;
  const parsed = parseUncached(expression, timezone, options);
  if (key !== null) {
    if (PARSED.size >= MAX_PARSED) PARSED.delete(PARSED.keys().next().value!);
    PARSED.set(key, parsed);
  }
  return parsed;
}

function parseUncached(expression: unknown, timezone: unknown, options: { anchor?: number }): CronSchedule {
  const zone = validateTimeZone(timezone);
  if (typeof expression !== 'string' || expression.trim() === '') throw invalid(expression, 'it is empty');
  if (expression.length > MAX_CRON_LENGTH) throw invalid(expression, `it is longer than ${MAX_CRON_LENGTH} characters`);
  if (!isWellFormed(expression)) throw invalid(expression, 'it is not well-formed Unicode');
  const text = expression.trim().replace(/\s+/g, ' ');
  if (text.startsWith('@every')) return everySchedule(text, zone, options.anchor ?? 0);
  // An own property only: `constructor` or `__proto__` must not reach Object.prototype.
  const lower = text.toLowerCase();
  const expanded = Object.hasOwn(DESCRIPTORS, lower) ? DESCRIPTORS[lower] : text;
  if (expanded.startsWith('@')) throw invalid(expression, `unknown descriptor ${text}`);
  const fields = expanded.split(' ');
  if (fields.length !== 5 && fields.length !== 6) throw invalid(expression, `it has ${fields.length} fields`);
  const six = fields.length === 5 ? ['0', ...fields] : fields;
  let cron: Cron;
  try {
    cron = new Cron(six.join(' '), { utcOffset: 0, legacyMode: true });
  } catch (error) {
    throw invalid(expression, (error as Error).message.replace(/^CronPattern: /, ''));
  }
  if (cron.nextRun(new Date(Date.UTC(2000, 0, 1))) === null) throw invalid(expression, 'it never fires');
  const fixed = six.slice(0, 3).every((field) => !/[*\-/?]/.test(field));
  return new WallClockSchedule(text, zone, fixed ? 'fixed' : 'interval', cron);
}

class WallClockSchedule implements CronSchedule {
  constructor(
    readonly expression: string,
    readonly timezone: string,
    readonly kind: 'fixed' | 'interval',
    private readonly cron: Cron,
  ) {}

  private nextWall(afterWall: number): number | null {
    const next = this.cron.nextRun(new Date(afterWall));
    return next === null ? null : next.getTime();
  }

  /** The instants a matching wall time fires at, under the DST rules. */
  private instants(wall: number): number[] {
    const mapping = instantsForWall(wall, this.timezone);
    if (mapping.kind === 'gap') return this.kind === 'fixed' ? [mapping.shifted] : [];
    return this.kind === 'fixed' ? mapping.instants.slice(0, 1) : mapping.instants;
  }

  next(after: number): number | null {
    // Near a clock change wall time and real time are not monotonic with each other, so look
    // back by the size of the change and keep the earliest instant after `after`.
    const shift = nearbyShift(after, this.timezone);
    let cursor = wallClock(after, this.timezone) - shift - 1000;
    let best: number | null = null;
    for (let guard = 0; guard < 100_000; guard++) {
      const wall = this.nextWall(cursor);
      if (wall === null) return best;
      if (best !== null && wall > wallClock(best, this.timezone) + shift + 1000) return best;
      for (const instant of this.instants(wall)) {
        if (instant > after && (best === null || instant < best)) best = instant;
      }
      if (best !== null && shift === 0) return best;
      cursor = wall;
    }
    return best;
  }
}

function everySchedule(text: string, timezone: string, anchor: number): CronSchedule {
  const duration = parseDuration(text.slice('@every'.length));
  if (duration === null || duration < 1000 || duration > MAX_EVERY_MS) throw invalid(text, '@every needs a duration from 1s to 366d, such as 30s, 5m, 1h30m');
  return {
    expression: text,
    timezone,
    kind: 'every',
    next(after: number): number {
      const steps = Math.floor((after - anchor) / duration) + 1;
      return anchor + steps * duration;
    },
  };
}

/** The next `count` fire times after `after`. */
export function upcoming(schedule: CronSchedule, after: number, count: number): number[] {
  const times: number[] = [];
  let cursor = after;
  while (times.length < count) {
    const next = schedule.next(cursor);
    if (next === null) break;
    times.push(next);
    cursor = next;
  }
  return times;
}
