/** Workers (live heartbeats) and statistics. */
import type { DailyStat, MinuteStat } from '../../backend/contract.js';
import type { ServerContext } from '../context.js';
import { iso, workerView } from '../present.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { Stats, WorkerList } from '../schemas.js';

const MINUTES = 60;
const DAYS = 90;
/** The rates are averaged over this many of the last minutes. */
const RATE_MINUTES = 5;

interface Point {
  at: string;
  processed: number;
  failed: number;
}

function minutePoints(stats: MinuteStat[]): Point[] {
  return stats.map((s) => ({ at: iso(s.at) ?? '', processed: s.processed, failed: s.failed }));
}

function dayPoints(stats: DailyStat[]): Point[] {
  return stats.map((s) => ({ at: s.day, processed: s.processed, failed: s.failed }));
}

/** Sums series of several queues point by point (same length and times). */
function sum(series: Point[][]): Point[] {
  if (series.length === 0) return [];
  return series[0].map((p, i) => ({
    at: p.at,
    processed: series.reduce((n, s) => n + (s[i]?.processed ?? 0), 0),
    failed: series.reduce((n, s) => n + (s[i]?.failed ?? 0), 0),
  }));
}

export function workerRoutes(ctx: ServerContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      url: '/api/v1/workers',
      summary: 'Live workers (their heartbeats)',
      tag: 'workers',
      access: 'read',
      responses: { 200: { description: 'workers', schema: WorkerList } },
      handler: async () => ({ workers: (await ctx.backend.listWorkers()).map(workerView) }),
    }),
    defineRoute({
      method: 'GET',
      url: '/api/v1/stats',
      summary: 'Totals, rates, processed/failed per minute (last hour) and per day (90 days), overall and per queue',
      tag: 'stats',
      access: 'read',
      responses: { 200: { description: 'statistics', schema: Stats } },
      handler: async () => {
        const [queues, workers] = await Promise.all([ctx.backend.listQueues(), ctx.backend.listWorkers()]);
        const perQueue = await Promise.all(
          queues.map(async (q) => {
            const [minutes, days] = await Promise.all([ctx.backend.minuteStats(q.name, MINUTES), ctx.backend.dailyStats(q.name, DAYS)]);
            return { name: q.name, processed: q.processed, failed: q.failed, minutes: minutePoints(minutes), days: dayPoints(days) };
          }),
        );
        const minutes = sum(perQueue.map((q) => q.minutes));
        const recent = minutes.slice(-RATE_MINUTES);
        const processedRecent = recent.reduce((n, p) => n + p.processed, 0);
        const failedRecent = recent.reduce((n, p) => n + p.failed, 0);
        return {
          totals: {
            processed: queues.reduce((n, q) => n + q.processed, 0),
            failed: queues.reduce((n, q) => n + q.failed, 0),
            queued: queues.reduce((n, q) => n + q.counts.queued, 0),
            running: queues.reduce((n, q) => n + q.counts.running, 0),
            dead: queues.reduce((n, q) => n + q.counts.dead, 0),
            workers: workers.length,
          },
          rates: {
            processed_per_minute: processedRecent / RATE_MINUTES,
            failed_per_minute: failedRecent / RATE_MINUTES,
            failure_ratio: processedRecent === 0 ? 0 : failedRecent / processedRecent,
          },
          minutes,
          days: sum(perQueue.map((q) => q.days)),
          queues: perQueue,
        };
      },
    }),
  ];
}
