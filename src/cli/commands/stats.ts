/** `taskline stats [--watch] [--interval 2s]`: totals per queue and recent rates. */
import { Option, type Command } from 'commander';
import type { Backend } from '../../backend/contract.js';
import { duration } from '../args.js';
import type { CliContext } from '../context.js';
import { queueJson } from '../json.js';
import { formatDuration, formatTime } from '../output.js';
import { withContext } from '../run.js';
import { listenForShutdown } from '../signals.js';

/** Rates are averaged over this many minutes. */
const RATE_WINDOW_MINUTES = 5;

interface StatsOptions {
  watch?: boolean;
  interval: number;
}

export function registerStatsCommand(program: Command): void {
  program
    .command('stats')
    .description(`totals per queue, processed/failed today and per minute (last ${RATE_WINDOW_MINUTES} min), workers`)
    .option('--watch', 'refresh until Ctrl-C (with --json: one JSON line per refresh)')
    .addOption(new Option('--interval <duration>', 'refresh interval of --watch').default(2_000, '2s').argParser(duration(200)))
    .action(async (options: StatsOptions, command: Command) =>
      withContext(command, async (ctx) => {
        const backend = await ctx.backend();
        if (options.watch !== true) {
          const stats = await collectStats(backend);
          ctx.out.data(stats);
          printStats(ctx, stats);
          return;
        }
        await watch(ctx, backend, options.interval);
      }),
    );
}

async function watch(ctx: CliContext, backend: Backend, interval: number): Promise<void> {
  const shutdown = listenForShutdown();
  const stopped = shutdown.received.then(() => 'stop' as const);
  try {
    for (;;) {
      const stats = await collectStats(backend);
      if (ctx.out.json) ctx.out.event(stats);
      else {
        if (process.stdout.isTTY) process.stdout.write('\x1b[2J\x1b[H');
        printStats(ctx, stats);
        ctx.out.line(`(refreshing every ${formatDuration(interval)}; Ctrl-C stops)`);
      }
      let timer: NodeJS.Timeout | undefined;
      const tick = new Promise<'tick'>((resolve) => (timer = setTimeout(() => resolve('tick'), interval)));
      const next = await Promise.race([tick, stopped]);
      clearTimeout(timer);
      if (next === 'stop') return;
    }
  } finally {
    shutdown.dispose();
  }
}

export type Stats = Awaited<ReturnType<typeof collectStats>>;

export async function collectStats(backend: Backend) {
  const [queues, workers, now] = await Promise.all([backend.listQueues(), backend.listWorkers(), backend.now()]);
  const perQueue = await Promise.all(
    queues.map(async (queue) => {
      const [days, minutes] = await Promise.all([backend.dailyStats(queue.name, 1), backend.minuteStats(queue.name, RATE_WINDOW_MINUTES)]);
      const today = days[days.length - 1] ?? { processed: 0, failed: 0 };
      const recent = minutes.reduce((sum, m) => ({ processed: sum.processed + m.processed, failed: sum.failed + m.failed }), { processed: 0, failed: 0 });
      return {
        ...queueJson(queue),
        processedToday: today.processed,
        failedToday: today.failed,
        processedPerMinute: round(recent.processed / RATE_WINDOW_MINUTES),
        failedPerMinute: round(recent.failed / RATE_WINDOW_MINUTES),
      };
    }),
  );
  const sum = (pick: (q: (typeof perQueue)[number]) => number) => perQueue.reduce((total, q) => total + pick(q), 0);
  return {
    at: now,
    workers: workers.length,
    totals: {
      scheduled: sum((q) => q.counts.scheduled),
      queued: sum((q) => q.counts.queued),
      running: sum((q) => q.counts.running),
      retrying: sum((q) => q.counts.retrying),
      completed: sum((q) => q.counts.completed),
      dead: sum((q) => q.counts.dead),
      cancelled: sum((q) => q.counts.cancelled),
      processed: sum((q) => q.processed),
      failed: sum((q) => q.failed),
      processedToday: sum((q) => q.processedToday),
      failedToday: sum((q) => q.failedToday),
      processedPerMinute: round(sum((q) => q.processedPerMinute)),
      failedPerMinute: round(sum((q) => q.failedPerMinute)),
    },
    queues: perQueue,
  };
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

function printStats(ctx: CliContext, stats: Stats): void {
  if (ctx.out.json) return;
  ctx.out.line(`${formatTime(stats.at)}  ${stats.workers} worker${stats.workers === 1 ? '' : 's'}  ${stats.queues.length} queue${stats.queues.length === 1 ? '' : 's'}`);
  const t = stats.totals;
  const row = (name: string, q: Omit<Stats['totals'], 'scheduled' | 'completed' | 'cancelled' | 'processed' | 'failed'> & { latency: string }) => [
    name, q.queued, q.running, q.retrying, q.dead, q.processedToday, q.failedToday, q.processedPerMinute, q.failedPerMinute, q.latency,
  ];
  ctx.out.table(
    ['QUEUE', 'QUEUED', 'RUNNING', 'RETRYING', 'DEAD', 'DONE TODAY', 'FAILED TODAY', 'DONE/MIN', 'FAILED/MIN', 'LATENCY'],
    [
      ...stats.queues.map((q) => row(q.name + (q.paused ? ' (paused)' : ''), { ...q, ...q.counts, latency: formatDuration(q.latencyMs) })),
      row('total', { ...t, latency: '' }),
    ],
  );
}
