/** `taskline schedulers`: the live scheduler instances and which one leads (entries expire when check-ins stop). */
import type { Command } from 'commander';
import { schedulerJson } from '../json.js';
import { formatDuration } from '../output.js';
import { withContext } from '../run.js';

export function registerSchedulersCommand(program: Command): void {
  program
    .command('schedulers')
    .description('scheduler instances with a recent check-in: which one leads, its epoch, last tick, fires in the last minute')
    .action(async (_options: unknown, command: Command) =>
      withContext(command, async (ctx) => {
        const backend = await ctx.backend();
        const [{ instances, lease }, now] = await Promise.all([backend.listSchedulers(), backend.now()]);
        const list = instances.map(schedulerJson);
        ctx.out.data({ schedulers: list, leader: lease === null ? null : { id: lease.holder, epoch: lease.epoch, expiresAt: lease.expiresAt, firedThrough: lease.firedThrough } });
        if (ctx.out.json) return;
        if (list.length === 0) {
          ctx.out.line('no schedulers running (taskline server and taskline dev run one)');
          return;
        }
        ctx.out.table(
          ['ID', 'HOST', 'PID', 'ROLE', 'EPOCH', 'UPTIME', 'LAST TICK', 'FIRES/MIN'],
          list.map((s) => [
            s.id, s.host, s.pid, s.leader ? 'leader' : 'standby', s.epoch ?? '-', formatDuration(now - s.startedAt),
            `${formatDuration(Math.max(0, now - s.lastTickAt))} ago`, s.firesLastMinute,
          ]),
        );
        if (lease === null) ctx.out.line('no leader right now: the next check-in of a scheduler takes the lease');
      }),
    );
}
