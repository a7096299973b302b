/**
 * Schedules on SQLite: storage and generations, pause and resume, and the fenced
 * write of run state. The SQLite counterpart of redis/lua/schedule-save.lua and
 * schedule-advance.lua, with the same semantics; the lease itself is in schedulers.ts.
 */
import { TasklineError } from '../../core/errors.js';
import type { Schedule, ScheduleDefinition, ScheduleState } from '../../core/schedule.js';
import type { ScheduleChanges, ScheduleUpdate } from '../contract.js';
import type { StatementCache } from './database.js';
import { noteUnreadable, parseStoredDefinition, parseStoredObject, type StoredDefinition } from '../shared.js';
import { currentLease } from './schedulers.js';
import type { Transition } from './transition.js';

/** A `schedules` row (see migrations/0002_schedules.sql). */
interface ScheduleRow {
  id: string;
  definition: string;
  generation: number;
  created_at: number;
  updated_at: number;
  paused: number;
  pause_note: string | null;
  paused_until: number | null;
  resumed_at: number | null;
  state: string;
}


interface Pause {
  paused: number;
  pause_note: string | null;
  paused_until: number | null;
}

const SELECT_SCHEDULE = 'SELECT * FROM schedules WHERE id = ?';

function notFound(id: string): TasklineError {
  return new TasklineError('TL_SCHEDULE_NOT_FOUND', `no schedule with id ${JSON.stringify(id)}`);
}

/** The pause columns: a note and an until time only while paused. */
function pause(paused: boolean, note: string | null | undefined, until: number | null | undefined): Pause {
  return {
    paused: paused ? 1 : 0,
    pause_note: paused && note ? note : null,
    paused_until: paused && until !== null && until !== undefined && until >= 0 ? until : null,
  };
}

function storedDefinition(definition: ScheduleDefinition): string {
  const { paused: _paused, pauseNote: _note, pausedUntil: _until, ...stored } = definition;
  return JSON.stringify(stored satisfies StoredDefinition);
}

function decodeSchedule(row: ScheduleRow): Schedule {
  const unreadable: string[] = [];
  const definition = parseStoredDefinition(row.id, row.definition, () => unreadable.push('definition'));
  const state = parseStoredObject<ScheduleState>(row.state, () => unreadable.push('state'));
  const schedule: Schedule = {
    ...definition,
    paused: row.paused === 1,
    pauseNote: row.pause_note,
    pausedUntil: row.paused_until,
    generation: row.generation,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    resumedAt: row.resumed_at,
    state: {
      watermark: state.watermark ?? row.created_at,
      nextRunAt: state.nextRunAt ?? null,
      lastFireAt: state.lastFireAt ?? null,
      lastOutcome: state.lastOutcome ?? null,
      lastTaskId: state.lastTaskId ?? null,
      buffered: state.buffered ?? null,
    },
  };
  for (const part of unreadable) noteUnreadable(schedule, part);
  return schedule;
}

/** Every change of a schedule moves the version and records it, so schedulers catch up on what changed. */
function bumpVersion(t: Transition, id: string): void {
  const { version } = t.get<{ version: number }>('UPDATE scheduler_downtime SET schedules_version = schedules_version + 1 WHERE id = 1 RETURNING schedules_version AS version')!;
  t.run('INSERT INTO schedule_changes (id, version) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET version = excluded.version', id, version);
}

function readSchedule(t: Transition, id: string): Schedule {
  const row = t.get<ScheduleRow>(SELECT_SCHEDULE, id);
  if (!row) throw notFound(id);
  return decodeSchedule(row);
}

