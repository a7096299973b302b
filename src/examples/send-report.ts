/**
 * send_report: renders a plain-text report of the example application's data (sessions and
 * synced records over the last N days) and mails it.
 */
import type { TaskContext } from '../worker/context.js';
import { openAppDatabase, type AppDatabase } from './app-db.js';
import { deliver } from './email-deliver.js';
import type { ExampleOptions } from './options.js';

export interface SendReportPayload {
  to: string | string[];
  /** Default `Weekly report`. */
  title?: string;
  /** The period, in days up to now. Default 7. */
  days?: number;
}

export function sendReportHandler(options: ExampleOptions) {
  return async (payload: SendReportPayload, ctx: TaskContext) => {
    const title = payload.title ?? 'Weekly report';
    const days = payload.days ?? 7;
    const db = openAppDatabase(options.appDatabase);
    let text: string;
    try {
      text = renderReport(db, title, days, new Date());
    } finally {
      db.close();
    }
    const to = Array.isArray(payload.to) ? payload.to : [payload.to];
    const sent = await deliver({ from: options.mailFrom, to, subject: `${title} (${days} days)`, text }, ctx, options);
    return { to, lines: text.split('\n').length, ...sent };
  };
}

export function renderReport(db: AppDatabase, title: string, days: number, now: Date): string {
  const since = now.getTime() - days * 86_400_000;
  const sessions = db.prepare('SELECT count(*) AS total, count(DISTINCT user_id) AS users, sum(last_seen_at >= ?) AS active FROM sessions').get(since) as {
    total: number;
    users: number;
    active: number | null;
  };
  const sources = db
    .prepare('SELECT source, count(*) AS records, sum(synced_at >= ?) AS recent, max(synced_at) AS last FROM external_records GROUP BY source ORDER BY source')
    .all(since) as { source: string; records: number; recent: number | null; last: number }[];
  const lines = [
    title,
    '='.repeat(title.length),
    `Period: ${new Date(since).toISOString().slice(0, 10)} – ${now.toISOString().slice(0, 10)} (${days} days)`,
    '',
    'Sessions',
    `  stored: ${sessions.total}   users: ${sessions.users}   active in period: ${sessions.active ?? 0}`,
    '',
    'Synced records',
    ...(sources.length === 0
      ? ['  none yet (enqueue sync_external_data)']
      : sources.map((s) => `  ${s.source.padEnd(30)} ${String(s.records).padStart(7)} records, ${s.recent ?? 0} synced in period, last ${new Date(s.last).toISOString()}`)),
    '',
    `Generated ${now.toISOString()} by Taskline`,
  ];
  return lines.join('\n');
}
