/**
 * The scheduler part of `taskline dev`: the example schedules and the config file's
 * schedules, reconciled as config-owned, then a Scheduler firing them; and the banner lines.
 */
import type { Backend } from '../backend/contract.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import { exampleSchedules } from '../examples/schedules.js';
import { scheduleLines } from './commands/schedule.js';
import type { CliContext } from './context.js';
import { reconcileLine, reportFires, schedulerBanner, startScheduler } from './start-scheduler.js';

export interface DevScheduler {
  running: boolean;
  /** The scheduler, so the task center can follow its fires (metrics, events). */
  scheduler: Scheduler;
  /** Starts firing and waits for the first check-in: the banner can then name the leader. */
  start(): Promise<void>;
  /** Prints fires and leadership changes from now on (after the banner). */
  report(): void;
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
    start: false,
  });
  const { scheduler, reconciled, schedules, fromFile } = started;
  const removed = reconciled.removed.length === 0 ? '' : `; removed ${reconciled.removed.join(', ')} (no longer in the config)`;
  const count = `${schedules.length} schedule${schedules.length === 1 ? '' : 's'}${removed}`;
  const dev: DevScheduler = {
    running: true,
    scheduler,
    start: async () => {
      scheduler.start();
      const banner = await schedulerBanner(scheduler);
      dev.lines[0] = `  scheduler   ${banner.line}: ${count}`;
      Object.assign(dev.json as Record<string, unknown>, banner.json);
    },
    report: () => reportFires(ctx, scheduler),
    stop: () => scheduler.stop(),
    lines: [
      `  scheduler   not started (${scheduler.id}): ${count}`,
      `  schedules   examples owned by dev; ${reconcileLine(ctx.settings, fromFile)}`,
      ...scheduleLines(schedules).map((line) => `    ${line}`),
    ],
    json: {
      running: true,
      id: scheduler.id,
      reconciled,
      schedules: schedules.map(({ schedule, nextRunAt }) => ({ id: schedule.id, cron: schedule.cron, timezone: schedule.timezone, type: schedule.task.type, queue: schedule.task.queue, paused: schedule.paused, source: schedule.source, nextRunAt })),
    },
  };
  return dev;
}
