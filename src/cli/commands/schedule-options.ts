/** Parsers of the schedule commands' option values; a bad value is a usage error (exit 2). */
import { InvalidArgumentError } from 'commander';
import { parseDuration } from '../../config/index.js';
import { CATCH_UP_POLICIES, OVERLAP_POLICIES, type CatchUpPolicy, type OverlapPolicy } from '../../core/schedule.js';
import { formatLocal } from '../../scheduler/timezone.js';
import { UsageError } from '../errors.js';

const TIME_FORM = 'an ISO-8601 time with a zone such as 2026-01-05T09:00:00Z or 2026-01-05T09:00:00+01:00, a date such as 2026-01-05 (UTC), or epoch ms';

/**
 * An instant: ISO-8601 with a zone (a local time without one would depend on this host's zone),
 * a bare date (UTC midnight), epoch ms, or — with `relativeTo` — a duration from then (`2h`).
 */
export function pointInTime(option: string, value: string, options: { relativeTo?: number } = {}): number {
  const text = value.trim();
  if (/^\d{10,}$/.test(text)) return Number(text);
  if (options.relativeTo !== undefined && /^\d+(\.\d+)?\s*(ms|s|m|h|d)$/.test(text)) {
    return options.relativeTo + parseDuration(option, text, 'flag');
  }
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(text);
  const zoned = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(text);
  const ms = Date.parse(text);
  if ((dateOnly || zoned) && Number.isFinite(ms)) return ms;
  const also = options.relativeTo === undefined ? '' : ', or a duration from now such as 2h or 3d';
  throw new UsageError(`${option} ${JSON.stringify(value)} is not a time: give ${TIME_FORM}${also}`);
}

export function overlapPolicy(value: string): OverlapPolicy {
  if (!(OVERLAP_POLICIES as readonly string[]).includes(value)) throw new InvalidArgumentError(`give one of ${OVERLAP_POLICIES.join(', ')}.`);
  return value as OverlapPolicy;
}

/** `latest`, `all:30m`, `skip` … : a policy and an optional window. */
export function catchUp(value: string): { policy: CatchUpPolicy; window?: number } {
  const [policy, window, ...rest] = value.split(':');
  const form = `give policy[:window] with policy ${CATCH_UP_POLICIES.join(', ')} and a window such as 30m or 2h (default 1h), e.g. all:6h.`;
  if (rest.length > 0 || !(CATCH_UP_POLICIES as readonly string[]).includes(policy)) throw new InvalidArgumentError(form);
  if (window === undefined) return { policy: policy as CatchUpPolicy };
  try {
    return { policy: policy as CatchUpPolicy, window: parseDuration('window', window, 'flag') };
  } catch {
    throw new InvalidArgumentError(form);
  }
}

/** `2026-03-08 03:30:00 -04:00` (the instant in the schedule's zone), or `-`. */
export function localTime(at: number | null, timezone: string): string {
  return at === null ? '-' : formatLocal(at, timezone).replace('T', ' ').replace(/([+-]\d\d:\d\d)$/, ' $1');
}
