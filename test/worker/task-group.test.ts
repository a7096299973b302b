/** A handler sees its task's group (the enqueue option `group`) as ctx.task.group, null without one; the worker's events carry it too. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Client, Worker } from '../../src/index.js';
import type { TaskMeta } from '../../src/worker/context.js';
import { STORES, type TestStore } from '../helpers/stores.js';

describe.each(STORES)('ctx.task.group on %s', (_name, openStore) => {
  let store: TestStore;
  let client: Client;
  let worker: Worker | null = null;

  beforeEach(async () => {
    store = await openStore();
    client = new Client(store.backend);
  });

  afterEach(async () => {
    await worker?.stop({ timeout: 1000 });
    worker = null;
    await client.close();
    await store.cleanup();
  });

  it('is the group the task was enqueued with, or null', async () => {
    worker = new Worker(await store.reopen(), { idleWait: 1000, heartbeatInterval: 1000 });
    worker.handle('tenant:report', async (_payload, ctx) => ctx.task.group);
    const completed: TaskMeta[] = [];
    worker.on('completed', (task) => completed.push(task));
    await worker.start();
    const grouped = await client.enqueue('tenant:report', {}, { group: 'tenant:42' });
    const plain = await client.enqueue('tenant:report', {});
    expect(await client.waitFor(grouped.id, { timeout: 10_000 })).toBe('tenant:42');
    expect(await client.waitFor(plain.id, { timeout: 10_000 })).toBeNull();
    await expect.poll(() => completed.length).toBe(2);
    expect(Object.fromEntries(completed.map((task) => [task.id, task.group]))).toEqual({ [grouped.id]: 'tenant:42', [plain.id]: null });
  });
});
