/** Conformance: searching tasks across queues and states (searchTasks) — every term, paging, scale. */
import { describe, expect, it } from 'vitest';
import { parseTaskQuery } from '../../core/task-query.js';
import type { TaskState } from '../../core/task.js';
import type { Backend, SearchPageOptions } from '../contract.js';
import { createInStates, enqueueOne, expectCode, HOUR, newTask, useStore, type OpenStore } from './harness.js';

const ALL_STATES: TaskState[] = ['scheduled', 'queued', 'running', 'retrying', 'completed', 'dead', 'cancelled'];

/** The ids a query finds, following the cursor to the end; checks each page's bounds. */
async function searchAll(backend: Backend, query: string, page: Omit<SearchPageOptions, 'cursor'> = {}) {
  const filter = parseTaskQuery(query);
  const ids: string[] = [];
  let cursor: string | undefined;
  let scanned = 0;
  let total = -1;
  for (let calls = 1; calls <= 10_000; calls++) {
    const result = await backend.searchTasks(filter, { ...page, cursor });
    expect(result.tasks.length).toBeLessThanOrEqual(page.limit ?? 50);
    expect(result.scanned).toBeLessThanOrEqual(page.scanLimit ?? 5000);
    if (total >= 0) expect(result.total).toBe(total);
    total = result.total;
    scanned += result.scanned;
    ids.push(...result.tasks.map((t) => t.id));
    if (result.nextCursor === null) return { ids, scanned, total, calls };
    cursor = result.nextCursor;
  }
  throw new Error('searchTasks never ended');
}

async function found(backend: Backend, query: string): Promise<string[]> {
  return (await searchAll(backend, query)).ids.sort();
}

