/** `taskline queue ls|pause|resume|keep|limit` */
import type { Command } from 'commander';
import {
  KEPT_STATES, LIMIT_NAMES, MAX_CONCURRENCY_LIMIT, MAX_KEEP, MAX_QUEUE_LENGTH, type Backend, type KeptState, type QueueInfo, type QueueLimits, type QueueLimitsUpdate,
} from '../../backend/contract.js';
import { TasklineError } from '../../core/errors.js';
import { validateQueueName } from '../../core/options.js';
import { rateText } from '../../core/why-waiting.js';
import { keepBound, limitCount, rateLimit } from '../args.js';
import { UsageError } from '../errors.js';
import { queueJson } from '../json.js';
import { formatDuration } from '../output.js';
import { withContext } from '../run.js';

export function registerQueueCommands(program: Command): void {
  const queue = program
    .command('queue')
    .description('list, pause and resume queues; bound the finished tasks they keep; limit their rate, concurrency and length')
    .usage('<subcommand> [options]')
    .argument('[subcommand]')
    .action((subcommand: string | undefined) => {
      throw new UsageError(`queue ${subcommand === undefined ? 'needs a subcommand' : `has no subcommand ${JSON.stringify(subcommand)}`}: ls, pause, resume, keep or limit`);
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
          ['QUEUE', 'STATUS', 'SCHEDULED', 'QUEUED', 'RUNNING', 'RETRYING', 'COMPLETED', 'DEAD', 'CANCELLED', 'PROCESSED', 'FAILED', 'LATENCY', 'LIMITS'],
          queues.map((q) => [
            q.name, q.paused ? 'paused' : 'active', q.counts.scheduled, q.counts.queued, q.counts.running, q.counts.retrying, q.counts.completed, q.counts.dead,
            q.counts.cancelled, q.processed, q.failed, formatDuration(q.latencyMs), shortLimits(q.limits),
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

  queue
    .command('keep')
    .description('show or set how many completed, dead and cancelled tasks a queue keeps at most (0: delete each as it finishes; none: no bound, only retention)')
    .argument('<queue>', 'queue name')
    .option('--completed <n|none>', 'most completed tasks kept', keepBound(MAX_KEEP))
    .option('--dead <n|none>', 'most dead tasks kept', keepBound(MAX_KEEP))
    .option('--cancelled <n|none>', 'most cancelled tasks kept', keepBound(MAX_KEEP))
    .action(async (name: string, options: Partial<Record<KeptState, number | 'none'>>, command: Command) => {
      validateQueueName(name);
      await withContext(command, async (ctx) => {
        const backend = await ctx.backend();
        const given = KEPT_STATES.filter((state) => options[state] !== undefined);
        const change = Object.fromEntries(given.map((state) => [state, options[state] === 'none' ? null : options[state]]));
        const keep = Object.keys(change).length > 0 ? await backend.setQueueKeep(name, change) : (await shownQueue(backend, name, 'its bounds')).keep;
        ctx.out.data({ queue: name, keep });
        ctx.out.line(`queue ${name} keeps ${KEPT_STATES.map((state) => `${state}: ${keep[state] === null ? 'no bound' : `at most ${keep[state]}`}`).join(', ')}`);
      });
    });

  queue
    .command('limit')
    .description(
      'show or set a queue\'s controls, held by the store and applied across all workers and producers: rate, concurrency, ' +
      'concurrency per enqueue group, and the most tasks waiting (none removes one)',
    )
    .argument('<queue>', 'queue name')
    .option('--rate <n/interval|none>', 'at most n tasks start in any interval (100/1s, 5/250ms, 1000/1m)', rateLimit)
    .option('--concurrency <n|none>', 'at most n tasks of the queue run at once', limitCount(MAX_CONCURRENCY_LIMIT))
    .option('--group-concurrency <n|none>', 'at most n tasks of one group (the enqueue option group) run at once', limitCount(MAX_CONCURRENCY_LIMIT))
    .option('--max-length <n|none>', 'at most n tasks wait (queued, scheduled, retrying); an enqueue past it is refused with TL_QUEUE_FULL', limitCount(MAX_QUEUE_LENGTH))
    .action(async (name: string, options: QueueLimitsUpdate, command: Command) => {
      validateQueueName(name);
      await withContext(command, async (ctx) => {
        const backend = await ctx.backend();
        const change = Object.fromEntries(LIMIT_NAMES.filter((limit) => options[limit] !== undefined).map((limit) => [limit, options[limit]]));
        const limits = Object.keys(change).length > 0 ? await backend.setQueueLimits(name, change) : (await shownQueue(backend, name, 'its limits')).limits;
        ctx.out.data({ queue: name, limits });
        ctx.out.line(`queue ${name}: ${describeLimits(limits)}`);
      });
    });
}

/** A queue to show (nothing is changed): TL_NOT_FOUND when the store has none of that name. */
async function shownQueue(backend: Backend, name: string, set: string): Promise<QueueInfo> {
  const info = await backend.getQueue(name);
  if (!info) throw new TasklineError('TL_NOT_FOUND', `no queue ${JSON.stringify(name)} (a queue appears when its first task is enqueued, or when ${set} are set)`);
  return info;
}

/** The limits set, in a table cell: `rate 100/1s, concurrency 10, group 2, max 100000`, or `-`. */
function shortLimits(limits: QueueLimits): string {
  const parts = [
    limits.rate === null ? null : `rate ${limits.rate.limit}/${formatDuration(limits.rate.intervalMs)}`,
    limits.concurrency === null ? null : `concurrency ${limits.concurrency}`,
    limits.groupConcurrency === null ? null : `group ${limits.groupConcurrency}`,
    limits.maxLength === null ? null : `max ${limits.maxLength}`,
  ].filter((part) => part !== null);
  return parts.length === 0 ? '-' : parts.join(', ');
}

/** The limits in words, for a line of output. */
export function describeLimits(limits: QueueLimits): string {
  const parts = [
    limits.rate === null ? 'rate: no limit' : `rate: ${rateText(limits.rate)}`,
    `concurrency: ${limits.concurrency ?? 'no limit'}`,
    `group concurrency: ${limits.groupConcurrency ?? 'no limit'}`,
    `max length: ${limits.maxLength ?? 'no limit'}`,
  ];
  return parts.join(', ');
}
