/** A handler sees its task's group (the enqueue option `group`) as ctx.task.group, null without one; the worker's events carry it too. */
import { describe, expect, it } from 'vitest';
import { Worker } from '../../src/index.js';
import type { TaskMeta } from '../../src/worker/context.js';
import { STORES } from '../helpers/stores.js';
import { useClientStore } from '../helpers/client-store.js';

describe.each(STORES)('ctx.task.group on %s', (_name, openStore) => {
  const t = useClientStore(openStore);

  it('is the group the task was enqueued with, or null', async () => {
    t.worker = new Worker(await t.store.reopen(), { idleWait: 1000, heartbeatInterval: 1000 });
    t.worker.handle('tenant:report', async (_payload, ctx) => ctx.task.group);
    const completed: TaskMeta[] = [];
    t.worker.on('completed', (task) => completed.push(task));
    await t.worker.start();
    const grouped = await t.client.enqueue('tenant:report', {}, { group: 'tenant:42' });
    const plain = await t.client.enqueue('tenant:report', {});
    expect(await t.client.waitFor(grouped.id, { timeout: 10_000 })).toBe('tenant:42');
    expect(await t.client.waitFor(plain.id, { timeout: 10_000 })).toBeNull();
    await expect.poll(() => completed.length).toBe(2);
    expect(Object.fromEntries(completed.map((task) => [task.id, task.group]))).toEqual({ [grouped.id]: 'tenant:42', [plain.id]: null });
  });
});
