import { describe, expect, it } from 'vitest';
import { Worker } from '../../src/index.js';
import { QueuePicker, parseQueues } from '../../src/worker/queue-picker.js';
import { STORES } from '../helpers/stores.js';
import { useClientStore } from '../helpers/client-store.js';

describe('queue picker', () => {
  it('parses the accepted forms and rejects bad ones with the accepted form', () => {
    expect(parseQueues('critical=6,default=3,low=1')).toEqual([
      { name: 'critical', weight: 6 },
      { name: 'default', weight: 3 },
      { name: 'low', weight: 1 },
    ]);
    expect(parseQueues(['a', 'b'])).toEqual([{ name: 'a', weight: 1 }, { name: 'b', weight: 1 }]);
    expect(parseQueues({ x: 2 })).toEqual([{ name: 'x', weight: 2 }]);
    expect(() => parseQueues('a=0')).toThrow(/weight of a must be a whole number from 1 to 1000/);
    expect(() => parseQueues('a=x')).toThrow(/weight of a/);
    expect(() => parseQueues('bad name=1')).toThrow(/queue name/);
    expect(() => parseQueues('a,a')).toThrow(/listed twice/);
    expect(() => parseQueues([])).toThrow(/at least one queue/);
  });

  it('strict priority asks the highest non-exhausted queue for every slot', () => {
    const picker = new QueuePicker(parseQueues('low=1,critical=6,default=3'), true);
    expect(picker.plan(5, new Set())).toEqual([{ queue: 'critical', count: 5 }]);
    expect(picker.plan(5, new Set(['critical']))).toEqual([{ queue: 'default', count: 5 }]);
  });
});

describe.each(STORES)('queue priority on %s', (_name, openStore) => {
  const t = useClientStore(openStore);

  async function fill(queues: string[], perQueue: number): Promise<void> {
    for (const queue of queues) {
      await t.client.enqueueMany(Array.from({ length: perQueue }, (_, i) => ({ type: 'record', payload: { i }, options: { queue } })));
    }
  }

  it('weighted: over 3,000 tasks the split follows the weights within 4 percentage points', async () => {
    const queues = ['critical', 'default', 'low'];
    await fill(queues, 2000);
    const order: string[] = [];
    let resolveDone!: () => void;
    const done = new Promise<void>((r) => (resolveDone = r));
    t.worker = new Worker(t.store.backend, { concurrency: 1, queues: 'critical=6,default=3,low=1' });
    t.worker.handle('record', async (_p, ctx) => {
      order.push(ctx.task.queue);
      if (order.length === 3000) resolveDone();
    });
    await t.worker.start();
    await done;
    await t.worker.stop({ timeout: 1000 });
    const sample = order.slice(0, 3000);
    const share = (q: string) => sample.filter((x) => x === q).length / sample.length;
    // Expected 60 % / 30 % / 10 %; each queue still had tasks left, so the weights alone decide.
    expect(Math.abs(share('critical') - 0.6)).toBeLessThan(0.04);
    expect(Math.abs(share('default') - 0.3)).toBeLessThan(0.04);
    expect(Math.abs(share('low') - 0.1)).toBeLessThan(0.04);
  }, 60_000);

  it('strict: higher queues drain completely before lower ones start', async () => {
    await fill(['low'], 50);
    await fill(['default'], 50);
    await fill(['critical'], 50);
    const order: string[] = [];
    let resolveDone!: () => void;
    const done = new Promise<void>((r) => (resolveDone = r));
    t.worker = new Worker(t.store.backend, { concurrency: 5, queues: 'critical=3,default=2,low=1', strict: true });
    t.worker.handle('record', async (_p, ctx) => {
      order.push(ctx.task.queue);
      if (order.length === 150) resolveDone();
    });
    await t.worker.start();
    await done;
    expect(order.slice(0, 50).every((q) => q === 'critical')).toBe(true);
    expect(order.slice(50, 100).every((q) => q === 'default')).toBe(true);
    expect(order.slice(100).every((q) => q === 'low')).toBe(true);
  });

  it('a paused queue keeps accepting tasks but none are claimed until it is resumed', async () => {
    await t.store.backend.pauseQueue('default');
    const ran: string[] = [];
    t.worker = new Worker(t.store.backend, { concurrency: 2, idleWait: 200 });
    t.worker.handle('record', async (_p, ctx) => void ran.push(ctx.task.id));
    await t.worker.start();
    const info = await t.client.enqueue('record', {});
    await new Promise((r) => setTimeout(r, 400));
    expect(ran).toEqual([]);
    expect((await t.store.backend.getQueue('default'))!).toMatchObject({ paused: true, counts: expect.objectContaining({ queued: 1 }) });
    await t.store.backend.resumeQueue('default');
    await t.client.waitFor(info.id, { timeout: 5000 });
    expect(ran).toEqual([info.id]);
  });
});
