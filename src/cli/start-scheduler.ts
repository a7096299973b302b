/**
 * The scheduler of the processes that run one (`taskline dev`, `taskline server`): reconcile the
 * config-owned schedules (upserted by id, removed when gone from the file), then start
 * a Scheduler. Any number of these processes may run on one store; one leads at a time.
 */
import { basename } from 'node:path';
import type { Backend } from '../backend/contract.js';
import { TasklineError } from '../core/errors.js';
import { parseCron } from '../scheduler/cron.js';
import { planFires } from '../scheduler/plan.js';
import { type Schedule, type ScheduleInput } from '../core/schedule.js';
import { validateSchedule } from '../scheduler/schedule.js';
import { Scheduler, type SchedulerOptions } from '../scheduler/scheduler.js';
import { ScheduleService } from '../scheduler/service.js';
import type { CliContext } from './context.js';
import { formatDuration, formatTime } from './output.js';

/** A schedule's next fire after `now` (store clock): null when paused, ended or never again. */
export function nextFire(schedule: Schedule, now: number): number | null {
  try {
    return planFires(schedule, parseCron(schedule.cron, schedule.timezone, { anchor: schedule.startAt ?? 0 }), now).nextRunAt;
  } catch {
    return null;
  }
}

/** What startScheduler needs of the settings: the `Settings` of the CLI fit. */
export interface SchedulerConfig {
  /** The config file's `schedules`, reconciled as config-owned. */
  schedules: ScheduleInput[];
  /** The scheduler's leader lease, ms (SCHEDULER_LEASE). */
  schedulerLeaseMs: number;
  /** How long a fire may be overdue before a standby fires it, ms (SCHEDULER_TAKEOVER_DELAY). */
  takeoverDelayMs: number;
  /** The config file, for error messages. */
  configFile: string | null;
}

export interface StartSchedulerOptions {
  /** Config-owned schedules reconciled with the file's (dev's examples); the file's win on the same id. Default: none. */
  defaults?: ScheduleInput[];
  /** Scheduler options; `leaseMs` and `takeoverDelayMs` default to the config's. */
  scheduler?: SchedulerOptions;
  /** Called before the scheduler starts, to attach listeners. */
  beforeStart?: (scheduler: Scheduler) => void;
  /** Start the scheduler now; false leaves `scheduler.start()` to the caller. Default true. */
  start?: boolean;
}

export interface Reconciled {
  upserted: string[];
  removed: string[];
}

export interface RunningScheduler {
  scheduler: Scheduler;
  service: ScheduleService;
  /** Schedules upserted and removed at start-up: the config file's, then dev's examples. */
  reconciled: Reconciled;
  /** The config file's reconcile; null without a config file (then no schedule is changed or removed). */
  fromFile: Reconciled | null;
  /** The `defaults`' reconcile (dev's examples, owned by `dev`); null without defaults. */
  fromDefaults: Reconciled | null;
  /** Every schedule of the store at start-up with its next fire. */
  schedules: { schedule: Schedule; nextRunAt: number | null }[];
}

/**
 * Reconciles the schedules the config file owns (only when there is a config file: without one
 * no schedule is changed or removed) and those of `defaults` (owned by `dev`; the file's win on
 * the same id), then starts a Scheduler (unless `start: false`). A schedule of the config file
 * that is not valid fails with TL_INVALID_CONFIG naming the file and the schedule, before
 * anything is changed. Stop it with `await scheduler.stop()`.
 */
export async function startScheduler(backend: Backend, config: SchedulerConfig, options: StartSchedulerOptions = {}): Promise<RunningScheduler> {
  const store = backend;
  const fileInputs = fileSchedules(config);
  const service = new ScheduleService(store);
  const fromFile = config.configFile === null ? null : await service.reconcile([...fileInputs.values()], 'config');
  const fromDefaults = options.defaults === undefined ? null : await service.reconcile(options.defaults.filter((input) => !fileInputs.has(input.id)), 'dev');
  const reconciled = {
    upserted: [...(fromFile?.upserted ?? []), ...(fromDefaults?.upserted ?? [])],
    removed: [...(fromFile?.removed ?? []), ...(fromDefaults?.removed ?? [])],
  };
  const now = await store.now();
  const schedules = (await store.listSchedules()).map((schedule) => ({ schedule, nextRunAt: nextFire(schedule, now) }));
  const scheduler = new Scheduler(store, { leaseMs: config.schedulerLeaseMs, takeoverDelayMs: config.takeoverDelayMs, ...options.scheduler });
  options.beforeStart?.(scheduler);
  if (options.start !== false) scheduler.start();
  return { scheduler, service, reconciled, fromFile, fromDefaults, schedules };
}

