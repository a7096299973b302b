/** Distributed locks on a real store, within one process and across processes. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Locks, type Backend } from '../../src/index.js';
import { tempDir } from '../helpers/stores.js';
import { ChildWorker } from '../helpers/processes.js';
import { SHARED_STORE_KINDS, sharedStore, type SharedStore } from '../helpers/process-stores.js';

const LOCKER = fileURLToPath(new URL('../fixtures/lock-process.mjs', import.meta.url));

describe.each(SHARED_STORE_KINDS)('locks on %s', (kind) => {
  let store: SharedStore;
  let backend: Backend;
  let dir: ReturnType<typeof tempDir>;
  const children: ChildWorker[] = [];

  beforeEach(async () => {
    store = await sharedStore(kind);
    backend = store.backend;
    dir = tempDir('taskline-lock');
  });

  afterEach(async () => {
    await Promise.all(children.splice(0).map((c) => c.destroy()));
    await store.cleanup();
    dir.remove();
  });

  it('acquire, extend, release; a second owner is refused while it is held', async () => {
    const a = new Locks(backend, { owner: 'a' });
    const b = new Locks(backend, { owner: 'b' });
    const held = await a.acquire('report', { ttl: 1000 });
    expect(held).not.toBeNull();
    expect(await b.acquire('report')).toBeNull();
    expect(await held!.extend(2000)).toBe(true);
    expect(await held!.release()).toBe(true);
    expect(await held!.release()).toBe(false);
    const next = await b.acquire('report');
    expect(next!.token).toBeGreaterThan(held!.token);
    await next!.release();
  });

  it('expires after its ttl; the old holder can then neither extend nor release it', async () => {
    const a = new Locks(backend, { owner: 'a' });
    const b = new Locks(backend, { owner: 'b' });
    const first = await a.acquire('job', { ttl: 100 });
    await new Promise((r) => setTimeout(r, 150));
    const second = await b.acquire('job', { ttl: 5000 });
    expect(second).not.toBeNull();
    expect(second!.token).toBe(first!.token + 1);
    expect(await first!.extend(5000)).toBe(false);
    expect(await first!.release()).toBe(false);
    // b still holds it.
    expect(await a.acquire('job')).toBeNull();
    await second!.release();
  });

  it('withLock aborts its signal when the lock is lost, and rejects bad input', async () => {
    const a = new Locks(backend, { owner: 'a' });
    const result = await a.withLock('w', async (signal, handle) => {
      // Simulate losing the lock: someone force-releases it (as after an expiry).
      await backend.releaseLock('w', handle.owner, handle.token);
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
      return (signal.reason as Error).message;
    }, { ttl: 60 });
    expect(result).toMatch(/lock "w" was lost/);
    await expect(a.acquire('bad key')).rejects.toMatchObject({ code: 'TL_INVALID_ARGUMENT' });
    await expect(a.acquire('k', { ttl: 0 })).rejects.toMatchObject({ code: 'TL_INVALID_ARGUMENT' });
    const b = new Locks(backend, { owner: 'b' });
    const held = await b.acquire('busy', { ttl: 5000 });
    await expect(a.withLock('busy', async () => 1)).rejects.toMatchObject({ code: 'TL_TIMEOUT' });
    await held!.release();
  });

  it('four processes contending: never two holders at once, fencing tokens strictly increasing', async () => {
    const log = join(dir.path, 'lock.log');
    for (let i = 0; i < 4; i++) {
      children.push(ChildWorker.start(LOCKER, { ...store.env, KEY: 'shared', LOG: log, ROUNDS: '10', HOLD_MS: '15' }));
    }
    for (const child of children) await child.waitForLine((l) => l === 'done', 60_000);
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    expect(lines.filter((l) => l.startsWith('start'))).toHaveLength(40);
    expect(lines.some((l) => l.startsWith('lost'))).toBe(false);
    let holder: string | null = null;
    let lastToken = 0;
    for (const line of lines) {
      const [kind, token, pid] = line.split(' ');
      if (kind === 'start') {
        expect(holder, `overlap at ${line}`).toBeNull();
        expect(Number(token)).toBeGreaterThan(lastToken);
        lastToken = Number(token);
        holder = pid;
      } else if (kind === 'end') {
        expect(holder).toBe(pid);
        holder = null;
      }
    }
  }, 90_000);
});
