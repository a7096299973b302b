/**
 * Time-zone arithmetic on top of Intl: an instant's wall-clock time in a zone, and the instants
 * (none, one or two) at which a zone's clocks show a given wall-clock time.
 *
 * A "wall" value is a local date-time written as if it were UTC epoch ms: 2026-03-08 02:30 in
 * New York is Date.UTC(2026, 2, 8, 2, 30).
 */
import { TasklineError } from '../core/errors.js';
import { isWellFormed, quote } from '../core/validate.js';

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

export function validateTimeZone(timeZone: unknown): string {
  if (typeof timeZone !== 'string' || timeZone.length === 0 || timeZone.length > 100 || !isWellFormed(timeZone)) {
    throw new TasklineError('TL_INVALID_TIMEZONE', `time zone must be an IANA name such as "Europe/Berlin" or "UTC", got ${quote(timeZone)}`);
  }
  try {
    formatter(timeZone);
  } catch {
    throw new TasklineError('TL_INVALID_TIMEZONE', `unknown time zone ${quote(timeZone)}: use an IANA name such as "America/New_York" or "UTC"`);
  }
  return timeZone;
}

/** The offset of a zone at an instant, read from Intl (slow: a formatToParts call). */
function offsetFromIntl(instant: number, timeZone: string): number {
  const ms = ((instant % 1000) + 1000) % 1000;
  const whole = instant - ms;
  const parts = formatter(timeZone).formatToParts(new Date(whole));
  const get = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((p) => p.type === type)!.value);
  return Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second')) - whole;
}

const YEAR_MS = 366 * 86_400_000;

/**
 * A zone's offset changes per UTC year, found once (a day-by-day scan, then a bisection to the
 * minute for each change) so that offsets afterwards cost a short search instead of an Intl call.
 */
interface YearOffsets {
  /** Offset at the start of the year. */
  initial: number;
  /** Changes in the year: from `at` (epoch ms) on, the offset is `offset`. */
  changes: { at: number; offset: number }[];
}

const offsetTables = new Map<string, Map<number, YearOffsets>>();

function yearOffsets(timeZone: string, year: number): YearOffsets {
  let zone = offsetTables.get(timeZone);
  if (!zone) offsetTables.set(timeZone, (zone = new Map()));
  let table = zone.get(year);
  if (table) return table;
  const start = Date.UTC(year, 0, 1);
  const end = Date.UTC(year + 1, 0, 1);
  table = { initial: offsetFromIntl(start, timeZone), changes: [] };
  let previous = table.initial;
  for (let day = start + 86_400_000; day <= end; day += 86_400_000) {
    const offset = offsetFromIntl(day, timeZone);
    if (offset === previous) continue;
    // Bisect, in whole minutes, to the first minute with the new offset.
    let lo = (day - 86_400_000) / 60_000;
    let hi = day / 60_000;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (offsetFromIntl(mid * 60_000, timeZone) === previous) lo = mid;
      else hi = mid;
    }
    if (hi * 60_000 < end) table.changes.push({ at: hi * 60_000, offset });
    previous = offset;
  }
  if (zone.size > 64) zone.clear();
  zone.set(year, table);
  return table;
}

/** The zone's offset from UTC at an instant, in ms (wall = instant + offset). */
export function offsetAt(instant: number, timeZone: string): number {
  if (timeZone === 'UTC' || timeZone === 'Etc/UTC') return 0;
  if (!Number.isFinite(instant) || Math.abs(instant) > 100 * YEAR_MS * 10) return offsetFromIntl(instant, timeZone);
  const table = yearOffsets(timeZone, new Date(instant).getUTCFullYear());
  let offset = table.initial;
  for (const change of table.changes) {
    if (instant >= change.at) offset = change.offset;
    else break;
  }
  return offset;
}

/** The wall-clock time of an instant in a zone (ms precision kept). */
export function wallClock(instant: number, timeZone: string): number {
  return instant + offsetAt(instant, timeZone);
}

const DAY = 86_400_000;

export type WallMapping =
  /** The wall time exists once or twice (a fall-back overlap); instants ascending. */
  | { kind: 'exists'; instants: number[] }
  /** The wall time does not exist (a spring-forward gap). `shifted` reads the wall time with the
   * offset from before the gap, so it falls after the gap by the gap's length (02:30 → 03:30). */
  | { kind: 'gap'; shifted: number };

export function instantsForWall(wall: number, timeZone: string): WallMapping {
  const before = offsetAt(wall - DAY, timeZone);
  const after = offsetAt(wall + DAY, timeZone);
  const candidates = new Set([wall - before, wall - after, wall - offsetAt(wall, timeZone)]);
  const instants = [...candidates].filter((c) => wallClock(c, timeZone) === wall).sort((a, b) => a - b);
  if (instants.length > 0) return { kind: 'exists', instants };
  return { kind: 'gap', shifted: wall - Math.min(before, after) };
}

/** The size of the largest clock shift within a day of an instant (0 when there is none). */
export function nearbyShift(instant: number, timeZone: string): number {
  return Math.abs(offsetAt(instant + DAY, timeZone) - offsetAt(instant - DAY, timeZone));
}

/** Formats an instant as local ISO-8601 with its offset, e.g. 2026-03-08T03:30:00-04:00. */
export function formatLocal(instant: number, timeZone: string): string {
  const offset = Math.round(offsetAt(instant, timeZone) / 60_000);
  const wall = new Date(instant + offset * 60_000).toISOString().slice(0, 19);
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  return `${wall}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}
