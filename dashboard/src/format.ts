/** How times, durations and numbers read on screen. */
import type { QueueLimits } from './types';

const numberFormat = new Intl.NumberFormat('en');
export const n = (value: number | null | undefined): string => (value === null || value === undefined ? '–' : numberFormat.format(value));

/** "3 s", "4 min", "2 h 5 min", "3 d" */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '–';
  const abs = Math.abs(ms);
  if (abs < 1000) return `${Math.round(ms)} ms`;
  const s = Math.round(abs / 1000);
  let text: string;
  if (s < 60) text = `${s} s`;
  else if (s < 3600) text = `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''}`;
  else if (s < 86_400) text = `${Math.floor(s / 3600)} h${Math.floor((s % 3600) / 60) ? ` ${Math.floor((s % 3600) / 60)} min` : ''}`;
  else text = `${Math.floor(s / 86_400)} d${Math.floor((s % 86_400) / 3600) ? ` ${Math.floor((s % 86_400) / 3600)} h` : ''}`;
  return ms < 0 ? `-${text}` : text;
}

/** "in 3 min" / "5 s ago" */
export function relative(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '–';
  const diff = Date.parse(iso) - now;
  if (Number.isNaN(diff)) return '–';
  if (Math.abs(diff) < 1000) return 'now';
  return diff > 0 ? `in ${duration(diff)}` : `${duration(-diff)} ago`;
}

// Year first in every locale (Swedish writes dates as ISO-8601 does), in this browser's zone.
const local = new Intl.DateTimeFormat('sv-SE', { year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
export function localTime(iso: string | null | undefined): string {
  if (!iso) return '–';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '–' : local.format(date);
}

export function utcTime(iso: string | null | undefined): string {
  if (!iso) return '–';
  return iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC');
}

/** A JSON value as text for a <pre> (never as HTML). */
export function json(value: unknown): string {
  if (value === undefined) return '';
  try {
    return JSON.stringify(value, null, 2) ?? '';
  } catch {
    return '(a value that is not JSON)';
  }
}

/** A rate's interval, short: "1s", "500ms", "5min", "2h". */
export function interval(ms: number): string {
  for (const [unit, size] of [['h', 3_600_000], ['min', 60_000], ['s', 1000]] as const) {
    if (ms >= size && ms % size === 0) return `${n(ms / size)}${unit}`;
  }
  return `${n(ms)}ms`;
}

/** A queue's limits in a few words: "50/1s · 5 running · 2 per group · max 100,000"; "—" for none. */
export function limitsText(limits: QueueLimits | null | undefined): string {
  if (!limits) return '—';
  const parts: string[] = [];
  if (limits.rate) parts.push(`${n(limits.rate.limit)}/${interval(limits.rate.interval_ms)}`);
  if (limits.concurrency !== null) parts.push(`${n(limits.concurrency)} running`);
  if (limits.group_concurrency !== null) parts.push(`${n(limits.group_concurrency)} per group`);
  if (limits.max_length !== null) parts.push(`max ${n(limits.max_length)}`);
  return parts.length === 0 ? '—' : parts.join(' · ');
}
