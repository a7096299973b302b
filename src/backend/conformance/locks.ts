/**
 * Conformance: distributed locks with fencing tokens — mutual exclusion, expiry by
 * the store clock, strictly increasing tokens per key, and extend/release only by the holder.
 */
import { describe, expect, it } from 'vitest';
import { expectCode, useStore, type OpenStore } from './harness.js';

const TTL = 5_000;

export function lockConformance(openStore: OpenStore): void {
  describe('locks', () => {
    const store = useStore(openStore);

    it('acquire returns strictly increasing fencing tokens per key', async () => {
      const { backend } = store;
      const tokens: number[] = [];
      for (let i = 0; i < 4; i++) {
        const token = await backend.acquireLock('report', `owner-${i}`, TTL);
        expect(token).not.toBeNull();
        tokens.push(token!);
        expect(await backend.releaseLock('report', `owner-${i}`, token!)).toBe(true);
      }
      for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]);
      expect(tokens[0]).toBeGreaterThan(0);
      // Another key has its own lock.
      const other = await backend.acquireLock('billing:eu', 'owner-0', TTL);
      expect(other).not.toBeNull();
      expect(await backend.acquireLock('report', 'owner-9', TTL)).toBeGreaterThan(tokens[3]);
    });

    it('a held lock refuses every other acquirer, on any backend on the store', async () => {
      const { backend } = store;
      const token = await backend.acquireLock('k', 'a', TTL);
      expect(token).not.toBeNull();
      expect(await backend.acquireLock('k', 'b', TTL)).toBeNull();
      expect(await (await store.reopen()).acquireLock('k', 'b', TTL)).toBeNull();
      expect(await (await store.later(TTL - 1000)).acquireLock('k', 'b', TTL)).toBeNull();
    });

    it('only one of many concurrent acquirers gets the lock', async () => {
      const backends = [store.backend, await store.reopen(), await store.reopen()];
      const tokens = await Promise.all(backends.flatMap((b, i) => [0, 1, 2].map((j) => b.acquireLock('contended', `owner-${i}-${j}`, TTL))));
      expect(tokens.filter((t) => t !== null)).toHaveLength(1);
    });

    it('an expired lock lets another owner in with a greater token; the old holder can no longer extend or release it', async () => {
      const { backend } = store;
      const first = (await backend.acquireLock('k', 'a', TTL))!;
      const later = (await store.later(TTL + 1000));
      const second = await later.acquireLock('k', 'b', TTL);
      expect(second).toBeGreaterThan(first);
      expect(await later.extendLock('k', 'a', first, TTL)).toBe(false);
      expect(await later.releaseLock('k', 'a', first)).toBe(false);
      expect(await later.acquireLock('k', 'c', TTL)).toBeNull();
      expect(await later.releaseLock('k', 'b', second!)).toBe(true);
    });

    it('an expired lock cannot be extended, even by its owner', async () => {
      const { backend } = store;
      const token = (await backend.acquireLock('k', 'a', TTL))!;
      expect(await (await store.later(TTL + 1000)).extendLock('k', 'a', token, TTL)).toBe(false);
    });

    it('extend by the holder keeps the lock past its first expiry', async () => {
      const { backend } = store;
      const token = (await backend.acquireLock('k', 'a', TTL))!;
      expect(await backend.extendLock('k', 'a', token, 60_000)).toBe(true);
      const later = (await store.later(TTL + 1000));
      expect(await later.acquireLock('k', 'b', TTL)).toBeNull();
      expect(await (await store.later(61_000)).acquireLock('k', 'b', TTL)).toBeGreaterThan(token);
    });

    it('extend and release by a non-owner or with a stale token do nothing', async () => {
      const { backend } = store;
      const old = (await backend.acquireLock('k', 'a', TTL))!;
      expect(await backend.releaseLock('k', 'a', old)).toBe(true);
      const token = (await backend.acquireLock('k', 'a', TTL))!;
      expect(await backend.extendLock('k', 'b', token, 60_000)).toBe(false);
      expect(await backend.releaseLock('k', 'b', token)).toBe(false);
      expect(await backend.extendLock('k', 'a', old, 60_000)).toBe(false);
      expect(await backend.releaseLock('k', 'a', old)).toBe(false);
      expect(await backend.acquireLock('k', 'b', TTL)).toBeNull();
      // Nothing was extended: the lock expires as first granted.
      expect(await (await store.later(TTL + 1000)).acquireLock('k', 'b', TTL)).toBeGreaterThan(token);
    });

    it('release frees the lock at once; releasing twice returns false', async () => {
      const { backend } = store;
      const token = (await backend.acquireLock('k', 'a', TTL))!;
      expect(await backend.releaseLock('k', 'a', token)).toBe(true);
      expect(await backend.releaseLock('k', 'a', token)).toBe(false);
      expect(await backend.extendLock('k', 'a', token, TTL)).toBe(false);
      expect(await backend.acquireLock('k', 'b', TTL)).toBeGreaterThan(token);
    });

    it('extend and release of a lock never taken return false', async () => {
      const { backend } = store;
      expect(await backend.extendLock('free', 'a', 1, TTL)).toBe(false);
      expect(await backend.releaseLock('free', 'a', 1)).toBe(false);
    });

    it('rejects an invalid key with TL_INVALID_ARGUMENT', async () => {
      const { backend } = store;
      for (const key of ['', 'with space', 'tag{x}', 'x'.repeat(201)]) {
        await expectCode(backend.acquireLock(key, 'a', TTL), 'TL_INVALID_ARGUMENT');
        await expectCode(backend.extendLock(key, 'a', 1, TTL), 'TL_INVALID_ARGUMENT');
        await expectCode(backend.releaseLock(key, 'a', 1), 'TL_INVALID_ARGUMENT');
      }
    });
  });
}
