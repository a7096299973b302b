/** Conformance: reading the store — queues, tasks, statistics — and retention clean-up. */
import { describe, expect, it } from 'vitest';
import type { TaskRecord, TaskState } from '../../core/task.js';
import { dayString, MAX_STAT_DAYS, MAX_STAT_MINUTES } from '../shared.js';
import { noLimits } from '../contract.js';
import {
  ackOk, attemptOf, claimTask, completeAck, createInStates, DAY, deadAck, enqueueOne, expectCode, HOUR, listAll, newTask, retryAck,
  useStore, WORKER, type OpenStore,
} from './harness.js';

const ALL_STATES: TaskState[] = ['scheduled', 'queued', 'running', 'retrying', 'completed', 'dead', 'cancelled'];
const MINUTE = 60_000;

export function inspectionConformance(openStore: OpenStore): void {
  describe('listQueues and getQueue', () => {
    const store = useStore(openStore);

    it('knows no queue on an empty store', async () => {
      const { backend } = store;
      expect(await backend.listQueues()).toEqual([]);
      expect(await backend.getQueue('default')).toBeNull();
    });

    it('lists every queue that was used, by name', async () => {
      const { backend } = store;
      await enqueueOne(backend, 't', {}, { queue: 'beta' });
      await enqueueOne(backend, 't', {}, { queue: 'alpha' });
      await backend.pauseQueue('gamma');
      expect((await backend.listQueues()).map((q) => q.name)).toEqual(['alpha', 'beta', 'gamma']);
      expect(await backend.getQueue('gamma')).toMatchObject({ name: 'gamma', paused: true, processed: 0, failed: 0, latency: 0 });
      expect(await backend.getQueue('delta')).toBeNull();
    });

    it('counts tasks per state and attempts processed and failed', async () => {
      const { backend } = store;
      await createInStates(backend, 'default', [...ALL_STATES, 'queued', 'completed']);
      await enqueueOne(backend, 't', {}, { queue: 'elsewhere' });
      const expected = {
        name: 'default', paused: false, keep: { completed: null, dead: null, cancelled: null }, limits: noLimits(), held: null, refused: 0, groups: { waiting: 0, running: {} },
        counts: { scheduled: 1, queued: 2, running: 1, retrying: 1, completed: 2, dead: 1, cancelled: 1 },
        processed: 4, failed: 2, latency: expect.any(Number),
      };
      expect(await backend.getQueue('default')).toEqual(expected);
      const listed = await backend.listQueues();
      expect(listed.map((q) => q.name)).toEqual(['default', 'elsewhere']);
      expect(listed[0]).toEqual(expected);
      expect(listed[1].counts).toEqual({ scheduled: 0, queued: 1, running: 0, retrying: 0, completed: 0, dead: 0, cancelled: 0 });
    });

    it('reports latency as the age of the oldest queued task', async () => {
      const { backend } = store;
      await enqueueOne(backend, 't', {}, { delay: HOUR });
      expect((await backend.getQueue('default'))!.latency).toBe(0);
      const oldest = await enqueueOne(backend);
      await enqueueOne(await store.later(3000));
      const { enqueuedAt } = (await backend.getTask(oldest))!;
      const later = await store.later(10_000);
      const before = await later.now();
      const info = (await later.getQueue('default'))!;
      const after = await later.now();
      expect(info.latency).toBeGreaterThanOrEqual(before - enqueuedAt!);
      expect(info.latency).toBeLessThanOrEqual(after - enqueuedAt!);
      expect(info.latency).toBeGreaterThanOrEqual(10_000);
    });
  });

  describe('listTasks', () => {
    const store = useStore(openStore);

    it('lists the tasks in each state as full records', async () => {
      const { backend } = store;
      const ids = await createInStates(backend, 'default', ALL_STATES);
      for (const [i, state] of ALL_STATES.entries()) {
        const page = await backend.listTasks('default', state);
        expect(page.nextCursor).toBeNull();
        expect(page.tasks.map((t) => t.id)).toEqual([ids[i]]);
        expect(page.tasks[0]).toEqual(await backend.getTask(ids[i]));
        expect(page.tasks[0]).toMatchObject({ state, type: `state:${state}`, payload: { index: i }, queue: 'default' });
      }
    });

    it('lists queued tasks oldest first, in pages', async () => {
      const { backend } = store;
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push(await enqueueOne(backend, 't', { i }));
      const first = await backend.listTasks('default', 'queued', { limit: 2 });
      expect(first.tasks.map((t) => t.id)).toEqual(ids.slice(0, 2));
      expect(first.nextCursor).not.toBeNull();
      const second = await backend.listTasks('default', 'queued', { limit: 2, cursor: first.nextCursor! });
      expect(second.tasks.map((t) => t.id)).toEqual(ids.slice(2, 4));
      expect(second.nextCursor).not.toBeNull();
      const third = await backend.listTasks('default', 'queued', { limit: 2, cursor: second.nextCursor! });
      expect(third.tasks.map((t) => t.id)).toEqual(ids.slice(4));
      expect(third.nextCursor).toBeNull();
    });

    it('lists scheduled and retrying tasks by due time, in pages', async () => {
      const { backend } = store;
      const c = await enqueueOne(backend, 't', {}, { delay: 3 * HOUR });
      const a = await enqueueOne(backend, 't', {}, { delay: 1 * HOUR });
      const b = await enqueueOne(backend, 't', {}, { delay: 2 * HOUR });
      expect(await listAll(backend, 'default', 'scheduled', 1)).toEqual([a, b, c]);
      const r2 = await enqueueOne(backend);
      await ackOk(backend, retryAck(await claimTask(backend, r2), 'x', 2 * HOUR));
      const r1 = await enqueueOne(backend);
      await ackOk(backend, retryAck(await claimTask(backend, r1), 'x', HOUR));
      expect(await listAll(backend, 'default', 'retrying', 1)).toEqual([r1, r2]);
    });

    it('pages through many finished tasks without loss or repetition', async () => {
      const { backend } = store;
      await backend.enqueue(Array.from({ length: 25 }, (_, i) => newTask('t', { i })));
      const [claim] = await backend.claim(WORKER, [{ queue: 'default', count: 25 }], 60_000);
      expect(await backend.ack(claim.tasks.map((t) => completeAck(t, t.id)))).toEqual(Array(25).fill('ok'));
      const pages: TaskRecord[][] = [];
      let cursor: string | undefined;
      do {
        const page = await backend.listTasks('default', 'completed', { limit: 10, cursor });
        expect(page.tasks.length).toBeLessThanOrEqual(10);
        pages.push(page.tasks);
        cursor = page.nextCursor ?? undefined;
      } while (cursor !== undefined && pages.length < 10);
      const ids = pages.flat().map((t) => t.id);
      expect(ids).toHaveLength(25);
      expect(new Set(ids)).toEqual(new Set(claim.tasks.map((t) => t.id)));
      expect(pages.flat().every((t) => t.state === 'completed' && t.result === t.id)).toBe(true);
    });

    it('refuses a cursor no previous page returned, naming the cursor, instead of starting over', async () => {
      const { backend } = store;
      for (let i = 0; i < 3; i++) await enqueueOne(backend, 't', { i });
      const { nextCursor } = await backend.listTasks('default', 'queued', { limit: 1 });
      expect(nextCursor).not.toBeNull();
      const edited = `${nextCursor!.slice(0, -1)}${nextCursor!.endsWith('A') ? 'B' : 'A'}`;
      const junk = ['99999999999999999999', 'zzz', '-1', '1.5', '0', '1', '', ' ', 'x'.repeat(500), 'x'.repeat(5000), '.', `${nextCursor}.`, edited, '\ud800'];
      for (const cursor of junk) {
        await expectCode(backend.listTasks('default', 'queued', { limit: 1, cursor }), 'TL_INVALID_ARGUMENT');
      }
      // A cursor of another listing: another state or another queue.
      await expectCode(backend.listTasks('default', 'scheduled', { limit: 1, cursor: nextCursor! }), 'TL_INVALID_ARGUMENT');
      await expectCode(backend.listTasks('other', 'queued', { limit: 1, cursor: nextCursor! }), 'TL_INVALID_ARGUMENT');
      // Not a string at all (JavaScript callers).
      for (const cursor of [null, 5, {}]) {
        await expectCode(backend.listTasks('default', 'queued', { limit: 1, cursor: cursor as unknown as string }), 'TL_INVALID_ARGUMENT');
      }
      const error = await backend.listTasks('default', 'queued', { cursor: 'zzz' }).catch((e: unknown) => e);
      expect((error as Error).message).toMatch(/cursor/);
      expect((error as Error).message).toMatch(/next_cursor/);
      // The real cursor still works.
      expect((await backend.listTasks('default', 'queued', { limit: 1, cursor: nextCursor! })).tasks).toHaveLength(1);
    });

    it('keeps a cursor valid after the tasks ahead of it finished, ending with an empty page', async () => {
      const { backend } = store;
      for (let i = 0; i < 3; i++) await enqueueOne(backend, 't', { i });
      const first = await backend.listTasks('default', 'queued', { limit: 3 });
      expect(first.nextCursor).not.toBeNull();
      await backend.deleteAll('default', 'queued');
      expect(await backend.listTasks('default', 'queued', { limit: 3, cursor: first.nextCursor! })).toEqual({ tasks: [], nextCursor: null });
    });

    it('accepts limits from 1 to 1000 and refuses others', async () => {
      const { backend } = store;
      await enqueueOne(backend);
      expect((await backend.listTasks('default', 'queued', { limit: 1 })).tasks).toHaveLength(1);
      expect((await backend.listTasks('default', 'queued', { limit: 1000 })).tasks).toHaveLength(1);
      for (const limit of [0, -1, 1001, 1.5, Number.NaN, Infinity, 1e20, '10' as unknown as number]) {
        await expectCode(backend.listTasks('default', 'queued', { limit }), 'TL_INVALID_ARGUMENT');
      }
    });

    it('lists nothing for an unknown queue or an empty state', async () => {
      const { backend } = store;
      expect(await backend.listTasks('unknown', 'queued')).toEqual({ tasks: [], nextCursor: null });
      await enqueueOne(backend);
      expect(await backend.listTasks('default', 'dead')).toEqual({ tasks: [], nextCursor: null });
    });
  });

  describe('getTask', () => {
    const store = useStore(openStore);

    it('returns null for an unknown id', async () => {
      expect(await store.backend.getTask('no-such-task')).toBeNull();
      await enqueueOne(store.backend);
      expect(await store.backend.getTask('no-such-task')).toBeNull();
    });

    it('returns the whole record of a finished task: attempts, logs, progress, result', async () => {
      const { backend } = store;
      const id = await enqueueOne(backend, 'calc', { x: 2 }, { queue: 'math', maxRetries: 4 });
      const first = await claimTask(backend, id, 'math');
      await ackOk(backend, retryAck(first, 'first try failed', 0));
      const second = await claimTask(backend, id, 'math');
      await backend.reportProgress({ id, queue: 'math', token: second.token }, { logs: [{ at: 42, message: 'computing' }], progress: { pct: 100 } });
      await ackOk(backend, completeAck(second, { y: 4 }));
      const record = (await backend.getTask(id))!;
      expect(record).toEqual<TaskRecord>({
        id, type: 'calc', payload: { x: 2 }, queue: 'math', state: 'completed', attempt: 2, maxRetries: 4, timeout: 30 * MINUTE,
        deadline: null, lastError: 'first try failed', result: { y: 4 }, createdAt: expect.any(Number), enqueuedAt: expect.any(Number),
        startedAt: second.startedAt, finishedAt: expect.any(Number), nextRunAt: null, workerId: WORKER, uniqueKey: null, retention: null,
        backoff: null, headers: {}, links: {}, group: null, progress: { pct: 100 }, cancelRequested: false,
        attempts: [attemptOf(first, 'failed', 'first try failed'), attemptOf(second, 'completed')],
        logs: [{ at: 42, message: 'computing' }],
      });
      expect(record.finishedAt).toBeGreaterThanOrEqual(second.startedAt);
    });

    it('finds a task in any queue', async () => {
      const { backend } = store;
      const ids = await Promise.all(['q1', 'q2', 'q3'].map((queue) => enqueueOne(backend, 't', { queue }, { queue })));
      for (const [i, id] of ids.entries()) expect(await backend.getTask(id)).toMatchObject({ queue: `q${i + 1}`, payload: { queue: `q${i + 1}` } });
    });
  });

  describe('dailyStats and minuteStats', () => {
    const store = useStore(openStore);

    async function processTwo(backend: Awaited<ReturnType<typeof store.later>>, queue = 'default'): Promise<void> {
      await ackOk(backend, completeAck(await claimTask(backend, await enqueueOne(backend, 't', {}, { queue }), queue)));
      await ackOk(backend, deadAck(await claimTask(backend, await enqueueOne(backend, 't', {}, { queue }), queue), 'x'));
    }

    it('counts processed and failed attempts per UTC day, oldest day first', async () => {
      const { backend } = store;
      const start = await backend.now();
      await processTwo(backend);
      const tomorrow = await store.later(DAY);
      await processTwo(tomorrow);
      await processTwo(tomorrow);
      const end = await tomorrow.now();
      const stats = await tomorrow.dailyStats('default', 3);
      const today = Math.floor(start / DAY);
      if (Math.floor(end / DAY) === today + 1) {
        expect(stats).toEqual([
          { day: dayString(today - 1), processed: 0, failed: 0 },
          { day: dayString(today), processed: 2, failed: 1 },
          { day: dayString(today + 1), processed: 4, failed: 2 },
        ]);
      } else {
        // The test ran across midnight: only the totals can be checked.
        expect(stats.reduce((sum, s) => sum + s.processed, 0)).toBe(6);
      }
      expect(await backend.dailyStats('other', 2)).toEqual([
        { day: dayString(Math.floor((await backend.now()) / DAY) - 1), processed: 0, failed: 0 },
        { day: dayString(Math.floor((await backend.now()) / DAY)), processed: 0, failed: 0 },
      ]);
    });

    it('counts processed and failed attempts per minute, oldest minute first', async () => {
      const { backend } = store;
      const start = await backend.now();
      await processTwo(backend);
      const later = await store.later(2 * MINUTE);
      await processTwo(later);
      await processTwo(later);
      const end = await later.now();
      const stats = await later.minuteStats('default', 4);
      expect(stats).toHaveLength(4);
      const current = Math.floor(end / MINUTE);
      expect(stats.map((s) => s.at)).toEqual([current - 3, current - 2, current - 1, current].map((m) => m * MINUTE));
      if (current === Math.floor(start / MINUTE) + 2) {
        expect(stats.map((s) => [s.processed, s.failed])).toEqual([[0, 0], [2, 1], [0, 0], [4, 2]]);
      } else {
        expect(stats.reduce((sum, s) => sum + s.processed, 0)).toBeGreaterThanOrEqual(4);
      }
    });

    it('refuses a number of days or minutes that is not a whole number in range', async () => {
      const { backend } = store;
      expect(await backend.dailyStats('default', MAX_STAT_DAYS)).toHaveLength(MAX_STAT_DAYS);
      expect(await backend.minuteStats('default', MAX_STAT_MINUTES)).toHaveLength(MAX_STAT_MINUTES);
      for (const n of [0, -1, 1.5, Number.NaN, 1e9]) {
        await expectCode(backend.dailyStats('default', n), 'TL_INVALID_ARGUMENT');
        await expectCode(backend.minuteStats('default', n), 'TL_INVALID_ARGUMENT');
      }
    });

    it('counts recovered leases as failed attempts', async () => {
      const { backend } = store;
      await claimTask(backend, await enqueueOne(backend), 'default', 1000);
      const later = await store.later(2000);
      await later.recoverExpired('default', 10);
      const [day] = await later.dailyStats('default', 1);
      expect(day).toMatchObject({ processed: 1, failed: 1 });
      const minutes = await later.minuteStats('default', 2);
      expect(minutes.reduce((sum, m) => sum + m.failed, 0)).toBe(1);
    });
  });

  describe('cleanup', () => {
    const store = useStore(openStore);

    it('deletes completed tasks after 24 h by default', async () => {
      const { backend } = store;
      const [id] = await createInStates(backend, 'default', ['completed']);
      expect(await backend.cleanup('default', 100)).toBe(0);
      expect(await (await store.later(23 * HOUR)).cleanup('default', 100)).toBe(0);
      expect(await backend.getTask(id)).not.toBeNull();
      expect(await (await store.later(DAY + MINUTE)).cleanup('default', 100)).toBe(1);
      expect(await backend.getTask(id)).toBeNull();
      expect(await backend.getQueue('default')).toMatchObject({ counts: { completed: 0 }, processed: 1 });
      expect(await backend.listTasks('default', 'completed')).toEqual({ tasks: [], nextCursor: null });
    });

    it('deletes dead and cancelled tasks after 30 days by default', async () => {
      const { backend } = store;
      const [dead, cancelled] = await createInStates(backend, 'default', ['dead', 'cancelled']);
      expect(await (await store.later(29 * DAY)).cleanup('default', 100)).toBe(0);
      expect(await (await store.later(30 * DAY + MINUTE)).cleanup('default', 100)).toBe(2);
      expect(await backend.getTask(dead)).toBeNull();
      expect(await backend.getTask(cancelled)).toBeNull();
    });

    it("honours a task's own retention", async () => {
      const { backend } = store;
      const id = await enqueueOne(backend, 't', {}, { retention: 5000 });
      await ackOk(backend, completeAck(await claimTask(backend, id)));
      const keep = await enqueueOne(backend, 't', {}, { retention: 40 * DAY });
      await ackOk(backend, deadAck(await claimTask(backend, keep), 'x'));
      expect(await (await store.later(4000)).cleanup('default', 100)).toBe(0);
      expect(await (await store.later(6000)).cleanup('default', 100)).toBe(1);
      expect(await backend.getTask(id)).toBeNull();
      expect(await (await store.later(31 * DAY)).cleanup('default', 100)).toBe(0);
      expect(await backend.getTask(keep)).not.toBeNull();
    });

    it('deletes at most `limit` tasks per call and never an unfinished task', async () => {
      const { backend } = store;
      await createInStates(backend, 'default', ['completed', 'completed', 'completed', 'queued', 'scheduled', 'running', 'retrying']);
      const later = await store.later(60 * DAY);
      expect(await later.cleanup('default', 2)).toBe(2);
      expect(await later.cleanup('default', 2)).toBe(1);
      expect(await later.cleanup('default', 2)).toBe(0);
      expect((await backend.getQueue('default'))!.counts).toEqual({ scheduled: 1, queued: 1, running: 1, retrying: 1, completed: 0, dead: 0, cancelled: 0 });
    });

    it('cleans only its queue', async () => {
      const { backend } = store;
      await createInStates(backend, 'a', ['completed']);
      await createInStates(backend, 'b', ['completed']);
      expect(await (await store.later(2 * DAY)).cleanup('a', 100)).toBe(1);
      expect((await backend.getQueue('b'))!.counts.completed).toBe(1);
    });
  });
}
