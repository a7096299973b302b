/** `taskline enqueue <type> [json] [--queue q] [--group g] [--delay 10s] [--id id] [--max-retries n] [--timeout 1m] [--wait]` */
import { Option, type Command } from 'commander';
import { Client } from '../../client/client.js';
import { TaskFailedError, isTasklineError } from '../../core/errors.js';
import type { EnqueueOptions } from '../../core/options.js';
import { duration, parsePayload, wholeNumber } from '../args.js';
import { loadDefinitions } from '../definitions-module.js';
import { CommandFailed, UsageError } from '../errors.js';
import { taskInfoJson } from '../json.js';
import { withContext } from '../run.js';

interface EnqueueCommandOptions {
  queue?: string;
  group?: string;
  delay?: number;
  id?: string;
  maxRetries?: number;
  timeout?: number;
  wait?: boolean;
  waitTimeout: number;
  definitions?: string;
}

export function registerEnqueueCommand(program: Command): void {
  program
    .command('enqueue')
    .description('enqueue a task; with --wait, wait for it to finish and print its result')
    .argument('<type>', 'task type, e.g. email:deliver')
    .argument('[json]', 'payload as JSON (default {}); - reads it from stdin')
    .option('--queue <name>', 'queue (default: DEFAULT_QUEUE, else "default")')
    .option('--group <group>', 'the task\'s group in its queue, e.g. a tenant id: the queue\'s group concurrency limits each group (default: none)')
    .addOption(new Option('--delay <duration>', 'run after a delay, e.g. 30s, 5m').argParser(duration()))
    .option('--id <id>', 'custom task id (a task with this id must not exist)')
    .addOption(new Option('--max-retries <n>', 'retries after the first attempt (default: MAX_RETRIES, else 3)').argParser(wholeNumber(1000)))
    .addOption(new Option('--timeout <duration>', 'time one attempt may run (default 30m)').argParser(duration(1)))
    .option('--definitions <module>', 'JS module exporting defineTask(…) definitions: the type\'s schema and default options apply')
    .option('--wait', 'wait until the task finishes; exit 1 if it dies or is cancelled')
    .addOption(new Option('--wait-timeout <duration>', 'give up waiting after this long').default(300_000, '5m').argParser(duration(1)))
    .action(async (type: string, json: string | undefined, options: EnqueueCommandOptions, command: Command) => {
      const payload = await parsePayload(json);
      const definition = options.definitions === undefined ? undefined : (await loadDefinitions(options.definitions)).get(type);
      if (options.definitions !== undefined && definition === undefined) {
        throw new UsageError(`--definitions ${options.definitions} defines no task type ${JSON.stringify(type)}`);
      }
      await withContext(command, async (ctx) => {
        const client = new Client(await ctx.backend(), {
          defaults: { maxRetries: ctx.settings.maxRetries, queue: ctx.settings.defaultQueue },
          checkRecordedTypes: true,
        });
        try {
          const enqueueOptions: EnqueueOptions = {};
          if (options.queue !== undefined) enqueueOptions.queue = options.queue;
          if (options.group !== undefined) enqueueOptions.group = options.group;
          if (options.delay !== undefined && options.delay > 0) enqueueOptions.delay = options.delay;
          if (options.id !== undefined) enqueueOptions.id = options.id;
          if (options.maxRetries !== undefined) enqueueOptions.maxRetries = options.maxRetries;
          if (options.timeout !== undefined) enqueueOptions.timeout = options.timeout;
          const info = await client.enqueue(definition ?? type, payload, enqueueOptions);
          if (options.wait !== true) {
            ctx.out.data(taskInfoJson(info));
            ctx.out.line(`${info.state} ${info.id}  ${info.type} on queue ${info.queue}`);
            return;
          }
          ctx.out.line(`${info.state} ${info.id}  ${info.type} on queue ${info.queue}; waiting…`);
          const started = Date.now();
          try {
            const result = await client.waitFor(info.id, { timeout: options.waitTimeout });
            ctx.out.data({ ...taskInfoJson(info), state: 'completed', result: result ?? null, error: null });
            ctx.out.line(`completed ${info.id} in ${Date.now() - started}ms`);
            ctx.out.line(`result ${JSON.stringify(result ?? null)}`);
          } catch (error) {
            if (error instanceof TaskFailedError) {
              const task = await client.getTask(info.id);
              ctx.out.data({ ...taskInfoJson(info), state: error.state, result: null, error: task?.lastError ?? null });
              throw error;
            }
            if (isTasklineError(error, 'TL_TIMEOUT')) {
              throw new CommandFailed(`task ${info.id} did not finish within ${options.waitTimeout} ms (it is still in the store; see taskline task get ${info.id})`);
            }
            throw error;
          }
        } finally {
          await client.close();
        }
      });
    });
}
