/** Schedules, fires, the scheduler instances and locks on Redis (lua/schedule-*.lua, fire.lua, schedulers.lua, lock.lua). */
import { TasklineError } from '../../core/errors.js';
import { isTaskState } from '../../core/task.js';
import type { Schedule, ScheduleDefinition, ScheduleState } from '../../core/schedule.js';
import {
  MAX_DOWNTIME_GAPS,
  type FireBatch, type FireOutcome, type FireRecord, type FireResult, type LockStore, type SchedulerCheckIn, type SchedulerInstance, type SchedulerLease,
  type SchedulerList, type SchedulerStatus, type ScheduleChanges, type ScheduleStore, type ScheduleUpdate,
} from '../contract.js';
import { MAX_PAGE_LIMIT } from '../page-cursor.js';
import { checkStorableTasks, countWithin, decodeSchedulerInstance, noteUnreadable, parseStoredDefinition, parseStoredObject, validateLockKey } from '../shared.js';
import { encodeRecordFragment } from './codec.js';
import { chunksByQueue } from './batches.js';
import type { RedisConnection } from './connection.js';

export class RedisScheduleStore implements ScheduleStore, LockStore {
  constructor(private readonly scope: RedisConnection) {}

  private async save(mode: string, id: string, definition = '', extra: string | number = -1, note = ''): Promise<string> {
    const [defs, meta, state, generations, , version, changes] = this.scope.keys.schedules;
    return String(await this.scope.runPlainScript('schedule-save', [defs, meta, state, generations, version, changes], [mode, id, definition, extra, note]));
  }

  private saveDefinition(mode: 'create' | 'update' | 'upsert', definition: ScheduleDefinition): Promise<string> {
    const { paused, pauseNote, pausedUntil: _until, ...stored } = definition;
    return this.save(mode, definition.id, JSON.stringify(stored), paused ? '1' : '0', pauseNote ?? '');
  }

  private async saved(id: string): Promise<Schedule> {
    const schedule = await this.getSchedule(id);
    if (!schedule) throw notFound(id);
    return schedule;
  }

  async createSchedule(definition: ScheduleDefinition): Promise<Schedule> {
    const reply = await this.saveDefinition('create', definition);
    if (reply === 'conflict') throw new TasklineError('TL_SCHEDULE_CONFLICT', `a schedule with id ${JSON.stringify(definition.id)} already exists`);
    return this.saved(definition.id);
  }

  async updateSchedule(definition: ScheduleDefinition): Promise<Schedule> {
    if ((await this.saveDefinition('update', definition)) === 'missing') throw notFound(definition.id);
    return this.saved(definition.id);
  }

  async upsertSchedule(definition: ScheduleDefinition): Promise<Schedule> {
    await this.saveDefinition('upsert', definition);
    return this.saved(definition.id);
  }

  async deleteSchedule(id: string): Promise<boolean> {
    return (await this.save('delete', id)) === 'ok';
  }

  async pauseSchedule(id: string, options: { note?: string | null; until?: number | null } = {}): Promise<Schedule> {
    if ((await this.save('pause', id, options.note ?? '', options.until ?? -1)) === 'missing') throw notFound(id);
    return this.saved(id);
  }

  async resumeSchedule(id: string): Promise<Schedule> {
    if ((await this.save('resume', id)) === 'missing') throw notFound(id);
    return this.saved(id);
  }

  async getSchedule(id: string): Promise<Schedule | null> {
    const [defs, meta, state] = this.scope.keys.schedules;
    const replies = (await this.scope.call(() => this.scope.redis.pipeline().hget(defs, id).hget(meta, id).hget(state, id).exec())) ?? [];
    const [def, m, st] = replies.map((r) => r[1] as string | null);
    return def && m ? decodeSchedule(id, def, m, st) : null;
  }

  async listSchedules(): Promise<Schedule[]> {
    const [defs, meta, state] = this.scope.keys.schedules;
    const replies = (await this.scope.call(() => this.scope.redis.pipeline().hgetall(defs).hgetall(meta).hgetall(state).exec())) ?? [];
    const [allDefs, allMeta, allState] = replies.map((r) => r[1] as Record<string, string>);
    return Object.keys(allDefs)
      .filter((id) => allMeta[id])
      .sort()
      .map((id) => decodeSchedule(id, allDefs[id], allMeta[id], allState[id] ?? null));
  }

