/** `taskline workflow run --file f.json [--wait] | ls [--state] | get <id> | cancel <id> | retry <id>` */
import { readFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { WORKFLOW_STATES, type WorkflowState } from '../../backend/contract.js';
import { validateWorkflowState } from '../../backend/shared.js';
import { Client, WorkflowFailedError } from '../../client/client.js';
import { fromGraphForm } from '../../client/workflow-graph.js';
import type { WorkflowInfo } from '../../client/workflow-plan.js';
import { TasklineError, isTasklineError } from '../../core/errors.js';
import { validateTaskId } from '../../core/options.js';
import { duration, positiveInt, readStdin } from '../args.js';
import type { CliContext } from '../context.js';
import { CommandFailed, UsageError } from '../errors.js';
import { clip, formatTime } from '../output.js';
import { quote } from '../../core/validate.js';
import { withContext } from '../run.js';

interface RunOptions {
  file?: string;
  wait?: boolean;
  waitTimeout: number;
}

function workflowState(value: string): WorkflowState {
  try {
    return validateWorkflowState(value);
  } catch (error) {
    throw new UsageError(`--state: ${(error as Error).message}`);
  }
}

function workflowJson(wf: WorkflowInfo) {
  return {
    id: wf.id, name: wf.name, state: wf.state, failFast: wf.failFast, createdAt: wf.createdAt, finishedAt: wf.finishedAt, onFinishTaskId: wf.onFinishTaskId,
    counts: wf.counts, nodes: wf.nodes,
  };
}

function countsText(counts: WorkflowInfo['counts']): string {
  return Object.entries(counts).map(([state, n]) => `${n} ${state}`).join(', ');
}

function printWorkflow(ctx: CliContext, wf: WorkflowInfo): void {
  ctx.out.line(`workflow ${wf.id}${wf.name ? ` (${wf.name})` : ''}: ${wf.state}`);
  ctx.out.line(`  created ${formatTime(wf.createdAt)}${wf.finishedAt === null ? '' : `, finished ${formatTime(wf.finishedAt)}`}; nodes: ${countsText(wf.counts)}`);
  ctx.out.table(
    ['NODE', 'STATE', 'TYPE', 'DEPENDS ON', 'TASK', 'RESULT / ERROR'],
    wf.nodes.map((n) => [n.id, n.waitingOn.length === 0 ? n.state : `${n.state} (waiting on ${n.waitingOn.join(',')})`, n.type, n.dependsOn.join(',') || '-', n.taskId ?? '-', clip(n.error ?? (n.result === null ? '' : JSON.stringify(n.result)), 50)]),
  );
}

async function withClient(ctx: CliContext, work: (client: Client) => Promise<void>): Promise<void> {
  const client = new Client(await ctx.backend(), { defaults: { maxRetries: ctx.settings.maxRetries, queue: ctx.settings.defaultQueue }, checkRecordedTypes: true });
  try {
    await work(client);
  } finally {
    await client.close();
  }
}

async function readGraph(file: string): Promise<unknown> {
  let text: string;
  try {
    text = file === '-' ? await readStdin() : await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`--file ${file}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new TasklineError('TL_INVALID_WORKFLOW', `--file ${file} is not JSON: ${(error as Error).message}`);
  }
}

export function registerWorkflowCommands(program: Command): void {
  const wf = program
    .command('workflow')
    .description('run and follow workflows (DAGs of tasks)')
    .usage('<subcommand> [options]')
    .argument('[subcommand]')
    .action((subcommand: string | undefined) => {
      throw new UsageError(`workflow ${subcommand === undefined ? 'needs a subcommand' : `has no subcommand ${JSON.stringify(subcommand)}`}: run, ls, get, cancel or retry`);
    });

  wf.command('run')
    .description('create a workflow from a JSON file in the graph form {id?, name?, failFast?, nodes:[{id, type, payload?, dependsOn?, runOnFailure?, queue?, …}], onFinish?}; with --wait, wait for it and print its results')
    .option('--file <path>', 'the workflow JSON (- for standard input)')
    .option('--wait', 'wait until the workflow finishes; exit 1 if it fails or is cancelled')
    .addOption(new Option('--wait-timeout <duration>', 'give up waiting after this long').default(300_000, '5m').argParser(duration(1)))
    .action(async (options: RunOptions, command: Command) => {
      if (options.file === undefined) throw new UsageError('workflow run needs --file <path> (a JSON workflow; - reads standard input)');
      const { root, options: wfOptions } = fromGraphForm(await readGraph(options.file));
      await withContext(command, (ctx) =>
        withClient(ctx, async (client) => {
          const { id } = await client.enqueueWorkflow(root, wfOptions);
          if (options.wait !== true) {
            ctx.out.data(workflowJson((await client.getWorkflow(id))!));
            ctx.out.line(`running workflow ${id}; follow it with: taskline workflow get ${id}`);
            return;
          }
          ctx.out.line(`running workflow ${id}; waiting…`);
          try {
            const results = await client.waitForWorkflow(id, { timeout: options.waitTimeout });
            ctx.out.data({ id, state: 'completed', results });
            ctx.out.line(`completed workflow ${id}`);
            for (const [node, result] of Object.entries(results)) ctx.out.line(`  ${node}: ${JSON.stringify(result ?? null)}`);
          } catch (error) {
            if (error instanceof WorkflowFailedError) {
              ctx.out.data(workflowJson(error.workflow));
              throw new CommandFailed(`${error.message} (each node: taskline workflow get ${id}; run its failed nodes again: taskline workflow retry ${id})`);
            }
            if (isTasklineError(error, 'TL_TIMEOUT')) throw new CommandFailed(`workflow ${id} did not finish within ${options.waitTimeout} ms (it goes on; see taskline workflow get ${id})`);
            throw error;
          }
        }),
      );
    });

  wf.command('ls')
    .description('list workflows, newest first')
    .addOption(new Option('--state <state>', `only this state: ${WORKFLOW_STATES.join(', ')}`).argParser(workflowState))
    .addOption(new Option('--limit <n>', 'workflows per page').default(20).argParser(positiveInt(1000)))
    .option('--cursor <cursor>', 'continue after a previous page (its nextCursor)')
    .action(async (options: { state?: WorkflowState; limit: number; cursor?: string }, command: Command) => {
      await withContext(command, (ctx) =>
        withClient(ctx, async (client) => {
          const page = await client.listWorkflows({ state: options.state, limit: options.limit, cursor: options.cursor }).catch((error: unknown) => {
            if (options.cursor !== undefined && isTasklineError(error, 'TL_INVALID_ARGUMENT') && error.message.startsWith('invalid cursor ')) {
              throw new UsageError(
                `workflow ls: invalid --cursor ${quote(options.cursor)}: give the cursor a previous page of the workflow list printed ("more: --cursor …", or nextCursor with --json), ` +
                  'with the same --state; leave --cursor out for the first page',
              );
            }
            throw error;
          });
          ctx.out.data({ workflows: page.workflows.map(({ nodes: _nodes, ...rest }) => rest), nextCursor: page.nextCursor });
          if (page.workflows.length === 0) {
            ctx.out.line(`no workflows${options.state ? ` ${options.state}` : ''}`);
            return;
          }
          ctx.out.table(['ID', 'NAME', 'STATE', 'NODES', 'CREATED', 'FINISHED'], page.workflows.map((w) => [w.id, w.name ?? '', w.state, countsText(w.counts), formatTime(w.createdAt), formatTime(w.finishedAt)]));
          if (page.nextCursor !== null) ctx.out.line(`more: --cursor ${page.nextCursor}`);
        }),
      );
    });

  wf.command('get')
    .description('show a workflow: its state and every node’s state, task, result or error')
    .argument('<id>', 'workflow id')
    .action(async (id: string, _options: unknown, command: Command) => {
      validateTaskId(id, 'workflow id');
      await withContext(command, (ctx) =>
        withClient(ctx, async (client) => {
          const found = await client.getWorkflow(id);
          if (found === null) throw new TasklineError('TL_WORKFLOW_NOT_FOUND', `no workflow with id ${JSON.stringify(id)}`);
          ctx.out.data(workflowJson(found));
          printWorkflow(ctx, found);
        }),
      );
    });

  for (const [name, description] of [
    ['cancel', 'cancel a running workflow: waiting nodes at once, running ones get their signal aborted'],
    ['retry', 'run a failed or cancelled workflow’s dead and cancelled nodes again, keeping completed results'],
  ] as const) {
    wf.command(name)
      .description(description)
      .argument('<id>', 'workflow id')
      .action(async (id: string, _options: unknown, command: Command) => {
        validateTaskId(id, 'workflow id');
        await withContext(command, (ctx) =>
          withClient(ctx, async (client) => {
            const after = name === 'cancel' ? await client.cancelWorkflow(id) : await client.retryWorkflow(id);
            ctx.out.data(workflowJson(after));
            ctx.out.line(name === 'cancel' ? `cancelling workflow ${id}: ${countsText(after.counts)}` : `retrying workflow ${id}: ${countsText(after.counts)}`);
          }),
        );
      });
  }
}