/** A new schedule at the next generation of its id; its watermark is now. */
function insertSchedule(t: Transition, definition: ScheduleDefinition): void {
  const { generation } = t.get<{ generation: number }>(
    `INSERT INTO schedule_generations (id, generation) VALUES (?, 1)
     ON CONFLICT (id) DO UPDATE SET generation = generation + 1 RETURNING generation`,
    definition.id,
  )!;
  const p = pause(definition.paused, definition.pauseNote, null);
  const state: ScheduleState = { watermark: t.now, nextRunAt: null, lastFireAt: null, lastOutcome: null, lastTaskId: null, buffered: null };
  t.run(
    `INSERT INTO schedules (id, definition, generation, created_at, updated_at, paused, pause_note, paused_until, state)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    definition.id, storedDefinition(definition), generation, t.now, t.now, p.paused, p.pause_note, p.paused_until, JSON.stringify(state),
  );
  bumpVersion(t, definition.id);
}

/**
 * create: throws TL_SCHEDULE_CONFLICT when the id exists. update: throws TL_SCHEDULE_NOT_FOUND;
 * takes the definition's pause state. upsert: creates or updates, keeping an operator's pause
 * unless the definition itself is paused. A change applies to fires after it: the watermark
 * moves up to now (never back) and nextRunAt is recomputed by the scheduler.
 */
export function saveSchedule(t: Transition, mode: 'create' | 'update' | 'upsert', definition: ScheduleDefinition): Schedule {
  const row = t.get<ScheduleRow>(SELECT_SCHEDULE, definition.id);
  if (!row) {
    if (mode === 'update') throw notFound(definition.id);
    insertSchedule(t, definition);
    return readSchedule(t, definition.id);
  }
  if (mode === 'create') throw new TasklineError('TL_SCHEDULE_CONFLICT', `a schedule with id ${JSON.stringify(definition.id)} already exists`);
  const p: Pause = mode === 'update' || definition.paused ? pause(definition.paused, definition.pauseNote, null) : row;
  const state = JSON.parse(row.state) as Partial<ScheduleState>;
  state.watermark = Math.max(state.watermark ?? row.created_at, t.now);
  state.nextRunAt = null;
  t.run(
    'UPDATE schedules SET definition = ?, updated_at = ?, paused = ?, pause_note = ?, paused_until = ?, state = ? WHERE id = ?',
    storedDefinition(definition), t.now, p.paused, p.pause_note, p.paused_until, JSON.stringify(state), definition.id,
  );
  bumpVersion(t, definition.id);
  return readSchedule(t, definition.id);
}

/** Returns false when there was no such schedule. Its generation counter is kept. */
export function deleteSchedule(t: Transition, id: string): boolean {
  const deleted = t.run('DELETE FROM schedules WHERE id = ?', id).changes > 0;
  if (deleted) bumpVersion(t, id);
  return deleted;
}

/**
 * Pauses (with a note and an until time) or resumes. Throws TL_SCHEDULE_NOT_FOUND. Resuming a
 * paused schedule records when its pause ended (the resume, or its until time when that came
 * first): fires up to then go to the catch-up policy.
 */
export function setSchedulePaused(t: Transition, id: string, paused: boolean, options: { note?: string | null; until?: number | null } = {}): Schedule {
  const row = t.get<ScheduleRow>(SELECT_SCHEDULE, id);
  if (!row) throw notFound(id);
  const p = pause(paused, options.note, options.until);
  let resumedAt = row.resumed_at;
  if (!paused && row.paused === 1) resumedAt = row.paused_until !== null && row.paused_until < t.now ? row.paused_until : t.now;
  t.run(
    'UPDATE schedules SET paused = ?, pause_note = ?, paused_until = ?, resumed_at = ?, updated_at = ? WHERE id = ?',
    p.paused, p.pause_note, p.paused_until, resumedAt, t.now, id,
  );
  bumpVersion(t, id);
  return readSchedule(t, id);
}

export function getSchedule(sql: StatementCache, id: string): Schedule | null {
  const row = sql.get(SELECT_SCHEDULE).get(id) as ScheduleRow | undefined;
  return row ? decodeSchedule(row) : null;
}

export function listSchedules(sql: StatementCache): Schedule[] {
  return (sql.get('SELECT * FROM schedules ORDER BY id').all() as ScheduleRow[]).map(decodeSchedule);
}

/** What changed since version `since` (call inside one read transaction). */
export function listScheduleChanges(sql: StatementCache, since: number): ScheduleChanges {
  const { version } = sql.get('SELECT schedules_version AS version FROM scheduler_downtime WHERE id = 1').get() as { version: number };
  const rows = sql
    .get('SELECT c.id AS changed_id, s.* FROM schedule_changes c LEFT JOIN schedules s ON s.id = c.id WHERE c.version > ? ORDER BY c.id')
    .all(since) as (ScheduleRow & { changed_id: string })[];
  const schedules: Schedule[] = [];
  const removed: string[] = [];
  for (const row of rows) {
    if (row.id === null) removed.push(row.changed_id);
    else schedules.push(decodeSchedule(row));
  }
  return { version, schedules, removed };
}

/**
 * Writes run state only while `holder` leads with `epoch` (a deposed leader's late writes change
 * nothing): returns false when fenced out. Updates for another generation, a deleted schedule or
 * one changed since the leader read it are skipped. `firedThrough` records the leader's progress.
 */
export function advanceSchedules(t: Transition, holder: string, epoch: number, updates: ScheduleUpdate[], firedThrough?: number): boolean {
  const lease = currentLease(t);
  if (!lease || lease.holder !== holder || lease.epoch !== epoch) return false;
  if (firedThrough !== undefined) t.run('UPDATE scheduler_leader SET fired_through = ? WHERE id = 1', firedThrough);
  for (const update of updates) {
    t.run(
      'UPDATE schedules SET state = ? WHERE id = ? AND generation = ? AND updated_at = ?',
      JSON.stringify(update.state), update.id, update.generation, update.updatedAt,
    );
  }
  return true;
}
