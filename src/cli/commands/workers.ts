/** `taskline workers`: the live worker registry (entries expire when heartbeats stop). */
import type { Command } from 'commander';
import { workerJson } from '../json.js';
import { formatDuration } from '../output.js';
import { withContext } from '../run.js';

export function registerWorkersCommand(program: Command): void {
  program
    .command('workers')
    .description('workers with a recent heartbeat: host, pid, queues, concurrency, running tasks')
    .action(async (_options: unknown, command: Command) =>
      withContext(command, async (ctx) => {
        const backend = await ctx.backend();
        const [workers, now] = await Promise.all([backend.listWorkers(), backend.now()]);
        const list = workers.map(workerJson).sort((a, b) => a.startedAt - b.startedAt);
        ctx.out.data({ workers: list });
        if (ctx.out.json) return;
        if (list.length === 0) {
          ctx.out.line('no workers running (start one with taskline worker --handlers <module>, or taskline dev)');
          return;
        }
        ctx.out.table(
          ['ID', 'HOST', 'PID', 'QUEUES', 'CONCURRENCY', 'RUNNING', 'UPTIME', 'HEARTBEAT'],
          list.map((w) => [
            w.id, w.host, w.pid, w.queues.join(','), w.concurrency, w.running.length, formatDuration(now - w.startedAt),
            w.lastHeartbeatAt === null ? '-' : `${formatDuration(Math.max(0, now - w.lastHeartbeatAt))} ago`,
          ]),
        );
      }),
    );
}
