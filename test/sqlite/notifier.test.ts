import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BackendEvent } from '../../src/backend/contract.js';
import { uuidv7 } from '../../src/core/ids.js';
import type { NewTask } from '../../src/core/task.js';
import { sqliteStore, type SqliteTestStore } from '../helpers/sqlite-store.js';

function newTask(): NewTask {
  return {
    id: uuidv7(), type: 'work', payload: '{}', queue: 'default', maxRetries: 3, timeout: 60_000, deadline: null,
    delay: null, runAt: null, uniqueKey: null, uniqueFor: null, retention: null, backoff: null, headers: null, links: null,
  };
}

function handles(): string[] {
  return process.getActiveResourcesInfo().filter((r) => r === 'Timeout' || r === 'Immediate' || r === 'FSEventWrap' || r === 'StatWatcher');
}

describe('SQLite notifications', () => {
  let store: SqliteTestStore;

  beforeEach(async () => {
    store = await sqliteStore();
  });

  afterEach(async () => {
    await store.cleanup();
  });

  it('leaves no timer or file watch behind once nobody waits or listens, nor after close', async () => {
    // At most as many as before: a timer of the store opened for the test may end meanwhile.
    const before = handles().length;
    const other = await store.reopen();
    const unsubscribe = await other.subscribe(() => undefined);
    const waiting = other.waitForWork(['default'], 10_000, new AbortController().signal);
    expect(handles().length).toBeGreaterThan(before);
    await store.backend.enqueue([newTask()]);
    await waiting;
    await unsubscribe();
    expect(handles().length).toBeLessThanOrEqual(before);
    await other.subscribe(() => undefined);
    const pending = other.waitForWork(['idle'], 10_000, new AbortController().signal);
    await other.close();
    await pending;
    expect(handles().length).toBeLessThanOrEqual(before);
  });

  it('delivers events of its own and of other connections once each, in commit order', async () => {
    const other = await store.reopen();
    const events: BackendEvent[] = [];
    await store.backend.subscribe((e) => events.push(e));
    const ids: string[] = [];
    for (const backend of [store.backend, other, store.backend]) {
      const task = newTask();
      ids.push(task.id);
      await backend.enqueue([task]);
      await backend.archiveTask(task.id);
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(events).toEqual(ids.map((id) => ({ kind: 'finished', id, queue: 'default', state: 'dead' })));
  });

  it('prunes old events at cleanup', async () => {
    for (let i = 0; i < 5; i++) {
      const task = newTask();
      await store.backend.enqueue([task]);
      await store.backend.cancelTask(task.id);
    }
    const raw = new Database(store.file, { readonly: true });
    try {
      // Each task: an `enqueued` (lifecycle) and a `finished` event.
      expect(raw.prepare('SELECT COUNT(*) FROM events').pluck().get()).toBe(10);
      await store.backend.cleanup('default', 100);
      expect(raw.prepare('SELECT COUNT(*) FROM events').pluck().get()).toBe(10);
      await (await store.reopen({ clockOffsetMs: 60_000 })).cleanup('default', 100);
      expect(raw.prepare('SELECT COUNT(*) FROM events').pluck().get()).toBe(0);
    } finally {
      raw.close();
    }
  });
});
