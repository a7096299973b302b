/**
 * Groups: the enqueue option `group` (a tenant, a customer…) and the queue's groupConcurrency
 * (DESIGN §16): at most N running per group, and groups with queued tasks take turns, so that a
 * group with 100,000 tasks does not starve one with 10.
 *
 * Lines. A queued task of a group waits at sort key GROUP_LINE + its place in line: above the
 * line of the tasks without a group, whose places (the queue's position counter) stay far below
 * UNGROUPED_BELOW. So the tasks without a group are a range of tasks_by_state however many
 * grouped tasks wait, and each group's line is a range of tasks_by_group (migration 0012).
 *
 * Turns. group_turns has a row per group with queued tasks, and one (UNGROUPED) for the tasks
 * without a group, made with the queue's first group and kept; the lowest `turn` goes next. The
 * claim walks the turns from the front: a participant that takes a task (one per turn) goes to
 * the back with a new turn number; the tasks without a group, when there are none, keep their
 * place. A group running as many as the queue's groupConcurrency is parked: its turn becomes
 * PARKED + the time its earliest live lease expires, past every turn the walk looks at, until a
 * task of it stops running (unparkGroup, from the acks and lease recovery) or that time comes
 * (the claim unparks those due first; its limitedUntil says when), or the queue's groupConcurrency
 * changes (unparkAll) — so the claim never walks past full groups. The walk ends
 * when it has its room, or when it passed every participant since one last took a task. A group found without
 * queued tasks leaves the turns; every move of a grouped task to queued joins them (joinTurns),
 * so each group with queued tasks has its row.
 *
 * Cost of a claim: a few index lookups per participant it passes or takes from, whatever the
 * length of a group's line. A queue that never had a grouped task (`queues.turn` 0) claims
 * without looking at the turns at all.
 */
import type { NewTask } from '../../core/task.js';
import type { ClaimedTask } from '../contract.js';
import { CLAIM_COLUMNS, type ClaimRow } from './rows.js';
import type { Transition } from './transition.js';

/** Where the lines of the groups start (a safe integer with room either side of it). */
export const GROUP_LINE = 2 ** 52;
/** The line of the tasks without a group: sort keys below this. */
export const UNGROUPED_BELOW = GROUP_LINE / 2;
/** The participant of group_turns that stands for the tasks without a group (a group has 1–200 characters). */
export const UNGROUPED = '';

/** The group a new task is stored with (null: none). */
export function groupOf(task: Pick<NewTask, 'group'>): string | null {
  return task.group === undefined || task.group === null || task.group === UNGROUPED ? null : task.group;
}

/** The sort key of a queued task at `place` in line (Transition.backOfLine, frontOfLine). */
export function queuedSortKey(place: number, group: string | null): number {
  return group === null ? place : GROUP_LINE + place;
}

/** queuedSortKey in SQL, for an UPDATE of a task row, with the place as its parameter. */
export const QUEUED_SORT_KEY = `? + CASE WHEN grp IS NULL THEN 0 ELSE ${GROUP_LINE} END`;

const HAS_TURN = 'SELECT 1 FROM group_turns WHERE queue = ? AND grp = ?';
const ADD_TURN = 'INSERT INTO group_turns (queue, grp, turn) VALUES (?, ?, ?)';

/**
 * A task of `group` (null: none, nothing to do) was queued: the group joins the back of the
 * queue's turns unless it has its place already. The queue's first group brings the tasks
 * without a group in, ahead of it.
 */
const TO_THE_BACK = 'UPDATE group_turns SET turn = ? WHERE queue = ? AND grp = ?';

export function joinTurns(t: Transition, queue: string, group: string | null): void {
  if (group === null || t.get(HAS_TURN, queue, group)) return;
  if (!t.get(HAS_TURN, queue, UNGROUPED)) t.run(ADD_TURN, queue, UNGROUPED, t.nextTurn(queue));
  t.run(ADD_TURN, queue, group, t.nextTurn(queue));
}

/** Turns of parked groups: PARKED + when the group's earliest live lease expires (epoch ms). */
export const PARKED = 2 ** 52;
export const NEXT_IN_TURN = `SELECT grp, turn FROM group_turns WHERE queue = ? AND turn > ? AND turn < ${PARKED} ORDER BY turn LIMIT 1`;
const ANOTHER_GROUP = `SELECT 1 FROM group_turns WHERE queue = ? AND grp > '${UNGROUPED}' AND turn < ${PARKED} LIMIT 1`;
const PARK = 'UPDATE group_turns SET turn = ? WHERE queue = ? AND grp = ?';
const EARLIEST_LEASE = "SELECT MIN(sort_key) AS at FROM tasks WHERE queue = ? AND state = 'running' AND grp = ? AND sort_key > ?";
/** Parked groups due again (their earliest lease expired), or all of them (`limit` removed). */
const PARKED_UNTIL = `SELECT grp FROM group_turns WHERE queue = ? AND turn >= ${PARKED} AND turn <= ? ORDER BY turn LIMIT 100`;
const IS_PARKED = `SELECT 1 FROM group_turns WHERE queue = ? AND grp = ? AND turn >= ${PARKED}`;
/** When the first parked group's earliest lease expires, as its turn. */
export const FIRST_PARKED = `SELECT MIN(turn) AS turn FROM group_turns WHERE queue = ? AND turn >= ${PARKED}`;

/**
 * Task `id` of the queue stops running (an ack, a lease recovered): its group, if parked, takes
 * turns again, at the back. Only a queue with grouped tasks and a groupConcurrency looks: without
 * one no group is parked (unparkAll ran when it was removed).
 */
