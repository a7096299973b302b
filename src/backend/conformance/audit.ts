/** Conformance: the audit log — entries newest first, bounded retention, cursor paging. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_AUDIT_KEEP, type AuditEntry, type Backend } from '../contract.js';
import { expectCode, useStore, type OpenStore } from './harness.js';

function entry(n: number, extra: Partial<AuditEntry> = {}): AuditEntry {
  return { at: 1_780_000_000_000 + n, token: 'admin', method: 'POST', route: '/api/v1/tasks/:id/run', target: `task-${n}`, status: 200, code: null, detail: null, ...extra };
}

async function listEvery(backend: Backend, limit: number): Promise<{ entries: AuditEntry[]; pages: number }> {
  const entries: AuditEntry[] = [];
  let cursor: string | undefined;
  for (let pages = 1; pages < 10_000; pages++) {
    const page = await backend.listAudit({ limit, cursor });
    expect(page.entries.length).toBeLessThanOrEqual(limit);
    entries.push(...page.entries);
    if (page.nextCursor === null) return { entries, pages };
    cursor = page.nextCursor;
  }
  throw new Error('listAudit never ended');
}

export function auditConformance(openStore: OpenStore): void {
  describe('recordAudit and listAudit', () => {
    const store = useStore(openStore);

    it('lists entries newest first with every field as recorded', async () => {
      const { backend } = store;
      expect(await backend.listAudit()).toEqual({ entries: [], nextCursor: null });
      await backend.recordAudit(entry(1));
      await backend.recordAudit(entry(2, { token: 'read', method: 'DELETE', route: '/api/v1/schedules/:id', target: null, status: 403, code: 'TL_FORBIDDEN' }));
      await backend.recordAudit(entry(3, { token: 'none', status: 401, code: 'TL_UNAUTHORIZED', target: 'x'.repeat(2000) }));
      const { entries, nextCursor } = await backend.listAudit();
      expect(nextCursor).toBeNull();
      expect(entries).toEqual([
        { ...entry(3, { token: 'none', status: 401, code: 'TL_UNAUTHORIZED' }), target: `${'x'.repeat(500)}…` },
        entry(2, { token: 'read', method: 'DELETE', route: '/api/v1/schedules/:id', target: null, status: 403, code: 'TL_FORBIDDEN' }),
        entry(1),
      ]);
    });

    it('keeps an entry\'s detail, bounded: scalars as they are, other values as text, long texts cut', async () => {
      const { backend } = store;
      await backend.recordAudit(entry(1, { detail: { queue: 'mail', state: 'dead', dryRun: true, n: 3, none: null } }));
      const many = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${String(i).padStart(2, '0')}`, i]));
      await backend.recordAudit(entry(2, { detail: many }));
      await backend.recordAudit(entry(3, { detail: { q: 'q'.repeat(2000), odd: { a: 1 } as never } }));
      await backend.recordAudit(entry(4, { detail: {} }));
      const { entries } = await backend.listAudit();
      expect(entries.map((e) => e.detail)).toEqual([
        null,
        { q: `${'q'.repeat(500)}…`, odd: '{"a":1}' },
        Object.fromEntries(Object.entries(many).slice(0, 16)),
        { queue: 'mail', state: 'dead', dryRun: true, n: 3, none: null },
      ]);
    });

    it('keeps the newest entries within the bound, deleting older ones as new ones come', async () => {
      const { backend } = store;
      for (let n = 1; n <= 25; n++) await backend.recordAudit(entry(n), 10);
      const { entries } = await listEvery(backend, 100);
      expect(entries.map((e) => e.target)).toEqual(Array.from({ length: 10 }, (_, i) => `task-${25 - i}`));
      await expectCode(backend.recordAudit(entry(26), 0), 'TL_INVALID_ARGUMENT');
      await expectCode(backend.recordAudit({ ...entry(27), status: 1.5 }), 'TL_INVALID_ARGUMENT');
    });

    it(`keeps ${DEFAULT_AUDIT_KEEP} entries by default`, { timeout: 60_000 }, async () => {
      const { backend } = store;
      const count = DEFAULT_AUDIT_KEEP + 10;
      for (let n = 1; n <= count; n += 100) await Promise.all(Array.from({ length: 100 }, (_, i) => backend.recordAudit(entry(n + i))));
      const { entries } = await listEvery(backend, 1000);
      expect(entries).toHaveLength(DEFAULT_AUDIT_KEEP);
      expect(new Set(entries.map((e) => e.at)).has(entry(count).at)).toBe(true);
      expect(Math.min(...entries.map((e) => e.at))).toBeGreaterThan(entry(10).at);
    });

    it('pages with the cursor to the end without repeats; a cursor that no page returned is refused', async () => {
      const { backend } = store;
      for (let n = 1; n <= 23; n++) await backend.recordAudit(entry(n));
      const { entries, pages } = await listEvery(backend, 5);
      expect(pages).toBe(5);
      expect(entries.map((e) => e.target)).toEqual(Array.from({ length: 23 }, (_, i) => `task-${23 - i}`));
      const first = await backend.listAudit({ limit: 5 });
      await expectCode(backend.listAudit({ cursor: 'junk' }), 'TL_INVALID_ARGUMENT');
      await expectCode(backend.listAudit({ cursor: `${first.nextCursor!}x` }), 'TL_INVALID_ARGUMENT');
      await expectCode(backend.listAudit({ limit: 0 }), 'TL_INVALID_ARGUMENT');
      await expectCode(backend.listAudit({ limit: 1001 }), 'TL_INVALID_ARGUMENT');
    });
  });
}
