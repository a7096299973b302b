import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AckResult } from '../../src/backend/contract.js';
import { completeAck, enqueueOne, WORKER } from '../../src/backend/conformance/harness.js';
import { Acker } from '../../src/worker/acker.js';
import { STORES, type TestStore } from '../helpers/stores.js';

// The Acker writes acks in batches; the processor takes most of them first, to send with its
// next claim (Backend.ackAndClaim). Taken acks must come back: written, or retried.
describe.each(STORES)('Acker on %s', (_name, openStore) => {
  let store: TestStore;
  const written: [string, AckResult | 'abandoned'][] = [];
  let acker: Acker<string>;

  beforeEach(async () => {
    store = await openStore();
    written.length = 0;
    acker = new Acker<string>(store.backend, (owner, result) => written.push([owner, result]), () => undefined);
  });

  afterEach(async () => {
    await acker.drain();
    await store.cleanup();
  });

  async function claimed(n: number) {
    for (let i = 0; i < n; i++) await enqueueOne(store.backend);
    const [result] = await store.backend.claim(WORKER, [{ queue: 'default', count: n }], 30_000);
    return result.tasks;
  }

  it('hands over only the acks the taker asks for; the rest are flushed as usual', async () => {
    const tasks = await claimed(3);
    tasks.forEach((task, i) => acker.write(completeAck(task), `owner-${i}`));
    const taken = acker.take((owner) => owner !== 'owner-1');
    expect(taken.map((p) => p.owner)).toEqual(['owner-0', 'owner-2']);
    await acker.drain();
    expect(written).toEqual([['owner-1', 'ok']]);
    const reply = await store.backend.ackAndClaim(taken.map((p) => p.ack), WORKER, [], 30_000);
    acker.settle(taken, reply.acks);
    expect(written).toEqual([['owner-1', 'ok'], ['owner-0', 'ok'], ['owner-2', 'ok']]);
    for (const task of tasks) expect(await store.backend.getTask(task.id)).toMatchObject({ state: 'completed' });
  });

  it('writes acks given back after a failed call, so none is lost', async () => {
    const tasks = await claimed(2);
    tasks.forEach((task, i) => acker.write(completeAck(task), `owner-${i}`));
    const taken = acker.take(() => true);
    expect(taken).toHaveLength(2);
    expect(acker.take(() => true)).toEqual([]);
    acker.giveBack(taken);
    await acker.drain();
    expect(written).toEqual([['owner-0', 'ok'], ['owner-1', 'ok']]);
    for (const task of tasks) expect(await store.backend.getTask(task.id)).toMatchObject({ state: 'completed' });
  });

  it('gives nothing to take once abandoned, and reports acks given back then as abandoned', async () => {
    const tasks = await claimed(2);
    acker.write(completeAck(tasks[0]), 'taken');
    const taken = acker.take(() => true);
    acker.abandon();
    acker.write(completeAck(tasks[1]), 'late');
    expect(acker.take(() => true)).toEqual([]);
    acker.giveBack(taken);
    expect(written).toEqual([['late', 'abandoned'], ['taken', 'abandoned']]);
    expect(await store.backend.getTask(tasks[0].id)).toMatchObject({ state: 'running' });
  });
});
