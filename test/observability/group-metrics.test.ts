/**
 * The task center's metrics of enqueue groups, on each store: running tasks per queue and group
 * (only groups with running tasks), the groups at the queue's groupConcurrency, and the groups
 * with queued tasks per queue.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newTask } from '../../src/backend/conformance/harness.js';
import { STORES } from '../helpers/stores.js';
import { startApi, type TestApi } from '../server/helpers.js';

describe.each(STORES)('group metrics on %s', (_name, open) => {
  let api: TestApi;
  beforeEach(async () => {
    api = await startApi(open);
  });
  afterEach(async () => {
    await api.close();
  });
  // A scrape shares one read of the queues until the next macrotask (server/metrics.ts); an
  // in-process store can answer the writes between two scrapes without one, so yield first.
  const metrics = async () => {
    await new Promise((resolve) => setImmediate(resolve));
    return (await api.app.inject({ method: 'GET', url: '/metrics' })).body;
  };

  it('scheduler_group_running{queue_name,group} and scheduler_queue_waiting_groups{queue_name}', async () => {
    const { backend } = api.store;
    await backend.enqueue([newTask('t', {}, { queue: 'plain' })]);
    const before = await metrics();
    expect(before).toContain('scheduler_queue_waiting_groups{queue_name="plain"} 0');
    expect(before).not.toMatch(/^scheduler_group_running\{/m);

    await backend.enqueue(['acme', 'acme', 'globex'].map((group) => newTask('t', {}, { queue: 'tenants', group })));
    expect(await metrics()).toContain('scheduler_queue_waiting_groups{queue_name="tenants"} 2');
    const [claim] = await backend.claim('w', [{ queue: 'tenants', count: 3 }], 60_000);
    expect(claim.tasks.map((t) => t.group).sort()).toEqual(['acme', 'acme', 'globex']);
    await backend.enqueue(['initech', 'initech', 'acme'].map((group) => newTask('t', {}, { queue: 'tenants', group })));
    const text = await metrics();
    expect(text).toContain('scheduler_group_running{queue_name="tenants",group="acme"} 2');
    expect(text).toContain('scheduler_group_running{queue_name="tenants",group="globex"} 1');
    // A group with no running task has no series: the label set stays bounded by what runs.
    expect(text).not.toContain('group="initech"');
    expect(text).toContain('scheduler_queue_waiting_groups{queue_name="tenants"} 2');
    expect(text).toMatch(/# TYPE scheduler_group_running gauge/);
    expect(text).toMatch(/# TYPE scheduler_queue_waiting_groups gauge/);
    // Without a groupConcurrency no group is full; with 2, acme (2 running) is, globex (1) is not.
    expect(text).toContain('scheduler_queue_full_groups{queue_name="tenants"} 0');
    await backend.setQueueLimits('tenants', { groupConcurrency: 2 });
    expect(await metrics()).toContain('scheduler_queue_full_groups{queue_name="tenants"} 1');
    await backend.setQueueLimits('tenants', { groupConcurrency: 1 });
    expect(await metrics()).toContain('scheduler_queue_full_groups{queue_name="tenants"} 2');
  });
});
