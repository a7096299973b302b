/** `taskline queue ls|pause|resume` */
import type { Command } from 'commander';
import { validateQueueName } from '../../core/options.js';
import { UsageError } from '../errors.js';
import { queueJson } from '../json.js';
import { formatDuration } from '../output.js';
import { withContext } from '../run.js';

export function registerQueueCommands(program: Command): void {
  const queue = program
    .command('queue')
    .description('list, pause and resume queues')
    .usage('<subcommand> [options]')
    .argument('[subcommand]')
    .action((subcommand: string | undefined) => {
      throw new UsageError(`queue ${subcommand === undefined ? 'needs a subcommand' : `has no subcommand ${JSON.stringify(subcommand)}`}: ls, pause or resume`);
    });

  queue
    .command('ls')
    .description('queues with their counts per state, totals and latency')
    .action(async (_options: unknown, command: Command) =>
      withContext(command, async (ctx) => {
        const queues = (await (await ctx.backend()).listQueues()).map(queueJson);
        ctx.out.data({ queues });
        if (ctx.out.json) return;
        if (queues.length === 0) {
          ctx.out.line('no queues yet (a queue appears when its first task is enqueued)');
          return;
        }
        ctx.out.table(
          ['QUEUE', 'STATUS', 'SCHEDULED', 'QUEUED', 'RUNNING', 'RETRYING', 'COMPLETED', 'DEAD', 'CANCELLED', 'PROCESSED', 'FAILED', 'LATENCY'],
          queues.map((q) => [
            q.name, q.paused ? 'paused' : 'active', q.counts.scheduled, q.counts.queued, q.counts.running, q.counts.retrying, q.counts.completed, q.counts.dead,
            q.counts.cancelled, q.processed, q.failed, formatDuration(q.latencyMs),
          ]),
        );
      }),
    );

  for (const action of ['pause', 'resume'] as const) {
    queue
      .command(action)
      .description(action === 'pause' ? 'stop workers claiming from a queue (it still accepts tasks)' : 'let workers claim from a paused queue again')
      .argument('<queue>', 'queue name')
      .action(async (name: string, _options: unknown, command: Command) => {
        validateQueueName(name);
        await withContext(command, async (ctx) => {
          const backend = await ctx.backend();
          if (action === 'pause') await backend.pauseQueue(name);
          else await backend.resumeQueue(name);
          ctx.out.data({ queue: name, paused: action === 'pause' });
          ctx.out.line(`${action === 'pause' ? 'paused' : 'resumed'} queue ${name}`);
        });
      });
  }
}
