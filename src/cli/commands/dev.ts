/**
 * `taskline dev`: everything in one process on the embedded store — today a worker with the
 * example handlers and the scheduler with the example schedules (dev-scheduler.ts). The HTTP API
 * and dashboard join here as they are built; until then the banner says they are not running.
 */
import type { Command } from 'commander';
import { Option } from 'commander';
import { basename, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { VERSION } from '../../version.js';
import { positiveInt } from '../args.js';
import type { Backend } from '../../backend/contract.js';
import type { Worker } from '../../worker/worker.js';
import type { Scheduler } from '../../scheduler/scheduler.js';
import type { CliContext } from '../context.js';
import { withContext } from '../run.js';
import { listenForShutdown } from '../signals.js';
import { storeLocation } from '../../backend/connect.js';
import { TasklineError } from '../../core/errors.js';

interface DevOptions {
  concurrency: number;
}

export function registerDevCommand(program: Command): void {
  program
    .command('dev')
    .description('run everything in one process on the embedded store: a worker with the example handlers, the scheduler with the example schedules')
    .addOption(new Option('--concurrency <n>', 'tasks run at once').default(10).argParser(positiveInt(10_000)))
    .action(async (options: DevOptions, command: Command) =>
      withContext(command, async (ctx) => {
        // Loaded here, not at start-up: other commands need neither the worker nor the examples.
        const [{ Worker }, { EXAMPLE_QUEUES, registerExamples }, { exampleOptionsFromEnv, outboxDir }, { reportAttempts, runUntilSignal }] = await Promise.all([
          import('../../worker/worker.js'),
          import('../../examples/handlers.js'),
          import('../../examples/options.js'),
          import('../worker-runner.js'),
        ]);
        const { startDevScheduler } = await import('../dev-scheduler.js');
        const examples = exampleOptionsFromEnv();
        const backend = await ctx.backend({ create: true });
        const worker = new Worker(backend, { concurrency: options.concurrency, queues: EXAMPLE_QUEUES });
        const types = registerExamples(worker, examples);
        reportAttempts(ctx, worker);
        const scheduling = await startDevScheduler(ctx, backend);
        const api = await startDevApi(ctx, backend, worker, scheduling.scheduler);
        const store = ctx.settings.backend.startsWith('sqlite:')
          ? `${ctx.backendLabel} (embedded, ${resolve(ctx.settings.backend.slice('sqlite:'.length))})`
          : ctx.backendLabel;
        // Listening before "ready" is printed: a signal right after it stops gracefully.
        const shutdown = listenForShutdown();
        // Started before the banner, which names the leader; its first fires follow the banner.
        await scheduling.start();
        if (ctx.out.json) {
          ctx.out.event({
            event: 'started', version: VERSION, backend: ctx.backendLabel, worker: { id: worker.id, queues: EXAMPLE_QUEUES, concurrency: options.concurrency },
            handlers: types, dataDir: examples.dataDir, mail: examples.smtpUrl ? 'smtp' : outboxDir(examples), scheduler: scheduling.json, api: api.json, dashboard: api.dashboard, at: Date.now(),
          });
        } else {
          ctx.out.line(`taskline dev ${VERSION}`);
          ctx.out.line(`  store       ${store}`);
          ctx.out.line(`  worker      ${worker.id}: queues ${EXAMPLE_QUEUES}, concurrency ${options.concurrency}`);
          ctx.out.line(`  handlers    ${types.join(', ')}`);
          ctx.out.line(`  app data    ${examples.appDatabase} (sessions, synced records); reports and images in ${examples.dataDir}`);
          ctx.out.line(`  mail        ${examples.smtpUrl ? `SMTP ${examples.smtpUrl.replace(/\/\/[^@/]*@/, '//***@')}` : `${outboxDir(examples)} (set SMTP_URL to send for real)`}`);
          for (const line of scheduling.lines) ctx.out.line(line);
          ctx.out.line(api.line);
          if (api.dashboard) ctx.out.line(`  dashboard   ${api.dashboard}`);
          ctx.out.line(`  try         ${invocation()} enqueue report:generate '{"title":"Demo"}' --definitions ${definitionsPath()} --wait`);
          ctx.out.line('ready — Ctrl-C stops (running tasks finish first)');
        }
        scheduling.report(); // after the banner, so that its events follow it
        await runUntilSignal(ctx, worker, [scheduling, api], shutdown);
      }),
    );
}

/** The task center's HTTP API on PORT, sharing the worker's metrics; a busy port ends dev with one line. */
async function startDevApi(ctx: CliContext, backend: Backend, worker: Worker, scheduler: Scheduler) {
  const [{ startTaskCenter }, { instrumentWorker }] = await Promise.all([
    import('../../server/task-center.js'),
    import('../../observability/worker-metrics.js'),
  ]);
  const registry = instrumentWorker(worker);
  try {
    const center = await startTaskCenter({ backend, storeAddress: storeLocation(ctx.settings.backend), port: ctx.settings.port, apiToken: ctx.settings.apiToken, readToken: ctx.settings.readToken, registry, scheduler });
    return {
      stop: () => center.stop(),
      line: `  http api    ${center.url}/api/v1 · metrics ${center.url}/metrics · OpenAPI ${center.url}/openapi.json`,
      json: { running: true, url: center.url },
      dashboard: `${center.url}/`,
    };
  } catch (error) {
    // A dev without its API would leave the README's curl commands talking to whatever holds the port.
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new TasklineError('TL_INVALID_CONFIG', `port ${ctx.settings.port} is in use (another taskline dev or server?): stop that one, or give this one another port with PORT=<port>`, { cause: error });
    }
    throw error;
  }
}

/** The examples' definitions module, relative to the working directory when it is inside it. */
function definitionsPath(): string {
  const path = fileURLToPath(new URL('../../examples/definitions.js', import.meta.url));
  const fromHere = relative(process.cwd(), path);
  return fromHere.startsWith('..') ? path : fromHere;
}

/** How this CLI was started, so the printed command works as typed: `taskline` or `node dist/cli/main.js`. */
function invocation(): string {
  const script = process.argv[1] ?? 'taskline';
  if (basename(script) === 'taskline') return 'taskline';
  const fromHere = relative(process.cwd(), script);
  return `node ${fromHere.startsWith('..') ? script : fromHere}`;
}