export function unparkGroupOf(t: Transition, queue: string, id: string): void {
  const state = t.queue(queue);
  if (state.turn === 0 || state.limits.groupConcurrency === null) return;
  const group = t.get<{ grp: string | null }>('SELECT grp FROM tasks WHERE id = ?', id)?.grp ?? null;
  if (group === null || !t.get(IS_PARKED, queue, group)) return;
  t.run(TO_THE_BACK, t.nextTurn(queue), queue, group);
}

/**
 * The queue's groupConcurrency was set, changed or removed (setQueueLimits): every parked group
 * takes turns again, at the back, for the claim to judge against the new limit (parking it again
 * if it is still full). A parked group has at least one task running, so this walks no more rows
 * than the queue has running tasks.
 */
export function unparkAll(t: Transition, queue: string): void {
  if (t.queue(queue).turn === 0) return;
  for (const { grp } of t.all<{ grp: string }>(ALL_PARKED, queue)) t.run(TO_THE_BACK, t.nextTurn(queue), queue, grp);
}
const ALL_PARKED = `SELECT grp FROM group_turns WHERE queue = ? AND turn >= ${PARKED} ORDER BY turn`;

/**
 * Parked groups whose earliest lease has expired take turns again; all of them once the queue has
 * no groupConcurrency (parked before unparkAll was run by setQueueLimits, by an older version).
 */
function unparkDue(t: Transition, queue: string, limit: number | null): void {
  const until = limit === null ? Number.MAX_SAFE_INTEGER : PARKED + t.now;
  for (const { grp } of t.all<{ grp: string }>(PARKED_UNTIL, queue, until)) t.run(TO_THE_BACK, t.nextTurn(queue), queue, grp);
}
const LEAVE_TURNS = 'DELETE FROM group_turns WHERE queue = ? AND grp = ?';
/** The oldest two queued tasks of a group (the second says whether it has more); rowids, from the index alone. */
export const GROUP_FRONT = "SELECT rowid AS at FROM tasks WHERE queue = ? AND state = 'queued' AND grp = ? ORDER BY sort_key LIMIT 2";
const CLAIM_ROW_AT = `${CLAIM_COLUMNS} WHERE t.rowid = ?`;
/** The oldest queued tasks without a group. */
export const UNGROUPED_FRONT = `${CLAIM_COLUMNS} WHERE t.queue = ? AND t.state = 'queued' AND t.sort_key < ${UNGROUPED_BELOW} ORDER BY t.sort_key LIMIT ?`;
/** A group's running tasks with a live lease at a time (as LIVE_LEASES counts the queue's). */
export const LIVE_IN_GROUP = "SELECT COUNT(*) AS n FROM tasks WHERE queue = ? AND state = 'running' AND grp = ? AND sort_key > ?";

/**
 * Claims up to `room` queued tasks of a queue that has had grouped tasks, in turns (see the top
 * of this file), starting each with `start` as it is taken. `full`: a group passed its turn
 * because it ran its groupConcurrency.
 */
export function claimInTurns(
  t: Transition, queue: string, room: number, start: (row: ClaimRow) => ClaimedTask,
): { tasks: ClaimedTask[]; full: boolean } {
  const limit = t.queue(queue).limits.groupConcurrency;
  unparkDue(t, queue, limit);
  const tasks: ClaimedTask[] = [];
  /** Running tasks with a live lease per group met, with those this claim started. */
  const live = new Map<string, number>();
  let full = false;
  // The walk's place in the turns: participants moved to the back come round again after it.
  let after = 0;
  while (tasks.length < room) {
    const next = t.get<{ grp: string; turn: number }>(NEXT_IN_TURN, queue, after);
    if (!next) {
      // No turns at all (never so after joinTurns): the tasks without a group, as before.
      if (after === 0) tasks.push(...t.all<ClaimRow>(UNGROUPED_FRONT, queue, room).map(start));
      break;
    }
    after = next.turn;
    const group = next.grp;
    if (group === UNGROUPED) {
      if (!t.get(ANOTHER_GROUP, queue)) {
        // No group left in the turns: the rest of the room from the line without a group at once.
        tasks.push(...t.all<ClaimRow>(UNGROUPED_FRONT, queue, room - tasks.length).map(start));
        break;
      }
      const [row] = t.all<ClaimRow>(UNGROUPED_FRONT, queue, 1);
      if (row) {
        tasks.push(start(row));
        t.run(TO_THE_BACK, t.nextTurn(queue), queue, group);
      }
      continue;
    }
    const front = t.all<{ at: number }>(GROUP_FRONT, queue, group);
    if (front.length === 0) {
      t.run(LEAVE_TURNS, queue, group);
      continue;
    }
    let running = live.get(group) ?? 0;
    if (limit !== null) {
      if (!live.has(group)) running = t.get<{ n: number }>(LIVE_IN_GROUP, queue, group, t.now)!.n;
      if (running >= limit) {
        // Parked until a task of it stops running, or its earliest live lease expires.
        const earliest = t.get<{ at: number | null }>(EARLIEST_LEASE, queue, group, t.now)?.at ?? null;
        t.run(PARK, PARKED + (earliest ?? t.now + 1000), queue, group);
        live.set(group, running);
        full = true;
        continue;
      }
    }
    tasks.push(start(t.get<ClaimRow>(CLAIM_ROW_AT, front[0].at)!));
    live.set(group, running + 1);
    if (front.length === 1) t.run(LEAVE_TURNS, queue, group);
    else t.run(TO_THE_BACK, t.nextTurn(queue), queue, group);
  }
  return { tasks, full };
}
