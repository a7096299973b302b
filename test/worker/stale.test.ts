/**
 * A worker whose lease was lost (its task recovered by another backend whose clock is past the
 * lease) reports the attempt as `stale`, whichever way it learns of the loss: the lease keeper's
 * renewal before the result is written, or the store refusing the ack's token.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Client, Worker } from '../../src/index.js';
import type { Backend } from '../../src/backend/contract.js';
import { STORES, type TestStore } from '../helpers/stores.js';

const HOUR = 3_600_000;

describe.each(STORES)('stale attempts on %s', (_name, openStore) => {
  let store: TestStore;
  let client: Client;
  let worker: Worker | null = null;
  let events: string[];

  beforeEach(async () => {
    store = await openStore();
    client = new Client(store.backend);
    events = [];
  });

  afterEach(async () => {
    await worker?.stop({ timeout: 1000 });
    worker = null;
    await client.close();
    await store.cleanup();
  });

  /** A worker with one handler for `slow`, recording its events. */
  function start(leaseMs: number, handler: (signal: AbortSignal) => Promise<unknown>): Worker {
    const w = new Worker(store.backend, { leaseMs, idleWait: 500, recoverInterval: 60_000 });
    w.handle('slow', (_payload, ctx) => handler(ctx.signal));
    w.on('completed', (task) => events.push(`completed ${task.id}`));
    w.on('failed', (task) => events.push(`failed ${task.id}`));
    w.on('stale', (task) => events.push(`stale ${task.id}`));
    worker = w;
    void w.start();
    return w;
  }

  /** A handler that says when it runs and then waits, ignoring its signal, until released. */
  function heldHandler(result?: unknown) {
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const handler = async () => {
      started();
      await held;
      return result;
    };
    return { running, release, handler };
  }

  /** Recovers the queue's leases from a backend whose clock is an hour ahead (past any lease here). */
  async function recoverElsewhere(): Promise<Backend> {
    const later = await store.reopen({ clockOffsetMs: HOUR });
    expect(await later.recoverExpired('default', 10)).toBe(1);
    return later;
  }

  it('the lease keeper finds the lease lost before the handler ends: stale, nothing written', async () => {
    // The handler outlives its lease and ignores the abort: only the lease keeper can end the attempt.
    const { running, release, handler } = heldHandler('late');
    start(300, handler);
    const { id } = await client.enqueue('slow', {}, { maxRetries: 0 });
    await running;
    await recoverElsewhere();
    const recovered = await client.getTask(id);
    expect(recovered).toMatchObject({ state: 'dead', lastError: 'lease expired (worker lost)' });
    // The keeper renews every 100 ms.
    await expect.poll(() => events, { timeout: 5000 }).toEqual([`stale ${id}`]);
    release();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(events).toEqual([`stale ${id}`]);
    expect(await client.getTask(id)).toEqual(recovered);
  });

  it('the handler ends before the loss is noticed: the ack is refused and reported stale', async () => {
    // A long lease: its keeper renews every 20 s, so only the ack can find the loss.
    const { running, release, handler } = heldHandler('late');
    start(60_000, handler);
    const { id } = await client.enqueue('slow', {}, { maxRetries: 0 });
    await running;
    await recoverElsewhere();
    const recovered = await client.getTask(id);
    release();
    await expect.poll(() => events, { timeout: 5000 }).toEqual([`stale ${id}`]);
    expect(await client.getTask(id)).toEqual(recovered);
  });

  it('a cancel the handler ignores, then the lease lost: stale', async () => {
    const { running, release, handler } = heldHandler();
    start(300, handler);
    const { id } = await client.enqueue('slow', {}, { maxRetries: 0 });
    await running;
    expect(await store.backend.cancelTask(id)).toBe('cancel-requested');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(events).toEqual([]);
    await recoverElsewhere();
    await expect.poll(() => events, { timeout: 5000 }).toEqual([`stale ${id}`]);
    release();
  });
});
