/**
 * Task groups on SQLite (sqlite/groups.ts): the turns of the groups in the claim, kept in the
 * file across claims and connections; groupConcurrency counted from live leases; what a queue
 * that never had a grouped task keeps (nothing); and the plans of the claim's statements, whose
 * cost must not grow with the length of a group's line.
 */
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ackOk, completeAck, LEASE_MS, newTask, requeueAck, retryAck, WORKER } from '../../src/backend/conformance/harness.js';
import type { Backend, ClaimResult } from '../../src/backend/contract.js';
import { GROUP_FRONT, LIVE_IN_GROUP, NEXT_IN_TURN, UNGROUPED_FRONT } from '../../src/backend/sqlite/groups.js';
import { loadMigrations } from '../../src/backend/sqlite/schema.js';
import { sqliteStore, type SqliteTestStore } from '../helpers/sqlite-store.js';

/** Enqueues `n` tasks of a group (null: none) in one call; returns their ids in order. */
async function enqueueGroup(backend: Backend, group: string | null, n: number, queue = 'default'): Promise<string[]> {
  const tasks = Array.from({ length: n }, (_, i) => newTask('t', { i }, group === null ? { queue } : { queue, group }));
  const outcomes = await backend.enqueue(tasks);
  expect(outcomes.every((o) => o.ok)).toBe(true);
  return tasks.map((t) => t.id);
}

async function claim(backend: Backend, count: number, leaseMs = LEASE_MS, queue = 'default'): Promise<ClaimResult> {
  const [result] = await backend.claim(WORKER, [{ queue, count }], leaseMs);
  return result;
}

const groupsOf = (result: ClaimResult): (string | null)[] => result.tasks.map((t) => t.group ?? null);

