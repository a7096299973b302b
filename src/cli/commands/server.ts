/** `taskline server [--port N] [--host H] [--insecure]`: the task center — HTTP API, scheduler, metrics, alerts. */
import { Option, type Command } from 'commander';
import { VERSION } from '../../version.js';
import { positiveInt } from '../args.js';
import { withContext } from '../run.js';
import { listenForShutdown } from '../signals.js';
import { storeLocation } from '../../backend/connect.js';

interface ServerCommandOptions {
  port?: number;
  host?: string;
  insecure?: boolean;
  scheduler?: boolean;
}

export function registerServerCommand(program: Command): void {
  program
    .command('server')
    .description('run the task center: the dashboard (/), HTTP API (/api/v1, /metrics, /healthz, /readyz, /openapi.json), scheduler and alerts')
    .addOption(new Option('--port <n>', 'HTTP port (env PORT; default 8080)').argParser(positiveInt(65_535)))
    .option('--host <address>', 'address to bind (default 127.0.0.1 without an API token, 0.0.0.0 with one)')
    .option('--insecure', 'allow a non-loopback --host without TASKLINE_API_TOKEN')
    .option('--no-scheduler', 'serve the API only; do not run the scheduler in this process')
    .action(async (options: ServerCommandOptions, command: Command) =>
      withContext(command, async (ctx) => {
        const [{ startTaskCenter }, { alertOptionsFromEnv }, { createLogger }, { reconcileLine, reportFires, schedulerBanner, startScheduler }] = await Promise.all([
          import('../../server/task-center.js'),
          import('../../server/alerts.js'),
          import('../../observability/logging.js'),
          import('../start-scheduler.js'),
        ]);
        // A refused binding is reported before anything is opened or started.
        const { Auth, bindAddress } = await import('../../server/auth.js');
        bindAddress({ host: options.host, auth: new Auth({ apiToken: ctx.settings.apiToken, readToken: ctx.settings.readToken }), insecure: options.insecure === true });
        const logger = createLogger('taskline-server');
        const alerts = alertOptionsFromEnv();
        const backend = await ctx.backend({ create: true });
        const scheduling = options.scheduler !== false
          ? await startScheduler(backend, ctx.settings)
          : null;
        const center = await startTaskCenter({
          backend,
          storeAddress: storeLocation(ctx.settings.backend),
          port: options.port ?? ctx.settings.port,
          host: options.host,
          insecure: options.insecure === true,
          apiToken: ctx.settings.apiToken,
          readToken: ctx.settings.readToken,
          scheduler: scheduling?.scheduler ?? null,
          logger,
          alerts,
        }).catch(async (error: unknown) => {
          await scheduling?.scheduler.stop();
          throw error;
        });
        const shutdown = listenForShutdown();
        try {
          const banner = scheduling ? await schedulerBanner(scheduling.scheduler) : null;
          if (ctx.out.json) ctx.out.event({ event: 'started', version: VERSION, url: center.url, backend: ctx.backendLabel, scheduler: center.scheduler !== null, schedulerStatus: banner?.json ?? null, reconciled: scheduling ? { fromFile: scheduling.fromFile } : null, at: Date.now() });
          else {
            ctx.out.line(`taskline server ${VERSION} on ${ctx.backendLabel}`);
            ctx.out.line(`  dashboard   ${center.url}/`);
            ctx.out.line(`  api         ${center.url}/api/v1 (OpenAPI at ${center.url}/openapi.json)`);
            ctx.out.line(`  metrics     ${center.url}/metrics · health ${center.url}/healthz · ready ${center.url}/readyz`);
            ctx.out.line(`  scheduler   ${banner?.line ?? 'off'}`);
            if (scheduling) ctx.out.line(`  schedules   ${reconcileLine(ctx.settings, scheduling.fromFile)}`);
            if (alerts) ctx.out.line(`  alerts      to ${alerts.webhooks.length} webhook(s)`);
            ctx.out.line('ready — SIGTERM/SIGINT stops');
          }
          // After the banner, which names the leader of the first check-in: later changes follow it.
          if (scheduling) reportFires(ctx, scheduling.scheduler);
          const signal = await shutdown.received;
          process.stderr.write(`taskline: ${signal}: stopping the task center\n`);
          await center.stop();
          await scheduling?.scheduler.stop();
          if (ctx.out.json) ctx.out.event({ event: 'stopped', at: Date.now() });
          else process.stderr.write('taskline: stopped\n');
        } finally {
          shutdown.dispose();
        }
      }),
    );
}