export function searchConformance(openStore: OpenStore): void {
  describe('searchTasks', () => {
    const store = useStore(openStore);

    it('matches each term: id, type, queue, state, err, after/before, payload, bare words; all ANDed', async () => {
      const { backend } = store;
      const inStates = await createInStates(backend, 'alpha', ALL_STATES);
      const [, , , retrying, , dead] = inStates;
      const ada = await enqueueOne(backend, 'email:deliver', { user_id: 42, to: 'ada@example.com', vip: true, tags: ['a', 'b'], address: { city: 'Paris' }, note: null }, { queue: 'mail', id: 'Mail-Ada-1' });
      const bob = await enqueueOne(backend, 'email:deliver', { user_id: '42', to: 'bob@example.com', vip: false, address: { city: 'Oslo' } }, { queue: 'mail' });
      const later = await enqueueOne(await store.later(2 * HOUR), 'report:build', { user_id: 7 }, { queue: 'beta' });
      const all = [...inStates, ada, bob, later].sort();

      expect(await found(backend, '')).toEqual(all);
      expect(await found(backend, `id:${ada}`)).toEqual([ada]);
      expect(await found(backend, 'id:nope')).toEqual([]);
      expect(await found(backend, 'type:email:deliver')).toEqual([ada, bob].sort());
      expect(await found(backend, 'queue:alpha')).toEqual([...inStates].sort());
      expect(await found(backend, 'state:dead')).toEqual([dead]);
      expect(await found(backend, 'queue:alpha state:retrying')).toEqual([retrying]);
      expect(await found(backend, 'err:BOO')).toEqual([retrying]);
      expect(await found(backend, 'err:"fat" err:al')).toEqual([dead]);
      const { createdAt } = (await backend.getTask(later))!;
      const hourBefore = new Date(createdAt - HOUR).toISOString();
      expect(await found(backend, `after:${hourBefore}`)).toEqual([later]);
      expect(await found(backend, `before:${hourBefore}`)).toEqual(all.filter((id) => id !== later));
      expect(await found(backend, `after:${new Date(createdAt).toISOString()} before:${new Date(createdAt + 1).toISOString()}`)).toEqual([later]);
      expect(await found(backend, 'payload.user_id:42')).toEqual([ada]);
      expect(await found(backend, 'payload.user_id:"42"')).toEqual([bob]);
      expect(await found(backend, 'payload.to:bob@example.com')).toEqual([bob]);
      expect(await found(backend, 'payload.vip:true')).toEqual([ada]);
      expect(await found(backend, 'payload.vip:false')).toEqual([bob]);
      expect(await found(backend, 'payload.note:null')).toEqual([ada]);
      expect(await found(backend, 'payload.address.city:Oslo')).toEqual([bob]);
      expect(await found(backend, 'payload.address:{"city":"Paris"}')).toEqual([ada]);
      expect(await found(backend, 'payload.tags:["a","b"]')).toEqual([ada]);
      expect(await found(backend, 'payload.tags.0:a')).toEqual([]);
      expect(await found(backend, 'payload.missing:null')).toEqual([]);
      // payload:<text>: the payload's JSON text contains it, in any case of ASCII letters.
      expect(await found(backend, 'payload:ADA@example')).toEqual([ada]);
      expect(await found(backend, 'payload:example.com')).toEqual([ada, bob].sort());
      expect(await found(backend, 'payload:"city":"Oslo"')).toEqual([bob]);
      expect(await found(backend, 'payload:Paris payload:vip')).toEqual([ada]);
      expect(await found(backend, `id:${ada} payload:paris`)).toEqual([ada]);
      expect(await found(backend, `id:${ada} payload:oslo`)).toEqual([]);
      expect(await found(backend, 'payload:nowhere')).toEqual([]);
      expect(await found(backend, 'mail-ada')).toEqual([ada]);
      expect(await found(backend, 'EMAIL')).toEqual([ada, bob].sort());
      expect(await found(backend, 'report:')).toEqual([later]);
      expect(await found(backend, `id:${ada} queue:mail state:queued type:email:deliver payload.user_id:42 deliver`)).toEqual([ada]);
      expect(await found(backend, `id:${ada} queue:alpha`)).toEqual([]);
      expect(await found(backend, `id:${ada} state:dead`)).toEqual([]);
      expect(await found(backend, 'type:email:deliver payload.vip:true payload.user_id:"42"')).toEqual([]);
    });

    it('a filter that matches nothing answers no tasks, no cursor, and the scope it looked at', async () => {
      const { backend } = store;
      await createInStates(backend, 'alpha', ['queued', 'dead', 'dead']);
      for (const query of ['type:nope', 'queue:nope', 'queue:alpha state:running', 'err:nothing-like-this', 'payload.x:1', 'zzz']) {
        const page = await backend.searchTasks(parseTaskQuery(query));
        expect(page.tasks, query).toEqual([]);
        expect(page.nextCursor, query).toBeNull();
      }
      expect(await backend.searchTasks(parseTaskQuery('type:nope'))).toMatchObject({ scanned: 3, total: 3 });
      expect(await backend.searchTasks(parseTaskQuery('state:dead type:nope'))).toMatchObject({ scanned: 2, total: 2 });
      expect(await backend.searchTasks(parseTaskQuery('queue:nope'))).toMatchObject({ scanned: 0, total: 0 });
      expect(await backend.searchTasks(parseTaskQuery('id:nope'))).toMatchObject({ scanned: 0, total: 0 });
    });

    it('pages through to the end without repeats or misses, each call within its limit and scan limit', async () => {
      const { backend } = store;
      const expected = new Map<string, number>();
      for (const queue of ['q-b', 'q-a', 'q-c']) {
        const tasks = Array.from({ length: 60 }, (_, i) => newTask('page:t', { group: i % 3 }, { queue, delay: i % 2 === 0 ? HOUR : undefined }));
        expect((await backend.enqueue(tasks)).every((o) => o.ok)).toBe(true);
        for (const [i, task] of tasks.entries()) expected.set(task.id, i % 3);
      }
      const everyOne = await searchAll(backend, '', { limit: 9, scanLimit: 20 });
      expect(everyOne.ids).toHaveLength(180);
      expect(new Set(everyOne.ids).size).toBe(180);
      expect(everyOne).toMatchObject({ total: 180, scanned: 180 });
      const groupOne = await searchAll(backend, 'payload.group:1', { limit: 7, scanLimit: 20 });
      const want = [...expected].filter(([, group]) => group === 1).map(([id]) => id);
      expect(groupOne.ids.sort()).toEqual(want.sort());
      expect(groupOne.scanned).toBe(180);
      expect(groupOne.calls).toBeGreaterThanOrEqual(9);
      // Queues by name, states in lifecycle order, each state in its listing order.
      const scheduledFirst = await searchAll(backend, 'queue:q-a', { limit: 1000 });
      const aScheduled = (await backend.listTasks('q-a', 'scheduled', { limit: 1000 })).tasks.map((t) => t.id);
      const aQueued = (await backend.listTasks('q-a', 'queued', { limit: 1000 })).tasks.map((t) => t.id);
      expect(scheduledFirst.ids).toEqual([...aScheduled, ...aQueued]);
    });

    it('goes on where it stopped when tasks it passed have moved (a bulk action acting page by page)', async () => {
      const { backend } = store;
      const tasks = Array.from({ length: 40 }, (_, i) => newTask('move:t', { i }, { delay: HOUR }));
      await backend.enqueue(tasks);
      await backend.enqueue(Array.from({ length: 30 }, (_, i) => newTask('move:t', { i })));
      const seen = new Set<string>();
      for (const query of ['state:scheduled', 'state:queued']) {
        const filter = parseTaskQuery(query);
        let cursor: string | undefined;
        do {
          const page = await backend.searchTasks(filter, { limit: 7, cursor });
          for (const task of page.tasks) {
            expect(seen.has(task.id)).toBe(false);
            seen.add(task.id);
            await backend.archiveTask(task.id);
          }
          cursor = page.nextCursor ?? undefined;
        } while (cursor !== undefined);
      }
      expect(seen.size).toBe(70);
      expect((await backend.getQueue('default'))!.counts).toMatchObject({ scheduled: 0, queued: 0, dead: 70 });
    });

    it('the anchor task is gone: the next page still finds every task that stayed in the scope', async () => {
      const { backend } = store;
      for (const state of ['scheduled', 'queued'] as const) {
        // Distinct run times: in a state ordered by time, where the anchor stood is known.
        const tasks = Array.from({ length: 120 }, (_, i) => newTask('anchor:t', { i }, { queue: `q-${state}`, delay: state === 'scheduled' ? HOUR + i * 1000 : undefined }));
        expect((await backend.enqueue(tasks)).every((o) => o.ok)).toBe(true);
        const filter = parseTaskQuery(`queue:q-${state} state:${state}`);
        const first = await backend.searchTasks(filter, { limit: 50 });
        expect(first.tasks).toHaveLength(50);
        const [anchor] = (await backend.searchTasks(filter, { limit: 1, cursor: first.nextCursor! })).tasks.map((t) => t.id);
        const pageOne = first.tasks.map((t) => t.id);
        expect(pageOne).not.toContain(anchor);
        // Some tasks of page one move out, and so does the one the cursor would go on from.
        for (const id of pageOne.slice(0, 10)) await backend.archiveTask(id);
        await backend.deleteTask(anchor);
        const rest: string[] = [];
        let cursor: string | undefined = first.nextCursor!;
        do {
          const page = await backend.searchTasks(filter, { limit: 50, cursor });
          rest.push(...page.tasks.map((t) => t.id));
          cursor = page.nextCursor ?? undefined;
        } while (cursor !== undefined);
        const unseen = tasks.map((t) => t.id).filter((id) => !pageOne.includes(id) && id !== anchor);
        expect(unseen).toHaveLength(69);
        // None skipped; a store may repeat tasks of page one that stayed, never one that left.
        expect(unseen.filter((id) => !rest.includes(id)), state).toEqual([]);
        expect(rest.filter((id) => !unseen.includes(id) && !pageOne.slice(10).includes(id))).toEqual([]);
        if (state === 'scheduled') expect(rest.sort()).toEqual(unseen.sort());
      }
    });

    it('refuses a cursor of another search, junk, and limits out of range (TL_INVALID_ARGUMENT)', async () => {
      const { backend } = store;
      await backend.enqueue(Array.from({ length: 5 }, () => newTask('t')));
      const page = await backend.searchTasks(parseTaskQuery('type:t'), { limit: 2 });
      expect(page.nextCursor).not.toBeNull();
      await expectCode(backend.searchTasks(parseTaskQuery('type:u'), { cursor: page.nextCursor! }), 'TL_INVALID_ARGUMENT');
      await expectCode(backend.searchTasks(parseTaskQuery('type:t'), { cursor: 'junk' }), 'TL_INVALID_ARGUMENT');
      await expectCode(backend.searchTasks(parseTaskQuery('type:t'), { cursor: `${page.nextCursor!}x` }), 'TL_INVALID_ARGUMENT');
      await expectCode(backend.searchTasks(parseTaskQuery('type:t'), { limit: 0 }), 'TL_INVALID_ARGUMENT');
      await expectCode(backend.searchTasks(parseTaskQuery('type:t'), { limit: 1001 }), 'TL_INVALID_ARGUMENT');
      await expectCode(backend.searchTasks(parseTaskQuery('type:t'), { scanLimit: 0 }), 'TL_INVALID_ARGUMENT');
      const next = await backend.searchTasks(parseTaskQuery('type:t'), { limit: 2, cursor: page.nextCursor! });
      expect(next.tasks).toHaveLength(2);
    });

    it('finds a payload value among 100,000 tasks, examining at most 5,000 per call', { timeout: 60_000 }, async () => {
      const { backend } = store;
      const wanted: string[] = [];
      for (let batch = 0; batch < 100; batch++) {
        const tasks = Array.from({ length: 1000 }, (_, i) => newTask('bulk:import', { user_id: i, batch }, { queue: batch % 2 === 0 ? 'even' : 'odd' }));
        wanted.push(tasks[42].id);
        const outcomes = await backend.enqueue(tasks);
        expect(outcomes.every((o) => o.ok)).toBe(true);
      }
      const result = await searchAll(backend, 'payload.user_id:42', { limit: 1000 });
      expect(result.ids.sort()).toEqual(wanted.sort());
      expect(result).toMatchObject({ total: 100_000, scanned: 100_000, calls: 20 });
    });
  });
}
