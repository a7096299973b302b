/**
 * Conformance: transitions stay atomic when several backends (processes) act on one store at
 * once — no task is claimed twice, an id or a unique key is granted once.
 */
import { describe, expect, it } from 'vitest';
import type { Backend } from '../contract.js';
import { completeAck, HOUR, LEASE_MS, newTask, useStore, type OpenStore } from './harness.js';

export function concurrencyConformance(openStore: OpenStore): void {
  describe('concurrent backends', () => {
    const store = useStore(openStore);

    async function backends(n: number): Promise<Backend[]> {
      const opened = [store.backend];
      for (let i = 1; i < n; i++) opened.push(await store.reopen());
      return opened;
    }

    it('never hands one task to two claimers', async () => {
      const workers = await backends(4);
      const tasks = Array.from({ length: 300 }, (_, i) => newTask('t', { i }));
      await store.backend.enqueue(tasks);
      const claimedBy = await Promise.all(
        workers.map(async (backend, w) => {
          const ids: string[] = [];
          for (;;) {
            const [result] = await backend.claim(`worker-${w}`, [{ queue: 'default', count: 7 }], LEASE_MS);
            if (result.tasks.length === 0) return ids;
            ids.push(...result.tasks.map((t) => t.id));
            expect(await backend.ack(result.tasks.map((t) => completeAck(t)))).toEqual(result.tasks.map(() => 'ok'));
          }
        }),
      );
      const all = claimedBy.flat();
      expect(all).toHaveLength(300);
      expect(new Set(all)).toEqual(new Set(tasks.map((t) => t.id)));
      expect((await store.backend.getQueue('default'))!.counts).toMatchObject({ queued: 0, running: 0, completed: 300 });
    });

    it('grants an id once when several backends enqueue it at the same time', async () => {
      const producers = await backends(4);
      const outcomes = (await Promise.all(producers.map((b, i) => b.enqueue([newTask(`p${i}`, { i }, { id: 'contended' })])))).flat();
      expect(outcomes.filter((o) => o.ok)).toHaveLength(1);
      expect(outcomes.filter((o) => !o.ok && o.reason === 'id-conflict')).toHaveLength(3);
      expect((await store.backend.getQueue('default'))!.counts.queued).toBe(1);
    });

    it('grants a unique key once when several backends enqueue at the same time', async () => {
      const producers = await backends(4);
      const outcomes = (await Promise.all(producers.map((b) => b.enqueue([newTask('report', { week: 5 }, { uniqueFor: HOUR })])))).flat();
      const winners = outcomes.filter((o) => o.ok);
      expect(winners).toHaveLength(1);
      const holder = winners[0].ok ? winners[0].info.id : '';
      expect(outcomes.filter((o) => !o.ok)).toEqual(Array.from({ length: 3 }, () => expect.objectContaining({ reason: 'unique-conflict', holder })));
    });
  });
}
