/** `taskline task get|ls|run|archive|delete|cancel` */
import { Option, type Command } from 'commander';
import type { Backend, BulkState } from '../../backend/contract.js';
import { TasklineError } from '../../core/errors.js';
import { validateQueueName, validateTaskId } from '../../core/options.js';
import type { TaskRecord, TaskState } from '../../core/task.js';
import { positiveInt, taskState } from '../args.js';
import type { CliContext } from '../context.js';
import { UsageError } from '../errors.js';
import { taskJson, taskSummaryJson } from '../json.js';
import { clip, formatDuration, formatTime } from '../output.js';
import { withContext } from '../run.js';

interface ListOptions {
  queue?: string;
  state: TaskState;
  limit: number;
  cursor?: string;
}

interface BulkOptions {
  all?: boolean;
  queue?: string;
  state?: TaskState;
}

type Operation = 'run' | 'archive' | 'delete';

const OPERATIONS: Record<Operation, { description: string; bulkStates: BulkState[]; defaultState: BulkState; past: string }> = {
  run: { description: 'run a task now (from dead, scheduled, retrying or cancelled)', bulkStates: ['dead', 'scheduled', 'retrying', 'cancelled'], defaultState: 'dead', past: 'queued' },
  archive: { description: 'move a waiting task (queued, scheduled, retrying) to dead', bulkStates: ['queued', 'scheduled', 'retrying'], defaultState: 'retrying', past: 'archived' },
  delete: { description: 'delete a task that is not running', bulkStates: ['scheduled', 'queued', 'retrying', 'completed', 'dead', 'cancelled'], defaultState: 'dead', past: 'deleted' },
};

export function registerTaskCommands(program: Command): void {
  const task = program
    .command('task')
    .description('inspect and operate on tasks')
    .usage('<subcommand> [options]')
    .argument('[subcommand]')
    .action((subcommand: string | undefined) => {
      throw new UsageError(`task ${subcommand === undefined ? 'needs a subcommand' : `has no subcommand ${JSON.stringify(subcommand)}`}: get, ls, run, archive, delete or cancel`);
    });

  task
    .command('get')
    .description('show a task: state, payload, result, error, attempts, logs')
    .argument('<id>', 'task id')
    .action(async (id: string, _options: unknown, command: Command) => {
      validateTaskId(id);
      await withContext(command, async (ctx) => {
        const record = await (await ctx.backend()).getTask(id);
        if (record === null) throw new TasklineError('TL_TASK_NOT_FOUND', `no task with id ${JSON.stringify(id)}`);
        ctx.out.data(taskJson(record));
        if (!ctx.out.json) printTask(ctx, record);
      });
    });

  task
    .command('ls')
    .description('list the tasks of a queue in one state, oldest first, a page at a time')
    .requiredOption('--state <state>', 'scheduled, queued, running, retrying, completed, dead or cancelled', taskState)
    .option('--queue <name>', 'queue (default: DEFAULT_QUEUE, else "default")')
    .addOption(new Option('--limit <n>', 'tasks per page').default(20).argParser(positiveInt(1000)))
    .option('--cursor <cursor>', 'continue after a previous page (its nextCursor)')
    .action(async (options: ListOptions, command: Command) =>
      withContext(command, async (ctx) => {
        const queue = validateQueueName(options.queue ?? ctx.settings.defaultQueue);
        const page = await (await ctx.backend()).listTasks(queue, options.state, { limit: options.limit, cursor: options.cursor });
        ctx.out.data({ queue, state: options.state, tasks: page.tasks.map(taskSummaryJson), nextCursor: page.nextCursor });
        if (ctx.out.json) return;
        if (page.tasks.length === 0) {
          ctx.out.line(`no ${options.state} tasks in queue ${queue}`);
          return;
        }
        ctx.out.table(
          ['ID', 'TYPE', 'STATE', 'ATTEMPT', 'CREATED', 'NEXT RUN', 'ERROR'],
          page.tasks.map((t) => [t.id, t.type, t.state, `${t.attempt}/${t.maxRetries + 1}`, formatTime(t.createdAt), formatTime(t.nextRunAt), clip(t.lastError, 50)]),
        );
        if (page.nextCursor !== null) ctx.out.line(`more: taskline task ls --queue ${queue} --state ${options.state} --cursor ${page.nextCursor}`);
      }),
    );

  for (const [name, spec] of Object.entries(OPERATIONS) as [Operation, (typeof OPERATIONS)[Operation]][]) {
    task
      .command(name)
      .description(`${spec.description}; --all acts on every task of a queue in a state`)
      .argument('[id]', 'task id')
      .option('--all', 'act on every task of --queue in --state')
      .option('--queue <name>', 'with --all: the queue (default: DEFAULT_QUEUE, else "default")')
      .addOption(new Option('--state <state>', `with --all: ${spec.bulkStates.join(', ')} (default ${spec.defaultState})`).argParser(taskState))
      .action(async (id: string | undefined, options: BulkOptions, command: Command) => {
        checkTarget(name, id, options, spec.bulkStates);
        await withContext(command, async (ctx) => {
          const backend = await ctx.backend();
          if (id !== undefined) {
            await single(backend, name, id);
            ctx.out.data({ id, action: name, ok: true });
            ctx.out.line(`${spec.past} ${id}`);
            return;
          }
          const queue = validateQueueName(options.queue ?? ctx.settings.defaultQueue);
          const state = (options.state ?? spec.defaultState) as BulkState;
          const count = await bulk(backend, name, queue, state);
          ctx.out.data({ queue, state, action: name, count });
          ctx.out.line(`${spec.past} ${count} ${state} task${count === 1 ? '' : 's'} of queue ${queue}`);
        });
      });
  }

  task
    .command('cancel')
    .description('cancel a waiting task now, or ask a running one to stop (its handler’s signal aborts)')
    .argument('<id>', 'task id')
    .action(async (id: string, _options: unknown, command: Command) => {
      validateTaskId(id);
      await withContext(command, async (ctx) => {
        const outcome = await (await ctx.backend()).cancelTask(id);
        ctx.out.data({ id, action: 'cancel', outcome });
        ctx.out.line(outcome === 'cancelled' ? `cancelled ${id}` : `cancel requested for running task ${id}; its handler's signal is aborted`);
      });
    });
}

