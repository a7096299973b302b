/** `taskline task get|ls|search|run|archive|delete|cancel` (search: task-search.ts) */
import { Option, type Command } from 'commander';
import type { Backend, BulkState, TaskPage } from '../../backend/contract.js';
import { isTasklineError, TasklineError } from '../../core/errors.js';
import { validateQueueName, validateTaskId } from '../../core/options.js';
import { TASK_STATES, type TaskRecord, type TaskState } from '../../core/task.js';
import { ACCEPTED_STATES, acceptedStatesText } from '../../core/transitions.js';
import type { Waiting } from '../../core/why-waiting.js';
import { whyTaskWaits } from '../../client/why-waiting.js';
import { positiveInt, taskState } from '../args.js';
import type { CliContext } from '../context.js';
import { UsageError } from '../errors.js';
import { taskJson, taskSummaryJson } from '../json.js';
import { clip, formatDuration, formatTime } from '../output.js';
import { withContext } from '../run.js';
import { registerTaskSearch } from './task-search.js';

/** The order of each state's list, as the backends keep it (backend/contract.ts listTasks). */
const LIST_ORDER = 'Within a state: queued oldest first (the order workers claim them), scheduled and retrying soonest due first, running by lease expiry, completed, dead and cancelled newest first.';

interface ListOptions {
  queue?: string;
  state?: TaskState;
  limit: number;
  cursor?: string;
}

interface BulkOptions {
  all?: boolean;
  queue?: string;
  state?: TaskState;
}

type Operation = 'run' | 'archive' | 'delete';

/** The states an action takes in bulk (a bulk action never takes running tasks: core/transitions.ts). */
const bulkStates = (operation: Operation) => ACCEPTED_STATES[operation].filter((state): state is BulkState => state !== 'running');

const OPERATIONS: Record<Operation, { description: string; bulkStates: BulkState[]; defaultState: BulkState; past: string }> = {
  run: { description: `run a task now (from ${acceptedStatesText('run')})`, bulkStates: bulkStates('run'), defaultState: 'dead', past: 'queued' },
  archive: { description: `move a waiting task (${acceptedStatesText('archive')}) to dead`, bulkStates: bulkStates('archive'), defaultState: 'retrying', past: 'archived' },
  delete: { description: 'delete a task that is not running', bulkStates: bulkStates('delete'), defaultState: 'dead', past: 'deleted' },
};