/** The config file's schedules by id, each checked (the error names the file and the schedule). */
function fileSchedules(config: SchedulerConfig): Map<string, ScheduleInput> {
  const where = config.configFile === null ? 'config' : basename(config.configFile);
  const fromFile = new Map<string, ScheduleInput>();
  config.schedules.forEach((input, index) => {
    const name = `${where}: schedules[${index}]${typeof input.id === 'string' ? ` (${input.id})` : ''}`;
    try {
      validateSchedule(input, 'config');
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new TasklineError('TL_INVALID_CONFIG', `${name}: ${message}`, { cause: error, details: { setting: 'schedules', source: 'file' } });
    }
    if (fromFile.has(input.id)) {
      throw new TasklineError('TL_INVALID_CONFIG', `${name}: the id ${JSON.stringify(input.id)} is listed twice`, { details: { setting: 'schedules', source: 'file' } });
    }
    fromFile.set(input.id, input);
  });
  return fromFile;
}

/** What a start-up reconcile did, for the banner: `upserted a, b; removed c`, or that nothing was touched. */
export function reconcileLine(config: SchedulerConfig, fromFile: Reconciled | null): string {
  if (fromFile === null) return 'no config file: no schedule was changed or removed (only a config file\'s schedules are reconciled)';
  const file = basename(config.configFile ?? 'config');
  const upserted = fromFile.upserted.length === 0 ? 'none listed' : `upserted ${fromFile.upserted.join(', ')}`;
  const removed = fromFile.removed.length === 0 ? '' : `; removed ${fromFile.removed.join(', ')} (no longer listed)`;
  return `${file}: ${upserted}${removed}`;
}

/** Prints fires and leadership changes: a line each for people, an NDJSON event each with --json. */
export function reportFires(ctx: CliContext, scheduler: Scheduler): void {
  scheduler.on('fire', (fire) => {
    if (ctx.out.json) {
      ctx.out.event({ event: 'fire', ...fire, at: Date.now() });
      return;
    }
    const by = fire.takeover ? ' (fired by this standby: the leader had not)' : '';
    ctx.out.line(`${formatTime(Date.now())}  ${'fire'.padEnd(9)}  ${fire.scheduleId}  ${fire.fireId}  ${fire.outcome} lag ${formatDuration(fire.lagMs)}${by}`);
  });
  scheduler.on('leader', (epoch) => {
    if (ctx.out.json) ctx.out.event({ event: 'leader', scheduler: scheduler.id, epoch, at: Date.now() });
    else ctx.out.line(`${formatTime(Date.now())}  ${'leader'.padEnd(9)}  ${scheduler.id} leads the schedulers (epoch ${epoch})`);
  });
  scheduler.on('follower', () => {
    if (ctx.out.json) ctx.out.event({ event: 'follower', scheduler: scheduler.id, at: Date.now() });
    else ctx.out.line(`${formatTime(Date.now())}  ${'follower'.padEnd(9)}  ${scheduler.id} stands by (another scheduler leads)`);
  });
  scheduler.on('error', (error) => {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`taskline: scheduler: ${message.split('\n')[0]}\n`);
  });
}

/** The banner's scheduler line: this instance, its settings, and who leads as of its first check-in. */
export async function schedulerBanner(scheduler: Scheduler): Promise<{ line: string; json: Record<string, unknown> }> {
  await scheduler.ready();
  const view = scheduler.view;
  const exact = (ms: number) => (ms % 1000 === 0 ? formatDuration(ms) : `${ms}ms`);
  const settings = `lease ${exact(scheduler.leaseMs)}, takeover after ${exact(scheduler.takeoverDelayMs)}`;
  const leader = view.leader === null
    ? 'no leader yet'
    : view.isLeader
      ? `leader: this instance (epoch ${view.epoch})`
      : `leader: ${view.leader} (epoch ${view.epoch}); this instance stands by`;
  return {
    line: `running (${scheduler.id}; ${settings}) — ${leader}`,
    json: { running: true, id: scheduler.id, leaseMs: scheduler.leaseMs, takeoverDelayMs: scheduler.takeoverDelayMs, leader: view.leader, epoch: view.epoch, isLeader: view.isLeader },
  };
}
