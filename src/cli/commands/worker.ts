/** `taskline worker --handlers <module> [--concurrency N] [--queues critical=6,default=3,low=1] [--strict]` */
import { hostname } from 'node:os';
import { Option, type Command } from 'commander';
import { parseQueues } from '../../worker/queue-picker.js';
import { duration, positiveInt, wholeNumber } from '../args.js';
import { loadHandlersModule } from '../handlers-module.js';
import { withContext } from '../run.js';
import { listenForShutdown } from '../signals.js';

/** Addresses that mean "every interface". */
const ANY_ADDRESS = new Set(['0.0.0.0', '::']);

interface WorkerCommandOptions {
  handlers: string;
  concurrency?: number;
  queues?: string;
  strict?: boolean;
  shutdownTimeout?: number;
  metricsPort?: number;
  log?: 'text' | 'json';
}

export function registerWorkerCommand(program: Command): void {
  program
    .command('worker')
    .description('run a worker with the handlers of a module until SIGTERM/SIGINT')
    .requiredOption('--handlers <module>', 'JS module: default export { [type]: handler } or (worker) => …')
    .addOption(new Option('--concurrency <n>', 'tasks run at once (default 10)').argParser(positiveInt(10_000)))
    .option('--queues <list>', 'queues with weights, e.g. critical=6,default=3,low=1 (default: the default queue)')
    .option('--strict', 'strict priority: always drain the highest-weight queue first')
    .addOption(new Option('--shutdown-timeout <duration>', 'how long a graceful stop waits for running tasks (default 30s)').argParser(duration()))
    .addOption(new Option('--metrics-port <n>', 'port of Prometheus /metrics on every interface (0.0.0.0), 0 for none (env METRICS_PORT; default 9090)').argParser(wholeNumber(65_535)))
    .addOption(new Option('--log <format>', 'task lines as text or JSON (pino)').choices(['text', 'json']).default('text'))
    .action(async (options: WorkerCommandOptions, command: Command) =>
      withContext(command, async (ctx) => {
        const queues = options.queues ?? ctx.settings.defaultQueue;
        parseQueues(queues); // a bad --queues is reported before anything is loaded or opened
        const register = await loadHandlersModule(options.handlers);
        const [{ Worker }, { reportAttempts, runUntilSignal }] = await Promise.all([import('../../worker/worker.js'), import('../worker-runner.js')]);
        const worker = new Worker(await ctx.backend(), {
          concurrency: options.concurrency,
          queues,
          strict: options.strict === true,
          shutdownTimeout: options.shutdownTimeout,
        });
        await register(worker);
        const [{ instrumentWorker }, { serveMetrics }, { createLogger, logWorkerTasks }] = await Promise.all([
          import('../../observability/worker-metrics.js'),
          import('../../observability/metrics-endpoint.js'),
          import('../../observability/logging.js'),
        ]);
        const registry = instrumentWorker(worker);
        if (options.log === 'json') logWorkerTasks(worker, createLogger('taskline-worker'));
        else reportAttempts(ctx, worker);
        const metricsPort = options.metricsPort ?? ctx.settings.metricsPort;
        const metrics = metricsPort > 0
          ? await serveMetrics(registry, metricsPort).catch((error: unknown) => {
            process.stderr.write(`taskline: worker metrics not served on port ${metricsPort}: ${error instanceof Error ? error.message : String(error)}\n`);
            return null;
          })
          : null;
        // Listening before "ready" is printed: a signal right after it stops gracefully.
        const shutdown = listenForShutdown();
        const description = {
          id: worker.id, host: hostname(), pid: process.pid, backend: ctx.backendLabel, queues: worker.queues, concurrency: options.concurrency ?? 10, strict: options.strict === true,
          metrics: metrics ? { host: metrics.host, port: metrics.port, url: metrics.url } : null,
        };
        if (ctx.out.json) ctx.out.event({ event: 'started', ...description, at: Date.now() });
        else {
          ctx.out.line(`taskline worker ${worker.id} on ${ctx.backendLabel}`);
          ctx.out.line(`  queues ${queues}${options.strict ? ' (strict priority)' : ''} · concurrency ${description.concurrency} · handlers from ${options.handlers}`);
          if (metrics) ctx.out.line(`  metrics ${metrics.url}${ANY_ADDRESS.has(metrics.host) ? ' (every interface)' : ''}`);
          ctx.out.line('  ready — SIGTERM/SIGINT stops gracefully');
        }
        try {
          await runUntilSignal(ctx, worker, [], shutdown);
        } finally {
          await metrics?.close();
        }
      }),
    );
}