/** Reads the database file with a connection of its own. */
function query<T>(file: string, sql: string, ...params: unknown[]): T[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

describe('task groups on SQLite', () => {
  let store: SqliteTestStore;
  beforeEach(async () => {
    store = await sqliteStore();
  });
  afterEach(async () => {
    await store.cleanup();
  });

  it('alternates claims of one between a large group and a small one until the small one is empty', async () => {
    const { backend } = store;
    await enqueueGroup(backend, 'A', 50);
    await enqueueGroup(backend, 'B', 5);
    const order: (string | null)[] = [];
    for (let i = 0; i < 14; i++) order.push(...groupsOf(await claim(backend, 1)));
    expect(order).toEqual(['A', 'B', 'A', 'B', 'A', 'B', 'A', 'B', 'A', 'B', 'A', 'A', 'A', 'A']);
    // Each group's own line is oldest first.
    const a = await backend.listTasks('default', 'running', { limit: 100 });
    expect(a.tasks.filter((t) => t.group === 'A').map((t) => (t.payload as { i: number }).i).sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('keeps the turns in the file: another connection claims on from where the last claim left off', async () => {
    await enqueueGroup(store.backend, 'A', 5);
    await enqueueGroup(store.backend, 'B', 5);
    await enqueueGroup(store.backend, 'C', 5);
    expect(groupsOf(await claim(store.backend, 2))).toEqual(['A', 'B']);
    const other = await store.reopen();
    expect(groupsOf(await claim(other, 1))).toEqual(['C']);
    expect(groupsOf(await claim(store.backend, 4))).toEqual(['A', 'B', 'C', 'A']);
  });

  it('gives the tasks without a group one turn among the groups, and all the room once the groups are empty', async () => {
    const { backend } = store;
    await enqueueGroup(backend, null, 10);
    await enqueueGroup(backend, 'A', 2);
    await enqueueGroup(backend, 'B', 2);
    expect(groupsOf(await claim(backend, 6))).toEqual([null, 'A', 'B', null, 'A', 'B']);
    expect(groupsOf(await claim(backend, 5))).toEqual([null, null, null, null, null]);
    // A group joining later goes to the back of the turns.
    await enqueueGroup(backend, 'C', 2);
    expect(groupsOf(await claim(backend, 4))).toEqual([null, 'C', null, 'C']);
    expect(groupsOf(await claim(backend, 4))).toEqual([null]);
  });

  it('runs at most groupConcurrency of a group; an ack and an expired lease each free a slot', async () => {
    const { backend } = store;
    await backend.setQueueLimits('default', { groupConcurrency: 2 });
    await enqueueGroup(backend, 'A', 10);
    await enqueueGroup(backend, 'B', 1);
    const first = await claim(backend, 5, 1_000);
    expect(groupsOf(first)).toEqual(['A', 'B', 'A']);
    expect(first).toMatchObject({ limited: 'group', more: true });
    const held = await claim(backend, 5);
    expect(held).toMatchObject({ tasks: [], limited: 'group', more: true });
    // An ack frees one slot of its group.
    await ackOk(backend, completeAck(first.tasks[0]));
    const freed = await claim(backend, 5, 1_000);
    expect(groupsOf(freed)).toEqual(['A']);
    expect(freed.limited).toBe('group');
    // The leases of 1 s run out: their slots are free before the lease recovery runs.
    const later = await store.reopen({ clockOffsetMs: 2_000 });
    expect(groupsOf(await claim(later, 5))).toEqual(['A', 'A']);
    expect((await claim(later, 5)).tasks).toHaveLength(0);
    const running = query<{ n: number }>(store.file, "SELECT COUNT(*) AS n FROM tasks WHERE grp = 'A' AND state = 'running' AND sort_key > ?", Date.now() + 1_000);
    expect(running[0].n).toBe(2);
  });

  it('says limited "group" only when the groups held the claim back', async () => {
    const { backend } = store;
    await backend.setQueueLimits('default', { groupConcurrency: 1 });
    await enqueueGroup(backend, 'A', 1);
    await enqueueGroup(backend, 'B', 1);
    // Both taken, nothing left queued: no limit held anything back.
    expect(await claim(backend, 5)).toMatchObject({ limited: null, more: false });
    await enqueueGroup(backend, 'A', 2);
    expect(await claim(backend, 5)).toMatchObject({ tasks: [], limited: 'group', more: true });
    // Asked for exactly what there was room for: not held back.
    await enqueueGroup(backend, 'C', 2);
    expect(await claim(backend, 1)).toMatchObject({ limited: null, more: true });
  });

  it('wakes the waiting workers when a task of a queue with a groupConcurrency stops running', async () => {
    const { backend } = store;
    const signal = () => query<{ signal: number }>(store.file, "SELECT signal FROM queues WHERE name = 'default'")[0].signal;
    await enqueueGroup(backend, 'A', 2);
    const plain = await claim(backend, 1);
    let before = signal();
    await ackOk(backend, completeAck(plain.tasks[0]));
    // Without a limit an ack frees nothing anyone waits for.
    expect(signal()).toBe(before);
    await backend.setQueueLimits('default', { groupConcurrency: 1 });
    const limited = await claim(backend, 1);
    before = signal();
    await ackOk(backend, completeAck(limited.tasks[0]));
    expect(signal()).toBeGreaterThan(before);
  });

  it('shows the groups with queued tasks and the live leases per group in QueueInfo', async () => {
    const { backend } = store;
    await enqueueGroup(backend, null, 2);
    expect((await backend.getQueue('default'))!.groups).toEqual({ waiting: 0, running: {} });
    await enqueueGroup(backend, 'A', 3);
    await enqueueGroup(backend, 'B', 1);
    await enqueueGroup(backend, 'C', 1);
    expect((await backend.getQueue('default'))!.groups).toEqual({ waiting: 3, running: {} });
    const taken = await claim(backend, 6, 1_000);
    expect(groupsOf(taken)).toEqual([null, 'A', 'B', 'C', null, 'A']);
    const info = (await backend.getQueue('default'))!;
    expect(info.groups).toEqual({ waiting: 1, running: { A: 2, B: 1, C: 1 } });
    expect((await backend.listQueues()).find((q) => q.name === 'default')!.groups).toEqual(info.groups);
    // An expired lease is not running as a group counts it.
    expect((await (await store.reopen({ clockOffsetMs: 2_000 })).getQueue('default'))!.groups).toEqual({ waiting: 1, running: {} });
  });

  it('keeps the group of a task requeued, retried, recovered or run again', async () => {
    const { backend } = store;
    const [id] = await enqueueGroup(backend, 'A', 1);
    await enqueueGroup(backend, 'B', 3);
    const first = (await claim(backend, 1)).tasks[0];
    expect(first).toMatchObject({ id, group: 'A' });
    // Requeued (graceful shutdown): at the front of its group's line, and its group's turn comes.
    await ackOk(backend, requeueAck(first));
    expect((await backend.getTask(id))!).toMatchObject({ state: 'queued', group: 'A' });
    expect(groupsOf(await claim(backend, 1))).toEqual(['B']);
    const again = (await claim(backend, 1)).tasks[0];
    expect(again).toMatchObject({ id, group: 'A' });
    await ackOk(backend, retryAck(again, 'boom', 0));
    expect((await backend.getTask(id))!).toMatchObject({ state: 'retrying', group: 'A' });
    const third = (await claim(backend, 5, 1_000)).tasks.find((t) => t.id === id)!;
    expect(third.group).toBe('A');
    // Lease lost, recovered to retrying, forwarded to queued once due: still in group A.
    expect(await (await store.reopen({ clockOffsetMs: 120_000 })).recoverExpired('default', 10)).toBeGreaterThan(0);
    const later = await store.reopen({ clockOffsetMs: 3_600_000 });
    await later.forwardDue('default', 10);
    expect((await later.getTask(id))!).toMatchObject({ state: 'queued', group: 'A' });
    await later.archiveTask(id);
    await later.runTask(id);
    const last = (await claim(later, 5)).tasks.find((t) => t.id === id)!;
    expect(last.group).toBe('A');
  });

  it('keeps nothing of groups for a queue that never had a grouped task', async () => {
    const { backend } = store;
    await enqueueGroup(backend, null, 3);
    await claim(backend, 2);
    expect(query(store.file, 'SELECT * FROM group_turns')).toEqual([]);
    expect(query(store.file, "SELECT turn FROM queues WHERE name = 'default'")).toEqual([{ turn: 0 }]);
    expect(query(store.file, 'SELECT grp FROM tasks WHERE grp IS NOT NULL')).toEqual([]);
  });

  it('drops a group from the turns once its line is empty', async () => {
    const { backend } = store;
    await enqueueGroup(backend, 'A', 1);
    const [b] = await enqueueGroup(backend, 'B', 1);
    await backend.deleteTask(b);
    await claim(backend, 5);
    expect(query(store.file, "SELECT grp FROM group_turns WHERE queue = 'default' ORDER BY turn")).toEqual([{ grp: '' }]);
  });

  it('does not hold a small group behind a group of 20,000', async () => {
    const { backend } = store;
    for (let i = 0; i < 20; i++) await enqueueGroup(backend, 'big', 1000);
    await enqueueGroup(backend, 'small', 10);
    const taken: (string | null)[] = [];
    for (let i = 0; i < 20; i++) taken.push(...groupsOf(await claim(backend, 1)));
    expect(taken).toEqual(Array.from({ length: 10 }, () => ['big', 'small']).flat());
  });
});

describe('the plans of the turns’ statements', () => {
  /** The plan of a statement on the full schema: index searches only, no scan, no sort. */
  function plan(sql: string, ...params: unknown[]): string[] {
    const db = new Database(':memory:');
    try {
      for (const migration of loadMigrations()) db.exec(migration.sql);
      return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail);
    } finally {
      db.close();
    }
  }

  it('searches an index for the next turn, a group’s oldest tasks, its live leases and the line without a group', () => {
    const plans = [
      plan(NEXT_IN_TURN, 'q', 0),
      plan(GROUP_FRONT, 'q', 'g'),
      plan(LIVE_IN_GROUP, 'q', 'g', 0),
      plan(UNGROUPED_FRONT, 'q', 1),
    ];
    for (const steps of plans) {
      expect(steps.every((s) => s.startsWith('SEARCH'))).toBe(true);
    }
    expect(plans[1][0]).toContain('tasks_by_group');
    expect(plans[2][0]).toContain('tasks_by_group');
    expect(plans[3][0]).toMatch(/tasks_by_state \(queue=\? AND state=\? AND sort_key<\?\)/);
  });
});
