/**
 * Schedule operations for code, the CLI and the HTTP API: CRUD, pause/resume,
 * trigger now, backfill, preview, fire history, and reconciling the config file's schedules.
 */
import type { FireRecord, FireResult, SchedulingBackend } from '../backend/contract.js';
import { TasklineError } from '../core/errors.js';
import { parseCron, upcoming } from './cron.js';
import { fireBatch, fireRequest, planFires } from './plan.js';
import { RecordedTypes } from '../client/recorded-types.js';
import { fireId, isUnreadable, type Schedule, type ScheduleDefinition, type ScheduleInput, type ScheduleSource } from '../core/schedule.js';
import { PAUSE_NOTE, validateSchedule, validateScheduleId } from './schedule.js';
import { formatLocal } from './timezone.js';
import { text, time } from '../core/validate.js';

const MAX_BACKFILL = 1_000;
const MAX_PREVIEW = 1_000;

export interface PreviewTime {
  utc: string;
  local: string;
  at: number;
}

export interface ScheduleServiceOptions {
  /** Check each schedule's task payload against the JSON Schema its workers recorded (the task center and CLI do). Default false. */
  checkRecordedTypes?: boolean;
}

export class ScheduleService {
  private readonly recorded: RecordedTypes | null;

  constructor(
    readonly backend: SchedulingBackend,
    options: ScheduleServiceOptions = {},
  ) {
    this.recorded = options.checkRecordedTypes === true ? new RecordedTypes(backend) : null;
  }

  async create(input: ScheduleInput): Promise<Schedule> {
    return this.backend.createSchedule(await this.validate(input));
  }

  /** The schedule's definition, its task's payload checked against the recorded type when asked to. */
  private async validate(input: unknown, source: ScheduleSource = 'api'): Promise<ScheduleDefinition> {
    const definition = validateSchedule(input, source);
    if (this.recorded) {
      await this.recorded.check(definition.task.type, JSON.stringify(definition.task.payload ?? null)).catch((error: unknown) => {
        throw error instanceof TasklineError ? new TasklineError(error.code, `task: ${error.message}`, { cause: error }) : error;
      });
    }
    return definition;
  }

  /** Replaces a schedule's definition; applies to fires after now. */
  async update(id: string, input: Omit<ScheduleInput, 'id'> & { id?: string }): Promise<Schedule> {
    if (input.id !== undefined && input.id !== id) {
      throw new TasklineError('TL_INVALID_SCHEDULE', `the body's id ${JSON.stringify(input.id)} differs from the schedule id ${JSON.stringify(id)}`);
    }
    const definition = await this.validate({ ...input, id });
    await this.flushDueFires(id);
    return this.backend.updateSchedule(definition);
  }

  async upsert(input: ScheduleInput, source: ScheduleSource = 'api'): Promise<Schedule> {
    const definition = await this.validate(input, source);
    await this.flushDueFires(definition.id);
    return this.backend.upsertSchedule(definition);
  }

  async delete(id: string): Promise<void> {
    if (!(await this.backend.deleteSchedule(validateScheduleId(id)))) throw notFound(id);
  }

  async get(id: string): Promise<Schedule> {
    const schedule = await this.backend.getSchedule(validateScheduleId(id));
    if (!schedule) throw notFound(id);
    return schedule;
  }

  async list(): Promise<Schedule[]> {
    return this.backend.listSchedules();
  }

  async pause(id: string, options: { note?: string | null; until?: number | Date | string | null } = {}): Promise<Schedule> {
    let until: number | null = null;
    if (options.note !== undefined && options.note !== null) text('TL_INVALID_SCHEDULE', 'pause note', options.note, PAUSE_NOTE);
    if (options.until !== undefined && options.until !== null) {
      const now = await this.backend.now();
      until = time('TL_INVALID_SCHEDULE', 'pause until', options.until, { now, strings: true });
      if (until <= now) throw new TasklineError('TL_INVALID_SCHEDULE', `pause until must be in the future, got ${new Date(until).toISOString()} (now ${new Date(now).toISOString()})`);
    }
    return this.backend.pauseSchedule(validateScheduleId(id), { note: options.note ?? null, until });
  }

  async resume(id: string): Promise<Schedule> {
    return this.backend.resumeSchedule(validateScheduleId(id));
  }

  /** Enqueues a run now, outside the cron times (works while paused; the watermark stays). */
  async trigger(id: string): Promise<FireResult> {
    const schedule = await this.get(id);
    const now = await this.backend.now();
    const manualId = `${fireId(schedule.id, schedule.generation, now)}:manual`;
    const [[result]] = await this.backend.fire([this.batch(schedule, [[now, manualId]])]);
    return result;
  }

  /** Fires every nominal time in [from, to] that has not fired yet (at most 1,000). */
  async backfill(id: string, range: { from: number | string | Date; to: number | string | Date }): Promise<FireResult[]> {
    const schedule = await this.get(id);
    const from = toMs('from', range.from);
    const to = toMs('to', range.to);
    if (to < from) throw new TasklineError('TL_INVALID_SCHEDULE', 'backfill: "to" must not be before "from"');
    const now = await this.backend.now();
    if (to > now) throw new TasklineError('TL_INVALID_SCHEDULE', 'backfill: "to" must not be in the future');
    const cron = parseCron(schedule.cron, schedule.timezone, { anchor: schedule.startAt ?? 0 });
    const times: [number, string][] = [];
    let cursor = from - 1;
    for (;;) {
      const next = cron.next(cursor);
      if (next === null || next > to) break;
      if (times.length === MAX_BACKFILL) {
        throw new TasklineError('TL_INVALID_SCHEDULE', `backfill: the range holds more than ${MAX_BACKFILL} fires; use a shorter range`);
      }
      times.push([next, fireId(schedule.id, schedule.generation, next)]);
      cursor = next;
    }
    if (times.length === 0) return [];
    const [results] = await this.backend.fire([this.batch(schedule, times)]);
    return results;
  }

