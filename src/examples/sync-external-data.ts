/**
 * sync_external_data: HTTP GET of a JSON list, upserted into `external_records`.
 * 404 → PermanentError (dead at once); 429 → RetryableError after Retry-After; 5xx and network
 * errors → a plain error (retried with backoff); other 4xx → PermanentError. Without a `url` it
 * upserts the built-in sample records and uses no network.
 */
import { PermanentError, RetryableError } from '../core/errors.js';
import type { TaskContext } from '../worker/context.js';
import { openAppDatabase } from './app-db.js';
import type { ExampleOptions } from './options.js';
import { SAMPLE_RECORDS, SAMPLE_SOURCE } from './sample-records.js';

export interface SyncPayload {
  /** An http(s) URL answering a JSON list (or `{items: [...]}`). Default: the built-in sample records, no network. */
  url?: string;
  /** Key of the records in `external_records`. Default: the URL's host, or `sample`. */
  source?: string;
  /** Time allowed for the request. Default 15 s. */
  timeoutMs?: number;
}

/** Used when a 429 has no usable Retry-After. */
const DEFAULT_RETRY_AFTER_MS = 60_000;
const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

export function syncExternalDataHandler(options: ExampleOptions) {
  return async (payload: SyncPayload, ctx: TaskContext) => {
    if (payload.url === undefined) {
      ctx.log('no url: syncing the built-in sample records (no network used)');
      return upsertRecords(options.appDatabase, payload.source ?? SAMPLE_SOURCE, SAMPLE_RECORDS, ctx);
    }
    const url = payload.url;
    const source = payload.source ?? new URL(url).host;
    const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(payload.timeoutMs ?? 15_000)]);
    let response: Response;
    try {
      response = await fetch(url, { signal, headers: { accept: 'application/json' } });
    } catch (error) {
      if (ctx.signal.aborted) throw error;
      throw new Error(`GET ${url} failed: ${unreachable(error)} (offline? network errors are retried; without a url the built-in sample is synced)`, { cause: error });
    }
    if (response.status === 404) throw new PermanentError(`GET ${url}: 404 not found`);
    if (response.status === 429) {
      const retryIn = parseRetryAfter(response.headers.get('retry-after'), Date.now());
      throw new RetryableError(`GET ${url}: 429 too many requests; retrying in ${Math.round(retryIn / 1000)} s`, { retryIn });
    }
    if (response.status >= 500) throw new Error(`GET ${url}: ${response.status} ${response.statusText}`);
    if (!response.ok) throw new PermanentError(`GET ${url}: ${response.status} ${response.statusText}`);

    let body: unknown;
    try {
      body = await response.json();
    } catch (error) {
      throw new PermanentError(`GET ${url}: the answer is not JSON (${(error as Error).message})`);
    }
    const items = Array.isArray(body) ? body : (body as { items?: unknown; data?: unknown } | null)?.items ?? (body as { data?: unknown } | null)?.data;
    if (!Array.isArray(items)) throw new PermanentError(`GET ${url}: expected a JSON array of records (or {items: [...]})`);
    return upsertRecords(options.appDatabase, source, items, ctx);
  };
}

function upsertRecords(path: string, source: string, items: readonly unknown[], ctx: TaskContext) {
  const db = openAppDatabase(path);
  try {
    const existing = db.prepare('SELECT data FROM external_records WHERE source = ? AND id = ?').pluck();
    const upsert = db.prepare(
      'INSERT INTO external_records (source, id, data, synced_at) VALUES (?, ?, ?, ?) ON CONFLICT (source, id) DO UPDATE SET data = excluded.data, synced_at = excluded.synced_at',
    );
    const counts = { source, received: items.length, inserted: 0, updated: 0, unchanged: 0, skipped: 0 };
    const now = Date.now();
    db.transaction(() => {
      for (const item of items) {
        const id = (item as { id?: unknown } | null)?.id;
        if (typeof id !== 'string' && typeof id !== 'number') {
          counts.skipped += 1;
          continue;
        }
        const data = JSON.stringify(item);
        const before = existing.get(source, String(id)) as string | undefined;
        if (before === data) counts.unchanged += 1;
        else {
          upsert.run(source, String(id), data, now);
          if (before === undefined) counts.inserted += 1;
          else counts.updated += 1;
        }
      }
    })();
    ctx.log(`synced ${source}: ${counts.inserted} new, ${counts.updated} changed, ${counts.unchanged} unchanged, ${counts.skipped} without id`);
    return counts;
  } finally {
    db.close();
  }
}

/** Why fetch could not connect, from its cause: `fetch failed` alone says nothing. */
function unreachable(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (error instanceof Error && error.name === 'TimeoutError') return 'no answer in time';
  if (typeof cause?.message === 'string' && cause.message !== '') return `cannot connect (${cause.message})`;
  return error instanceof Error ? error.message : String(error);
}

/** Retry-After is either seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | null, now: number): number {
  if (value === null || value.trim() === '') return DEFAULT_RETRY_AFTER_MS;
  const text = value.trim();
  let ms: number;
  if (/^\d+$/.test(text)) ms = Number(text) * 1000;
  else {
    const at = Date.parse(text);
    if (Number.isNaN(at)) return DEFAULT_RETRY_AFTER_MS;
    ms = at - now;
  }
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms));
}
