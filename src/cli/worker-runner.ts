/**
 * Runs a Worker in the foreground for `taskline worker` and `taskline dev`: prints each attempt's
 * outcome, and stops gracefully on the first SIGTERM/SIGINT (exit 0).
 */
import type { Worker } from '../worker/worker.js';
import type { TaskMeta } from '../worker/context.js';
import type { CliContext } from './context.js';
import { formatDuration, formatTime } from './output.js';
import { listenForShutdown, type ShutdownSignal } from './signals.js';

/** Prints attempt outcomes: a line each for people, an NDJSON event each with --json. */
export function reportAttempts(ctx: CliContext, worker: Worker): void {
  const started = new Map<string, number>();
  worker.use(async (taskCtx, next) => {
    started.set(taskCtx.task.id, Date.now());
    return next();
  });
  const took = (task: TaskMeta) => {
    const at = started.get(task.id);
    started.delete(task.id);
    return at === undefined ? null : Date.now() - at;
  };
  const print = (event: string, task: TaskMeta, extra: { next?: string; error?: string }) => {
    const durationMs = took(task);
    if (ctx.out.json) {
      ctx.out.event({ event, id: task.id, type: task.type, queue: task.queue, attempt: task.attempt, durationMs, ...extra, at: Date.now() });
      return;
    }
    const detail = extra.error === undefined ? '' : `  ${extra.next ?? ''}: ${extra.error}`;
    ctx.out.line(
      `${formatTime(Date.now())}  ${event.padEnd(9)}  ${task.type}  ${task.id}  queue=${task.queue} attempt=${task.attempt}${durationMs === null ? '' : ` ${formatDuration(durationMs)}`}${detail}`,
    );
  };
  worker.on('completed', (task) => print('completed', task, {}));
  worker.on('failed', (task, error, next) => print('failed', task, { next, error: error instanceof Error ? error.message : String(error) }));
  worker.on('stale', (task) => print('stale', task, { next: 'recovered elsewhere', error: 'lease lost; the result was not written' }));
  worker.on('error', (error, where) => {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`taskline: worker ${where}: ${message.split('\n')[0]}\n`);
  });
}

/**
 * Starts the worker, waits for a shutdown signal, stops it gracefully and closes the store.
 * `before` (e.g. a scheduler) is stopped before the worker: senders before receivers.
 * `shutdown` is listening already when the command printed "ready" before calling this (a
 * SIGTERM right after "ready" must stop gracefully, not kill the process).
 */
export async function runUntilSignal(
  ctx: CliContext, worker: Worker, before: { stop(): Promise<void> }[] = [], shutdown: ShutdownSignal = listenForShutdown(),
): Promise<void> {
  try {
    await worker.start();
    const signal = await shutdown.received;
    if (ctx.out.json) ctx.out.event({ event: 'stopping', signal, at: Date.now() });
    else process.stderr.write(`taskline: ${signal}: stopping — running tasks may finish (send it again to exit now)\n`);
    for (const component of before) await component.stop();
    await worker.stop();
    await ctx.close();
    if (ctx.out.json) ctx.out.event({ event: 'stopped', at: Date.now() });
    else process.stderr.write('taskline: stopped\n');
  } finally {
    shutdown.dispose();
  }
}
