/** The scheduler as a component (the shape of the worker's parts): start, check in, lead or stand by, stop and leave. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Scheduler } from '../../src/index.js';
import type { Component } from '../../src/worker/component.js';
import { STORES, type TestStore } from '../helpers/stores.js';
import { eventually } from '../helpers/processes.js';

describe.each(STORES)('scheduler lifecycle on %s', (_name, openStore) => {
  let store: TestStore;
  const running: Scheduler[] = [];

  beforeEach(async () => {
    store = await openStore();
  });

  afterEach(async () => {
    for (const scheduler of running.splice(0).reverse()) await scheduler.stop();
    await store.cleanup();
  });

  function scheduler(id: string): Scheduler {
    const instance = new Scheduler(store.backend, { id, leaseMs: 600 });
    running.push(instance);
    return instance;
  }

  it('has the components\' shape: a name, start() and stop()', () => {
    const component: Component = scheduler('a');
    expect(component.name).toBe('scheduler');
  });

  it('stop() before start() resolves, changes nothing, and releases ready()', async () => {
    const idle = scheduler('a');
    await idle.stop();
    await idle.ready();
    expect(idle.isLeader).toBe(false);
    expect((await store.backend.listSchedulers()).instances).toEqual([]);
  });

  it('the first instance leads after its first check-in; stop() leaves the registry and releases the lease', async () => {
    const a = scheduler('a');
    const epochs: number[] = [];
    a.on('leader', (epoch) => epochs.push(epoch));
    a.start();
    await a.ready();
    expect(epochs).toHaveLength(1);
    expect(a.isLeader).toBe(true);
    expect(a.view).toEqual({ leader: 'a', epoch: epochs[0], isLeader: true });
    expect((await store.backend.listSchedulers()).instances.map((i) => i.id)).toEqual(['a']);
    await a.stop();
    expect(a.isLeader).toBe(false);
    expect(await store.backend.listSchedulers()).toMatchObject({ instances: [], lease: null });
  });

  it('a second instance stands by, and leads at a higher epoch once the leader stops', async () => {
    const a = scheduler('a');
    a.start();
    await a.ready();
    const b = scheduler('b');
    const epochs: number[] = [];
    b.on('leader', (epoch) => epochs.push(epoch));
    b.start();
    await b.ready();
    const first = a.view.epoch!;
    expect(b.view).toEqual({ leader: 'a', epoch: first, isLeader: false });
    await a.stop();
    await eventually(async () => b.isLeader, 5_000);
    expect(epochs).toHaveLength(1);
    expect(epochs[0]).toBeGreaterThan(first);
    expect(b.view).toEqual({ leader: 'b', epoch: epochs[0], isLeader: true });
  });
});
