/** `taskline schedule ls|add|rm|pause|resume|trigger|preview|fires`. */
import { Option, type Command } from 'commander';
import { parseCron, upcoming } from '../../scheduler/cron.js';
import type { Schedule } from '../../core/schedule.js';
import { ScheduleService } from '../../scheduler/service.js';
import { formatLocal } from '../../scheduler/timezone.js';
import { positiveInt } from '../args.js';
import { UsageError } from '../errors.js';
import { fireJson, scheduleJson } from '../json.js';
import { clip, createOutput, formatDuration, formatTime, formatTable } from '../output.js';
import { withContext } from '../run.js';
import { nextFire } from '../start-scheduler.js';
import { registerScheduleAddCommand } from './schedule-add.js';
import { localTime, pointInTime } from './schedule-options.js';

const SUBCOMMANDS = 'ls, add, rm, pause, resume, trigger, preview or fires';

export function registerScheduleCommands(program: Command): void {
  const schedule = program
    .command('schedule')
    .description('cron schedules: list, add, remove, pause, resume, trigger, preview, fire history')
    .usage('<subcommand> [options]')
    .argument('[subcommand]')
    .action((subcommand: string | undefined) => {
      throw new UsageError(`schedule ${subcommand === undefined ? 'needs a subcommand' : `has no subcommand ${JSON.stringify(subcommand)}`}: ${SUBCOMMANDS}`);
    });

  schedule
    .command('ls')
    .description('schedules with their next fire (local time and UTC), last outcome and pause state')
    .action(async (_options: unknown, command: Command) =>
      withContext(command, async (ctx) => {
        const store = await ctx.backend();
        const [schedules, now] = await Promise.all([store.listSchedules(), store.now()]);
        const listed = schedules.map((s) => scheduleJson(s, nextFire(s, now)));
        ctx.out.data({ schedules: listed });
        if (ctx.out.json) return;
        if (listed.length === 0) {
          ctx.out.line('no schedules (add one with taskline schedule add, or list them under "schedules" in taskline.config.json)');
          return;
        }
        ctx.out.table(
          ['ID', 'CRON', 'TIME ZONE', 'NEXT (LOCAL)', 'NEXT (UTC)', 'LAST OUTCOME', 'PAUSED', 'TASK'],
          schedules.map((s, i) => [
            s.id, s.cron, s.timezone, localTime(listed[i].nextRunAt, s.timezone), formatTime(listed[i].nextRunAt), s.state.lastOutcome ?? '-', pausedText(s),
            `${s.task.type} → ${s.task.queue}${s.source === 'api' ? '' : ` (${s.source})`}`,
          ]),
        );
      }),
    );

  registerScheduleAddCommand(schedule);

  schedule
    .command('rm')
    .description('delete a schedule (its fire history stays; a new schedule with the id starts a new generation)')
    .argument('<id>', 'schedule id')
    .action(async (id: string, _options: unknown, command: Command) =>
      withContext(command, async (ctx) => {
        const service = new ScheduleService(await ctx.backend());
        const existing = await service.get(id);
        await service.delete(id);
        ctx.out.data({ id, deleted: true, source: existing.source });
        ctx.out.line(`deleted schedule ${id}`);
        if (existing.source === 'config') ctx.out.line('  it is listed in the config file: it comes back at the next start of dev or server unless removed there');
        if (existing.source === 'dev') ctx.out.line('  it is an example of taskline dev: it comes back at the next start of dev (a config-file schedule of the same id replaces it)');
      }),
    );

  schedule
    .command('pause')
    .description('stop firing a schedule (fires while paused are handled by its catch-up policy on resume)')
    .argument('<id>', 'schedule id')
    .option('--note <text>', 'why it is paused (shown in ls)')
    .option('--until <time>', 'resume by itself then: ISO-8601 with a zone (2026-01-05T09:00:00Z), epoch ms, or a duration from now (2h, 3d)')
    .action(async (id: string, options: { note?: string; until?: string }, command: Command) =>
      withContext(command, async (ctx) => {
        // Checked before the store is opened: a bad value is a usage error whatever the store.
        if (options.until !== undefined) pointInTime('--until', options.until, { relativeTo: 0 });
        const store = await ctx.backend();
        const until = options.until === undefined ? null : pointInTime('--until', options.until, { relativeTo: await store.now() });
        const paused = await new ScheduleService(store).pause(id, { note: options.note ?? null, until });
        ctx.out.data(scheduleJson(paused, null));
        ctx.out.line(`paused schedule ${id}${paused.pausedUntil === null ? '' : ` until ${formatTime(paused.pausedUntil)}`}${paused.pauseNote ? `: ${paused.pauseNote}` : ''}`);
      }),
    );

  schedule
    .command('resume')
    .description('fire a paused schedule again')
    .argument('<id>', 'schedule id')
    .action(async (id: string, _options: unknown, command: Command) =>
      withContext(command, async (ctx) => {
        const store = await ctx.backend();
        const resumed = await new ScheduleService(store).resume(id);
        const next = nextFire(resumed, await store.now());
        ctx.out.data(scheduleJson(resumed, next));
        ctx.out.line(`resumed schedule ${id}; next fire ${localTime(next, resumed.timezone)} (${formatTime(next)})`);
      }),
    );

  schedule
    .command('trigger')
    .description('enqueue a run of a schedule now, outside its cron times (also while paused)')
    .argument('<id>', 'schedule id')
    .action(async (id: string, _options: unknown, command: Command) =>
      withContext(command, async (ctx) => {
        const service = new ScheduleService(await ctx.backend());
        const existing = await service.get(id);
        const result = await service.trigger(id);
        ctx.out.data({ id, fireId: result.fireId, outcome: result.outcome, taskId: result.taskId, type: existing.task.type, queue: existing.task.queue });
        ctx.out.line(
          result.taskId === null
            ? `triggered schedule ${id}: ${result.outcome}`
            : `triggered schedule ${id}: ${result.outcome} task ${result.taskId}  ${existing.task.type} on queue ${existing.task.queue}`,
        );
      }),
    );

  schedule
    .command('preview')
    .description('the next fire times of a cron expression, in its time zone and in UTC (needs no store)')
    .argument('<cron>', 'cron expression: 5 or 6 fields (seconds first), L W #, @daily …, @every 5m; quote it')
    .option('--tz, --timezone <zone>', 'IANA time zone (default UTC)')
    .addOption(new Option('--count <n>', 'how many fire times').default(10).argParser(positiveInt(1000)))
    .action((cron: string, options: { timezone?: string; count: number }, command: Command) => {
      const out = createOutput(command.optsWithGlobals<{ json?: boolean }>().json === true);
      const timezone = options.timezone ?? 'UTC';
      const times = upcoming(parseCron(cron, timezone), Date.now(), options.count);
      out.data({ cron, timezone, times: times.map((at) => ({ at, utc: new Date(at).toISOString(), local: formatLocal(at, timezone) })) });
      if (out.json) return;
      out.line(`${cron} in ${timezone}: next ${times.length} fire time${times.length === 1 ? '' : 's'}`);
      out.table(['#', 'LOCAL', 'UTC'], times.map((at, i) => [i + 1, localTime(at, timezone), formatTime(at)]));
    });

  schedule
    .command('fires')
    .description('fire history of a schedule, newest first: nominal time, enqueue time, lag, outcome, task')
    .argument('<id>', 'schedule id')
    .addOption(new Option('--limit <n>', 'fires shown').default(20).argParser(positiveInt(1000)))
    .action(async (id: string, options: { limit: number }, command: Command) =>
      withContext(command, async (ctx) => {
        const service = new ScheduleService(await ctx.backend());
        const existing = await service.get(id);
        const fires = (await service.fires(id, { limit: options.limit })).map(fireJson);
        ctx.out.data({ id, fires });
        if (ctx.out.json) return;
        if (fires.length === 0) {
          ctx.out.line(`schedule ${id} has not fired yet`);
          return;
        }
        ctx.out.table(
          ['NOMINAL (LOCAL)', 'NOMINAL (UTC)', 'ENQUEUED (UTC)', 'LAG', 'OUTCOME', 'TASK', 'TASK STATE'],
          fires.map((f) => [
            localTime(f.nominalAt, existing.timezone), formatTime(f.nominalAt), formatTime(f.enqueuedAt), f.lagMs === null ? '-' : formatDuration(f.lagMs), f.outcome,
            f.taskId ?? '-', f.taskState ?? '-',
          ]),
        );
      }),
    );
}

function pausedText(schedule: Schedule): string {
  if (!schedule.paused) return 'no';
  const until = schedule.pausedUntil === null ? '' : ` until ${formatTime(schedule.pausedUntil)}`;
  return `yes${until}${schedule.pauseNote ? `: ${clip(schedule.pauseNote, 40)}` : ''}`;
}

/** The schedule table of `taskline dev` and `server`: id, cron, zone, task, next fire. */
export function scheduleLines(schedules: { schedule: Schedule; nextRunAt: number | null }[]): string[] {
  const rows = schedules.map(({ schedule: s, nextRunAt }) => [
    s.id, s.cron, s.timezone, `${s.task.type} → ${s.task.queue}`, s.paused ? 'paused' : nextRunAt === null ? '-' : `${localTime(nextRunAt, s.timezone)} (${formatTime(nextRunAt)})`,
  ]);
  if (rows.length === 0) return [];
  return formatTable(['ID', 'CRON', 'TIME ZONE', 'TASK', 'NEXT FIRE'], rows).trimEnd().split('\n');
}
