/**
 * SQLite keeps each queue's count per state in state_counts, written by the transitions: after
 * every kind of move — enqueue, claim, each ack, lease recovery, forwarding, every operator
 * action, keep bounds and retention — the kept counts equal a count of the rows.
 */
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { newTask } from '../../src/backend/conformance/harness.js';
import type { Backend } from '../../src/backend/contract.js';
import { sqliteStore, type SqliteTestStore } from '../helpers/sqlite-store.js';

function counts(file: string): { kept: Record<string, number>; actual: Record<string, number> } {
  const db = new Database(file, { readonly: true });
  try {
    const rows = (sql: string) => Object.fromEntries((db.prepare(sql).all() as { k: string; n: number }[]).filter((r) => r.n !== 0).map((r) => [r.k, r.n]));
    return {
      kept: rows("SELECT queue || '/' || state AS k, n FROM state_counts ORDER BY k"),
      actual: rows("SELECT queue || '/' || state AS k, COUNT(*) AS n FROM tasks GROUP BY queue, state ORDER BY k"),
    };
  } finally {
    db.close();
  }
}

describe('state counts on SQLite', () => {
  let store: SqliteTestStore;
  afterEach(async () => {
    await store?.cleanup();
  });
  const agree = () => {
    const { kept, actual } = counts(store.file);
    expect(kept).toEqual(actual);
  };

  it('stay equal to the rows through every kind of move', async () => {
    store = await sqliteStore();
    const b: Backend = store.backend;
    const later = Date.now() + 3_600_000;
    await b.enqueue([
      ...Array.from({ length: 12 }, (_, i) => newTask('t', { i }, { id: `q-${i}`, queue: 'a' })),
      ...Array.from({ length: 4 }, (_, i) => newTask('t', { i }, { id: `s-${i}`, queue: 'a', runAt: later })),
      newTask('t', {}, { id: 'b-1', queue: 'b' }),
    ]);
    agree();
    const [claim] = await b.claim('w1', [{ queue: 'a', count: 10 }], 30_000);
    agree();
    const [t0, t1, t2, t3, t4, t5, t6, t7, t8, t9] = claim.tasks;
    const attempt = (t: (typeof claim.tasks)[number]) => ({ attempt: t.attempt, startedAt: t.startedAt, finishedAt: Date.now(), outcome: 'completed', error: null, stack: null, workerId: 'w1' });
    await b.ack([
      { kind: 'complete', id: t0.id, queue: 'a', token: t0.token, result: '', attempt: attempt(t0) },
      { kind: 'dead', id: t1.id, queue: 'a', token: t1.token, error: 'boom', attempt: attempt(t1) },
      { kind: 'cancelled', id: t2.id, queue: 'a', token: t2.token, error: 'stop', attempt: attempt(t2) },
      { kind: 'retry', id: t3.id, queue: 'a', token: t3.token, error: 'again', delay: 0, consumed: true, attempt: attempt(t3) },
      { kind: 'hand-back', id: t4.id, queue: 'a', token: t4.token, delay: 0, attempt: attempt(t4) },
      { kind: 'requeue', id: t5.id, queue: 'a', token: t5.token, attempt: attempt(t5) },
      // Stale: another token moves nothing.
      { kind: 'complete', id: t6.id, queue: 'a', token: 'not-the-token', result: '', attempt: attempt(t6) },
    ] as never);
    agree();
    // Completed tasks deleted at once (keep 0); the bound recounts.
    await b.setQueueKeep('a', { completed: 0 });
    await b.ack([{ kind: 'complete', id: t6.id, queue: 'a', token: t6.token, result: '', attempt: attempt(t6) }] as never);
    agree();
    // Forwarding (the retried task is due), lease recovery of expired leases.
    await b.forwardDue('a', 100);
    agree();
    const expired = await store.reopen({ clockOffsetMs: 60_000 });
    await expired.recoverExpired('a', 100);
    agree();
    // Operator actions, one and all.
    await b.archiveTask('s-0');
    await b.runTask('s-0');
    await b.cancelTask('s-1');
    await b.deleteTask('s-2');
    await b.cancelTask(t7.id);
    agree();
    await b.archiveAll('a', 'scheduled');
    await b.runAll('a', 'dead');
    await b.deleteAll('a', 'cancelled');
    agree();
    // Keep bounds and retention: a bound of 1 dead trims the rest; cleanup deletes what expired.
    await b.setQueueKeep('a', { dead: 1 });
    const [again] = await b.claim('w1', [{ queue: 'a', count: 20 }], 30_000);
    await b.ack(again.tasks.map((t) => ({ kind: 'dead', id: t.id, queue: 'a', token: t.token, error: 'x', attempt: attempt(t) })) as never);
    agree();
    await (await store.reopen({ clockOffsetMs: 40 * 86_400_000 })).cleanup('a', 1000);
    agree();
    void t8;
    void t9;
  });

  it('are counted from the rows for a database made before them (migration 0008)', async () => {
    store = await sqliteStore();
    await store.backend.enqueue([newTask('t', {}, { queue: 'm' }), newTask('t', {}, { queue: 'm', runAt: Date.now() + 60_000 })]);
    const db = new Database(store.file);
    db.prepare("DELETE FROM state_counts WHERE queue = 'm'").run();
    db.prepare("DELETE FROM schema_migrations WHERE version >= 8").run();
    db.prepare('DROP TABLE state_counts').run();
    // The migrations after 0008 run again too: their tables and columns go with it.
    for (const table of ['workflow_edges', 'workflow_nodes', 'workflows', 'queue_starts', 'group_turns']) db.prepare(`DROP TABLE ${table}`).run();
    for (const column of ['rate_limit', 'rate_interval_ms', 'concurrency', 'group_concurrency', 'max_length', 'refused', 'turn']) db.prepare(`ALTER TABLE queues DROP COLUMN ${column}`).run();
    db.prepare('DROP INDEX tasks_by_group').run();
    db.prepare('ALTER TABLE tasks DROP COLUMN grp').run();
    db.close();
    const reopened = await store.reopen();
    expect((await reopened.getQueue('m'))?.counts).toMatchObject({ queued: 1, scheduled: 1 });
    agree();
  });
});