  async listScheduleChanges(since: number): Promise<ScheduleChanges> {
    const [defs, meta, state, , , versionKey, changes] = this.scope.keys.schedules;
    // The version first: a change made after it is read again next time, never missed.
    const head = (await this.scope.call(() => this.scope.redis.pipeline().get(versionKey).zrangebyscore(changes, `(${since}`, '+inf').exec())) ?? [];
    const version = Number(head[0]?.[1] ?? 0);
    const ids = (head[1]?.[1] as string[] | undefined) ?? [];
    if (ids.length === 0) return { version, schedules: [], removed: [] };
    // One transaction: a definition, its meta and its state as of one moment.
    const replies = (await this.scope.call(() => this.scope.redis.multi().hmget(defs, ...ids).hmget(meta, ...ids).hmget(state, ...ids).exec())) ?? [];
    const [d, m, st] = replies.map((r) => r[1] as (string | null)[]);
    const schedules: Schedule[] = [];
    const removed: string[] = [];
    ids.forEach((id, i) => {
      const def = d[i];
      const metaJson = m[i];
      if (def && metaJson) schedules.push(decodeSchedule(id, def, metaJson, st[i]));
      else removed.push(id);
    });
    return { version, schedules, removed };
  }

  private schedulers(mode: string, holder: string, ttlMs: number, extra: (string | number)[] = []): Promise<unknown> {
    return this.scope.runPlainScript('schedulers', this.scope.keys.schedulers, [mode, holder, ttlMs, ...extra]);
  }

  async acquireLeadership(holder: string, ttlMs: number): Promise<number | null> {
    const reply = (await this.schedulers('acquire', holder, ttlMs)) as number[];
    return reply[0] > 0 ? reply[0] : null;
  }

  async releaseLeadership(holder: string): Promise<void> {
    await this.schedulers('release', holder, 0);
  }

  async checkInScheduler(instance: SchedulerInstance, options: { leaseMs: number; bid: boolean }): Promise<SchedulerCheckIn> {
    const reply = (await this.schedulers('checkin', instance.id, options.leaseMs, [options.bid ? 1 : 0, JSON.stringify(instance), MAX_DOWNTIME_GAPS])) as (
      | number
      | string
    )[];
    const [now, mine, holder, epoch, expires, through, version, since, gaps] = reply;
    return {
      now: Number(now),
      epoch: Number(mine) > 0 ? Number(mine) : null,
      lease: decodeLease(holder, epoch, expires, through),
      schedulesVersion: Number(version),
      downtime: { since: Number(since), gaps: JSON.parse(String(gaps)) as [number, number][] },
    };
  }

  async leaveSchedulers(id: string): Promise<void> {
    await this.schedulers('leave', id, 0);
  }

  async listSchedulers(): Promise<SchedulerList> {
    const reply = (await this.schedulers('list', '', 0)) as (number | string)[];
    const lease = decodeLease(reply[1], reply[2], reply[3], reply[4]);
    const downtime = reply[5] === '' ? null : { since: Number(reply[5]), gaps: JSON.parse(String(reply[6])) as [number, number][] };
    const instances: SchedulerStatus[] = [];
    for (let i = 7; i < reply.length; i += 2) {
      // One unreadable check-in is left out, never a failed listing.
      const entry = parseStoredObject<{ seen: number; instance: unknown }>(String(reply[i + 1]));
      const instance = decodeSchedulerInstance(entry.instance);
      if (instance === null) continue;
      const leader = lease !== null && lease.holder === instance.id;
      instances.push({ ...instance, lastSeenAt: typeof entry.seen === 'number' ? entry.seen : 0, leader, epoch: leader ? lease.epoch : null });
    }
    return { instances: instances.sort((a, b) => a.startedAt - b.startedAt || a.id.localeCompare(b.id)), lease, downtime };
  }

  /** The fires of each queue in one fire.lua call; all calls in one round trip. */
  async fire(batches: FireBatch[]): Promise<FireResult[][]> {
    if (batches.length === 0) return [];
    checkStorableTasks(batches.flatMap((b) => b.fires.flatMap((f) => (f.task ? [f.task] : []))));
    this.scope.register(batches.map((b) => b.queue));
    // One call per queue, however many schedules enqueue there.
    const groups = chunksByQueue(batches, undefined, Infinity);
    const calls = groups.map(([queue, indexes]) => {
      const args: (string | number)[] = [indexes.length];
      const histories: string[] = [];
      for (const i of indexes) {
        const batch = batches[i];
        histories.push(this.scope.keys.fireHistory(queue, batch.scheduleId));
        args.push(batch.scheduleId, batch.overlap, batch.previousTaskId ?? '', batch.keepHistory, batch.fires.length);
        for (const fire of batch.fires) {
          const task = fire.task;
          args.push(fire.fireId, fire.nominalAt, fire.action, fire.reason ?? '', task ? encodeRecordFragment(task) : '', task ? task.payload : '', task?.runAt ?? -1);
        }
      }
      return this.scope.scriptCall('fire', queue, args, histories);
    });
    const replies = (await this.scope.runScripts(calls)) as [string, string, string][][][];
    const results: FireResult[][] = new Array<FireResult[]>(batches.length);
    groups.forEach(([, indexes], g) => {
      indexes.forEach((batchIndex, s) => {
        results[batchIndex] = replies[g][s].map(([fireId, outcome, taskId]) => ({ fireId, outcome: outcome as FireOutcome, taskId: taskId === '' ? null : taskId }));
      });
    });
    return results;
  }

