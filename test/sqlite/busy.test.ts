import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isTasklineError } from '../../src/core/errors.js';
import { uuidv7 } from '../../src/core/ids.js';
import type { NewTask } from '../../src/core/task.js';
import { sqliteStore, type SqliteTestStore } from '../helpers/sqlite-store.js';

function newTask(): NewTask {
  return {
    id: uuidv7(), type: 'work', payload: '{}', queue: 'default', maxRetries: 3, timeout: 60_000, deadline: null,
    delay: null, runAt: null, uniqueKey: null, uniqueFor: null, retention: null, backoff: null, headers: null, links: null,
  };
}

describe('SQLite: a write lock held by another connection', () => {
  let store: SqliteTestStore;
  let other: Database.Database;

  beforeEach(async () => {
    // A short busy_timeout, so that the backend's own bounded retry is what is tested.
    store = await sqliteStore({ busyTimeoutMs: 20 });
    other = new Database(store.file);
  });

  afterEach(async () => {
    if (other.inTransaction) other.exec('ROLLBACK');
    other.close();
    await store.cleanup();
  });

  it('waits for the lock, retrying, and then commits', async () => {
    other.exec('BEGIN IMMEDIATE');
    setTimeout(() => other.exec('COMMIT'), 150);
    const [outcome] = await store.backend.enqueue([newTask()]);
    expect(outcome.ok).toBe(true);
    expect(other.inTransaction).toBe(false);
  });

  it('gives up after a bounded number of tries with TL_STORE_UNAVAILABLE, and writes nothing', async () => {
    other.exec('BEGIN IMMEDIATE');
    const task = newTask();
    const error: unknown = await store.backend.enqueue([task]).catch((e: unknown) => e);
    expect(isTasklineError(error, 'TL_STORE_UNAVAILABLE')).toBe(true);
    expect((error as Error).message).toMatch(/locked|busy/i);
    other.exec('ROLLBACK');
    expect(await store.backend.getTask(task.id)).toBeNull();
  });

  it('keeps reading while another connection writes (WAL)', async () => {
    const task = newTask();
    await store.backend.enqueue([task]);
    other.exec('BEGIN IMMEDIATE');
    other.prepare("UPDATE tasks SET type = 'changed'").run();
    expect(await store.backend.getTask(task.id)).toMatchObject({ type: 'work' });
    other.exec('COMMIT');
    expect(await store.backend.getTask(task.id)).toMatchObject({ type: 'changed' });
  });
});