export function registerTaskCommands(program: Command): void {
  const task = program
    .command('task')
    .description('inspect and operate on tasks')
    .usage('<subcommand> [options]')
    .argument('[subcommand]')
    .action((subcommand: string | undefined) => {
      throw new UsageError(`task ${subcommand === undefined ? 'needs a subcommand' : `has no subcommand ${JSON.stringify(subcommand)}`}: get, ls, search, run, archive, delete or cancel`);
    });

  task
    .command('get')
    .description('show a task: state, payload, result, error, attempts, logs')
    .argument('<id>', 'task id')
    .action(async (id: string, _options: unknown, command: Command) => {
      validateTaskId(id);
      await withContext(command, async (ctx) => {
        const backend = await ctx.backend();
        const record = await backend.getTask(id);
        if (record === null) throw new TasklineError('TL_TASK_NOT_FOUND', `no task with id ${JSON.stringify(id)}`);
        const waiting = await whyTaskWaits(backend, record);
        ctx.out.data({ ...taskJson(record), waiting });
        if (!ctx.out.json) printTask(ctx, record, waiting);
      });
    });

  task
    .command('ls')
    .summary('list the tasks of a queue: every state, or one with --state')
    .description(`list the tasks of a queue, a page of each state in the order ${TASK_STATES.join(', ')}; --state lists one state. ${LIST_ORDER}`)
    .addOption(new Option('--state <state>', `only this state: ${TASK_STATES.join(', ')} (default: every state, in that order)`).argParser(taskState))
    .option('--queue <name>', 'queue (default: DEFAULT_QUEUE, else "default")')
    .addOption(new Option('--limit <n>', 'tasks per page (of each state)').default(20).argParser(positiveInt(1000)))
    .option('--cursor <cursor>', 'with --state: continue after a previous page (its nextCursor)')
    .action(async (options: ListOptions, command: Command) => {
      if (options.cursor !== undefined && options.state === undefined) {
        throw new UsageError('task ls: --cursor continues the list of one state; give the --state it came with');
      }
      await withContext(command, async (ctx) => {
        const queue = validateQueueName(options.queue ?? ctx.settings.defaultQueue);
        const backend = await ctx.backend();
        const states = options.state === undefined ? TASK_STATES : [options.state];
        const pages = [];
        for (const state of states) pages.push({ state, ...(await listPage(backend, queue, state, options.limit, options.cursor)) });
        if (options.state === undefined) ctx.out.data({ queue, states: pages.map((p) => ({ state: p.state, tasks: p.tasks.map(taskSummaryJson), nextCursor: p.nextCursor })) });
        else ctx.out.data({ queue, state: options.state, tasks: pages[0].tasks.map(taskSummaryJson), nextCursor: pages[0].nextCursor });
        if (ctx.out.json) return;
        const tasks = pages.flatMap((p) => p.tasks);
        if (tasks.length === 0) {
          ctx.out.line(`no ${options.state === undefined ? '' : `${options.state} `}tasks in queue ${queue}`);
          return;
        }
        ctx.out.table(
          ['ID', 'TYPE', 'STATE', 'ATTEMPT', 'CREATED', 'NEXT RUN', 'ERROR'],
          tasks.map((t) => [t.id, t.type, t.state, `${t.attempt}/${t.maxRetries + 1}`, formatTime(t.createdAt), formatTime(t.nextRunAt), clip(t.lastError, 50)]),
        );
        for (const page of pages) {
          if (page.nextCursor !== null) ctx.out.line(`more ${page.state}: taskline task ls --queue ${queue} --state ${page.state} --limit ${options.limit} --cursor ${page.nextCursor}`);
        }
      });
    });

  registerTaskSearch(task);

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

/** One page; a full page's cursor is kept only when a task follows it, so "more" means more. */
async function listPage(backend: Backend, queue: string, state: TaskState, limit: number, cursor: string | undefined): Promise<TaskPage> {
  const page = await backend.listTasks(queue, state, { limit, cursor });
  if (page.nextCursor === null) return page;
  const after = await backend.listTasks(queue, state, { limit: 1, cursor: page.nextCursor });
  return after.tasks.length === 0 ? { tasks: page.tasks, nextCursor: null } : page;
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
  if (name === 'run') {
    await backend.runTask(id).catch(async (error: unknown) => {
      throw (await workflowNodeRunError(backend, id, error)) ?? error;
    });
  } else if (name === 'archive') {
    await backend.archiveTask(id);
  } else {
    await backend.deleteTask(id);
  }
}

/**
 * A finished workflow node's task refused by `run`, with the command that runs it again (the
 * store's message names the library call and the HTTP route); null for any other error.
 */
async function workflowNodeRunError(backend: Backend, id: string, error: unknown): Promise<TasklineError | null> {
  if (!isTasklineError(error, 'TL_INVALID_STATE') || !/\bnode of a workflow\b/.test(error.message)) return null;
  const links = (await backend.getTask(id).catch(() => null))?.links;
  if (links?.workflowId === undefined) return null;
  const node = links.workflowNode === undefined ? '' : `node ${JSON.stringify(links.workflowNode)} of `;
  return new TasklineError(
    'TL_INVALID_STATE',
    `cannot run task ${id}: it runs ${node}workflow ${links.workflowId}; run the workflow's failed nodes again with: taskline workflow retry ${links.workflowId}`,
    { cause: error },
  );
}

async function bulk(backend: Backend, name: Operation, queue: string, state: BulkState): Promise<number> {
  if (name === 'run') return backend.runAll(queue, state);
  if (name === 'archive') return backend.archiveAll(queue, state);
  return backend.deleteAll(queue, state);
}

function printTask(ctx: CliContext, task: TaskRecord, waiting: Waiting | null): void {
  const rows: [string, string][] = [
    ['id', task.id],
    ['type', task.type],
    ['queue', task.queue],
    ...(typeof task.group === 'string' ? [['group', task.group] as [string, string]] : []),
    ['state', task.state + (task.cancelRequested ? ' (cancel requested)' : '')],
    ...(waiting ? [['waiting', waiting.message] as [string, string]] : []),
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
  const links = task.links ?? {};
  if (typeof links.workflowId === 'string') rows.push(['workflow', `${links.workflowId}${typeof links.workflowNode === 'string' ? `, node ${links.workflowNode}` : ' (its onFinish task)'}`]);
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