function checkTarget(name: Operation, id: string | undefined, options: BulkOptions, states: BulkState[]): void {
  if (id !== undefined) {
    if (options.all === true || options.queue !== undefined || options.state !== undefined) {
      throw new UsageError(`task ${name}: give either a task id or --all [--queue q] [--state s], not both`);
    }
    validateTaskId(id);
    return;
  }
  if (options.all !== true) throw new UsageError(`task ${name}: give a task id, or --all [--queue q] [--state s] to act on a whole state`);
  if (options.state !== undefined && !(states as string[]).includes(options.state)) {
    throw new UsageError(`task ${name} --all: --state ${options.state} is not accepted; give one of ${states.join(', ')}`);
  }
}

async function single(backend: Backend, name: Operation, id: string): Promise<void> {
  if (name === 'run') await backend.runTask(id);
  else if (name === 'archive') await backend.archiveTask(id);
  else await backend.deleteTask(id);
}

async function bulk(backend: Backend, name: Operation, queue: string, state: BulkState): Promise<number> {
  if (name === 'run') return backend.runAll(queue, state);
  if (name === 'archive') return backend.archiveAll(queue, state);
  return backend.deleteAll(queue, state);
}

function printTask(ctx: CliContext, task: TaskRecord): void {
  const rows: [string, string][] = [
    ['id', task.id],
    ['type', task.type],
    ['queue', task.queue],
    ['state', task.state + (task.cancelRequested ? ' (cancel requested)' : '')],
    ['attempt', `${task.attempt} of ${task.maxRetries + 1}`],
    ['created', formatTime(task.createdAt)],
    ['started', formatTime(task.startedAt)],
    ['finished', formatTime(task.finishedAt)],
    ['next run', formatTime(task.nextRunAt)],
    ['timeout', formatDuration(task.timeout)],
    ['worker', task.workerId ?? '-'],
    ['payload', JSON.stringify(task.payload)],
    ['result', task.result === null || task.result === undefined ? '-' : JSON.stringify(task.result)],
    ['error', task.lastError ?? '-'],
  ];
  if (task.progress !== null && task.progress !== undefined) rows.push(['progress', JSON.stringify(task.progress)]);
  const width = Math.max(...rows.map(([key]) => key.length));
  for (const [key, value] of rows) ctx.out.line(`${key.padEnd(width)}  ${value}`);
  if (task.attempts.length > 0) {
    ctx.out.line('\nattempts');
    ctx.out.table(
      ['#', 'STARTED', 'TOOK', 'OUTCOME', 'WORKER', 'ERROR'],
      task.attempts.map((a) => [a.attempt, formatTime(a.startedAt), a.finishedAt === null ? '-' : formatDuration(a.finishedAt - a.startedAt), a.outcome, a.workerId ?? '-', clip(a.error, 60)]),
    );
  }
  if (task.logs.length > 0) {
    ctx.out.line('\nlogs');
    for (const line of task.logs) ctx.out.line(`${formatTime(line.at)}  ${line.message}`);
  }
}