  async advanceSchedules(holder: string, epoch: number, updates: ScheduleUpdate[], firedThrough?: number): Promise<boolean> {
    const [, meta, state, , leader] = this.scope.keys.schedules;
    const args: (string | number)[] = [holder, epoch, firedThrough ?? -1];
    for (const update of updates) args.push(update.id, update.generation, update.updatedAt, JSON.stringify(update.state));
    const written = Number(await this.scope.runPlainScript('schedule-advance', [meta, state, leader], args));
    return written >= 0;
  }

  async listFires(scheduleId: string, queue: string, limit: number): Promise<FireRecord[]> {
    countWithin('limit', limit, MAX_PAGE_LIMIT);
    const reply = (await this.scope.runScript('fire-history', queue, [limit], [this.scope.keys.fireHistory(queue, scheduleId)])) as string[];
    const fires: FireRecord[] = [];
    for (let i = 0; i < reply.length; i += 3) fires.push(decodeFire(reply[i], reply[i + 1], reply[i + 2]));
    return fires;
  }

  private async lock(mode: string, key: string, owner: string, token: number, ttlMs: number): Promise<number> {
    validateLockKey(key);
    return Number(await this.scope.runPlainScript('lock', this.scope.keys.lock(key), [mode, owner, token, ttlMs]));
  }

  async acquireLock(key: string, owner: string, ttlMs: number): Promise<number | null> {
    const token = await this.lock('acquire', key, owner, 0, ttlMs);
    return token > 0 ? token : null;
  }

  async extendLock(key: string, owner: string, token: number, ttlMs: number): Promise<boolean> {
    return (await this.lock('extend', key, owner, token, ttlMs)) === 1;
  }

  async releaseLock(key: string, owner: string, token: number): Promise<boolean> {
    return (await this.lock('release', key, owner, token, 0)) === 1;
  }
}

function notFound(id: string): TasklineError {
  return new TasklineError('TL_SCHEDULE_NOT_FOUND', `no schedule with id ${JSON.stringify(id)}`);
}

function decodeSchedule(id: string, def: string, meta: string, state: string | null): Schedule {
  const unreadable: string[] = [];
  const definition = parseStoredDefinition(id, def, () => unreadable.push('definition'));
  const m = parseStoredObject<{ g: number; c: number; u: number; p?: boolean; pn?: string; pu?: number; ra?: number }>(meta, () => unreadable.push('meta'));
  const s = parseStoredObject<ScheduleState>(state, () => unreadable.push('state'));
  const schedule: Schedule = {
    ...definition,
    paused: m.p === true,
    pauseNote: m.pn ?? null,
    pausedUntil: m.pu ?? null,
    generation: m.g ?? Number.NaN,
    createdAt: m.c ?? Number.NaN,
    updatedAt: m.u ?? Number.NaN,
    resumedAt: m.ra ?? null,
    state: {
      watermark: s.watermark ?? m.c ?? Number.NaN,
      nextRunAt: s.nextRunAt ?? null,
      lastFireAt: s.lastFireAt ?? null,
      lastOutcome: s.lastOutcome ?? null,
      lastTaskId: s.lastTaskId ?? null,
      buffered: s.buffered ?? null,
    },
  };
  for (const part of unreadable) noteUnreadable(schedule, part);
  return schedule;
}

/** A fire record as fire.lua writes it; one that is not (corrupt JSON) still lists, by its id. */
function decodeFire(fireId: string, raw: string, state: string): FireRecord {
  let entry: { f?: unknown; n?: unknown; o?: unknown; t?: unknown; e?: unknown } = {};
  let readable = true;
  try {
    const parsed: unknown = JSON.parse(raw);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) entry = parsed;
    else readable = false;
  } catch {
    readable = false;
  }
  const nominalAt = typeof entry.n === 'number' ? entry.n : Number.NaN;
  const enqueuedAt = typeof entry.e === 'number' ? entry.e : null;
  const fire: FireRecord = {
    fireId: typeof entry.f === 'string' ? entry.f : fireId,
    nominalAt,
    enqueuedAt,
    lagMs: enqueuedAt === null ? null : enqueuedAt - nominalAt,
    outcome: typeof entry.o === 'string' ? entry.o : '',
    taskId: typeof entry.t === 'string' ? entry.t : null,
    taskState: isTaskState(state) ? state : null,
  };
  if (!readable) noteUnreadable(fire, 'record');
  return fire;
}

function decodeLease(holder: unknown, epoch: unknown, expires: unknown, through: unknown): SchedulerLease | null {
  if (typeof holder !== 'string' || holder === '') return null;
  const fired = Number(through);
  return { holder, epoch: Number(epoch), expiresAt: Number(expires), firedThrough: fired >= 0 ? fired : null };
}