  private batch(schedule: Schedule, fires: [number, string][]) {
    return fireBatch(
      { ...schedule, state: { ...schedule.state, lastTaskId: null } },
      fires.map(([nominalAt, id]) => fireRequest(schedule, nominalAt, 'enqueue', id)),
      { overlap: 'allow' },
    );
  }

  /**
   * Before a definition changes, fires of the old one that are due but not yet handled are
   * handled now (enqueued or recorded as missed, by the catch-up policy), so an update never
   * drops a fire silently. Fire ids make this safe beside a running leader.
   */
  private async flushDueFires(id: string): Promise<void> {
    const schedule = await this.backend.getSchedule(id);
    // A stored definition that cannot be read (it never fired) has nothing due.
    if (!schedule || isUnreadable(schedule)) return;
    const [now, { downtime }] = await Promise.all([this.backend.now(), this.backend.listSchedulers()]);
    // Late, not missed, unless no scheduler ran then (as the scheduler plans; see plan.ts).
    const plan = planFires(schedule, parseCron(schedule.cron, schedule.timezone, { anchor: schedule.startAt ?? 0 }), now, undefined, downtime ?? undefined);
    if (plan.fires.length === 0) return;
    await this.backend.fire([fireBatch(schedule, plan.fires.map((f) => fireRequest(schedule, f.nominalAt, f.action)))]);
  }

  /** The next `count` fire times of an expression, in UTC and in its time zone. */
  async preview(input: { cron: string; timezone?: string; count?: number; from?: number }): Promise<PreviewTime[]> {
    const count = input.count ?? 5;
    if (!Number.isInteger(count) || count < 1 || count > MAX_PREVIEW) {
      throw new TasklineError('TL_INVALID_SCHEDULE', `preview count must be a whole number from 1 to ${MAX_PREVIEW}, got ${JSON.stringify(input.count)}`);
    }
    const timezone = input.timezone ?? 'UTC';
    const cron = parseCron(input.cron, timezone);
    const from = input.from ?? (await this.backend.now());
    return upcoming(cron, from, count).map((at) => ({ at, utc: new Date(at).toISOString(), local: formatLocal(at, timezone) }));
  }

  async fires(id: string, options: { limit?: number } = {}): Promise<FireRecord[]> {
    const schedule = await this.get(id);
    const limit = options.limit ?? 50;
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new TasklineError('TL_INVALID_ARGUMENT', 'fires limit must be from 1 to 1000');
    return this.backend.listFires(schedule.id, schedule.task.queue, limit);
  }

  /**
   * Makes the schedules `source` owns (`config`: the config file's; `dev`: taskline dev's
   * examples) match `inputs`: upserts each by id (taking it over from another owner), deletes the
   * ones of that owner that are no longer listed. Schedules of other owners are left alone.
   * Everything is validated before anything is changed.
   */
  async reconcile(inputs: ScheduleInput[], source: Exclude<ScheduleSource, 'api'> = 'config'): Promise<{ upserted: string[]; removed: string[] }> {
    const definitions = inputs.map((input) => validateSchedule(input, source));
    const ids = new Set<string>();
    for (const d of definitions) {
      if (ids.has(d.id)) throw new TasklineError('TL_INVALID_SCHEDULE', `schedule ${d.id} is listed twice in the config`);
      ids.add(d.id);
    }
    const existing = await this.backend.listSchedules();
    const removed: string[] = [];
    for (const schedule of existing) {
      if (schedule.source === source && !ids.has(schedule.id)) {
        await this.backend.deleteSchedule(schedule.id);
        removed.push(schedule.id);
      }
    }
    for (const definition of definitions) {
      const current = existing.find((s) => s.id === definition.id);
      if (current && sameDefinition(current, definition)) continue;
      if (current) await this.flushDueFires(definition.id);
      await this.backend.upsertSchedule(definition);
    }
    return { upserted: definitions.map((d) => d.id), removed };
  }
}

function sameDefinition(current: Schedule, next: ReturnType<typeof validateSchedule>): boolean {
  const pick = (s: Omit<ReturnType<typeof validateSchedule>, 'paused' | 'pauseNote' | 'pausedUntil'>) =>
    JSON.stringify([s.cron, s.timezone, s.task, s.overlap, s.catchUp, s.jitter, s.startAt, s.endAt, s.source]);
  return pick(current) === pick(next) && (!next.paused || current.paused);
}

function notFound(id: string): TasklineError {
  return new TasklineError('TL_SCHEDULE_NOT_FOUND', `no schedule with id ${JSON.stringify(id)}`);
}

function toMs(name: string, value: number | string | Date): number {
  return time('TL_INVALID_SCHEDULE', `backfill: ${name}`, value, { strings: true });
}
