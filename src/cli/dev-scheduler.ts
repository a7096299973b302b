/**
 * The scheduler part of `taskline dev`: the §13 example schedules and the config file's
 * schedules, reconciled as config-owned, then a Scheduler firing them; and the banner lines.
 */
import type { Backend } from '../backend/contract.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import { exampleSchedules } from '../examples/schedules.js';
import { scheduleLines } from './commands/schedule.js';
import type { CliContext } from './context.js';
import { formatDuration } from './output.js';
import { reportFires, startScheduler } from './start-scheduler.js';

export interface DevScheduler {
  running: boolean;
  /** The scheduler, so the task center can follow its fires (metrics, events). */
  scheduler: Scheduler;
  /** Starts firing (after the banner is printed). */
  start(): void;
  /** Stops the scheduler (nothing when it is not running). */
  stop(): Promise<void>;
  /** Banner lines for people. */
  lines: string[];
  /** The `scheduler` field of the --json `started` event. */
  json: unknown;
}

export async function startDevScheduler(ctx: CliContext, backend: Backend): Promise<DevScheduler> {
  const started = await startScheduler(backend, ctx.settings, {
    defaults: exampleSchedules(),
    beforeStart: (scheduler) => reportFires(ctx, scheduler),
    start: false,
  });
  const { scheduler, reconciled, schedules } = started;
  const removed = reconciled.removed.length === 0 ? '' : `; removed ${reconciled.removed.join(', ')} (no longer in the config)`;
  return {
    running: true,
    scheduler,
    start: () => scheduler.start(),
    stop: () => scheduler.stop(),
    lines: [
      `  scheduler   running (${scheduler.id}, leader lease ${formatDuration(ctx.settings.lockTtlMs)}): ${schedules.length} schedule${schedules.length === 1 ? '' : 's'}${removed}`,
      ...scheduleLines(schedules).map((line) => `    ${line}`),
    ],
    json: {
      running: true,
      id: scheduler.id,
      reconciled,
      schedules: schedules.map(({ schedule, nextRunAt }) => ({ id: schedule.id, cron: schedule.cron, timezone: schedule.timezone, type: schedule.task.type, queue: schedule.task.queue, paused: schedule.paused, source: schedule.source, nextRunAt })),
    },
  };
}
