/** FreshRead (pure, with a hand-moved clock): reuse while fresh, one read in flight, a failed read not kept. */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { FreshRead } from '../../src/core/fresh-read.js';

describe('FreshRead', () => {
  it('reuses a value for freshMs, then reads again', async () => {
    const clock = new ManualClock();
    let reads = 0;
    const fresh = new FreshRead(async () => ++reads, 1_000, clock);
    expect(await fresh.get()).toBe(1);
    clock.advance(999);
    expect(await fresh.get()).toBe(1);
    clock.advance(1);
    expect(await fresh.get()).toBe(2);
  });

  it('callers at the same time share one read', async () => {
    let reads = 0;
    let finish!: (n: number) => void;
    const fresh = new FreshRead(() => new Promise<number>((resolve) => ((finish = resolve), reads++)), 1_000, new ManualClock());
    const both = Promise.all([fresh.get(), fresh.get()]);
    finish(7);
    expect(await both).toEqual([7, 7]);
    expect(reads).toBe(1);
  });

  it('a failed read reaches its callers and is not kept: the next call reads again', async () => {
    let fail = true;
    const fresh = new FreshRead(async () => {
      if (fail) throw new Error('store away');
      return 'ok';
    }, 1_000, new ManualClock());
    await expect(fresh.get()).rejects.toThrow('store away');
    fail = false;
    expect(await fresh.get()).toBe('ok');
  });
});
