/**
 * Conformance: fire() — recording a schedule's fires and enqueueing their tasks, each fire at most
 * once across every scheduler, the overlap policies, bounded fire history
 * whose pruned fires stay no-ops, and listFires.
 */
import { describe, expect, it } from 'vitest';
import {
  ackOk, claimTask, completeAck, enqueueOne, expectCode, HOUR, listAll, useStore, type OpenStore,
} from './harness.js';
import { batch, enqueueFire, fireIdOf, fireOne, missedFire, skippedFire } from './scheduling-harness.js';

const MINUTE = 60_000;

export function fireConformance(openStore: OpenStore): void {
  describe('fire: enqueue, at most once', () => {
    const store = useStore(openStore);

    it('enqueues the fire’s task with the fire id as task id, linked to the fire', async () => {
      const { backend } = store;
      const nominal = Math.floor((await backend.now()) / MINUTE) * MINUTE;
      const fire = enqueueFire('s', nominal);
      expect(await fireOne(backend, batch('s', [fire]))).toEqual([{ fireId: fire.fireId, outcome: 'enqueued', taskId: fire.fireId }]);
      const task = (await backend.getTask(fire.fireId))!;
      expect(task).toMatchObject({ id: fire.fireId, type: 'report', queue: 'default', state: 'queued', payload: { nominalAt: nominal } });
      expect(task.links.scheduleFireId).toBe(fire.fireId);
      await claimTask(backend, fire.fireId);
    });

    it('a fire handled before is a no-op (`exists`), from any backend on the store', async () => {
      const { backend } = store;
      const fire = enqueueFire('s', 60_000);
      expect((await fireOne(backend, batch('s', [fire])))[0].outcome).toBe('enqueued');
      // `exists` names the task the fire enqueued the first time (a scheduler taking over learns the latest run).
      expect(await fireOne(backend, batch('s', [fire]))).toEqual([{ fireId: fire.fireId, outcome: 'exists', taskId: fire.fireId }]);
      const other = await store.reopen();
      expect(await fireOne(other, batch('s', [fire]))).toEqual([{ fireId: fire.fireId, outcome: 'exists', taskId: fire.fireId }]);
      const later = await store.later(HOUR);
      expect((await fireOne(later, batch('s', [fire])))[0].outcome).toBe('exists');
      expect(await listAll(backend, 'default', 'queued')).toEqual([fire.fireId]);
      expect(await backend.listFires('s', 'default', 10)).toHaveLength(1);
    });

    it('two backends firing the same fire at once enqueue one task', async () => {
      const { backend } = store;
      const other = await store.reopen();
      const fire = enqueueFire('s', 120_000);
      const results = await Promise.all([fireOne(backend, batch('s', [fire])), fireOne(other, batch('s', [fire]))]);
      expect(results.map((r) => r[0].outcome).sort()).toEqual(['enqueued', 'exists']);
      expect(await listAll(backend, 'default', 'queued')).toEqual([fire.fireId]);
    });

    it('a fire whose task id is already taken is `exists` and records nothing', async () => {
      const { backend } = store;
      const fire = enqueueFire('s', 60_000);
      await enqueueOne(backend, 'manual', {}, { id: fire.fireId });
      expect(await fireOne(backend, batch('s', [fire]))).toEqual([{ fireId: fire.fireId, outcome: 'exists', taskId: null }]);
      expect((await backend.getTask(fire.fireId))!.type).toBe('manual');
      expect(await backend.listFires('s', 'default', 10)).toEqual([]);
    });

    it('records missed and skipped fires without tasks', async () => {
      const { backend } = store;
      const results = await fireOne(backend, batch('s', [missedFire('s', MINUTE), skippedFire('s', 2 * MINUTE, 'paused'), enqueueFire('s', 3 * MINUTE)]));
      expect(results).toEqual([
        { fireId: fireIdOf('s', MINUTE), outcome: 'missed', taskId: null },
        { fireId: fireIdOf('s', 2 * MINUTE), outcome: 'skipped:paused', taskId: null },
        { fireId: fireIdOf('s', 3 * MINUTE), outcome: 'enqueued', taskId: fireIdOf('s', 3 * MINUTE) },
      ]);
      expect(await backend.getTask(fireIdOf('s', MINUTE))).toBeNull();
      expect(await backend.getTask(fireIdOf('s', 2 * MINUTE))).toBeNull();
      expect(await listAll(backend, 'default', 'queued')).toEqual([fireIdOf('s', 3 * MINUTE)]);
      // Recorded fires stay handled, whatever is asked next time.
      expect((await fireOne(backend, batch('s', [enqueueFire('s', MINUTE), enqueueFire('s', 2 * MINUTE)]))).map((r) => r.outcome)).toEqual(['exists', 'exists']);
      expect(await listAll(backend, 'default', 'queued')).toHaveLength(1);
    });

    it('a fire with runAt (jitter) enqueues a scheduled task, due then', async () => {
      const { backend } = store;
      const now = await backend.now();
      const fire = enqueueFire('s', now, { runAt: now + 5 * MINUTE });
      expect((await fireOne(backend, batch('s', [fire])))[0].outcome).toBe('enqueued');
      expect(await backend.getTask(fire.fireId)).toMatchObject({ state: 'scheduled', nextRunAt: now + 5 * MINUTE });
      const [claim] = await (await store.later(10 * MINUTE)).claim('w', [{ queue: 'default', count: 5 }], 30_000);
      expect(claim.tasks.map((t) => t.id)).toEqual([fire.fireId]);
    });

    it('puts the task in the batch’s queue and answers several batches in order', async () => {
      const { backend } = store;
      const a = enqueueFire('a', MINUTE, { queue: 'reports' });
      const b = missedFire('b', MINUTE);
      const results = await backend.fire([
        batch('a', [a], { queue: 'reports' }),
        batch('b', [b], { queue: 'other' }),
      ]);
      expect(results).toEqual([
        [{ fireId: a.fireId, outcome: 'enqueued', taskId: a.fireId }],
        [{ fireId: b.fireId, outcome: 'missed', taskId: null }],
      ]);
      expect(await listAll(backend, 'reports', 'queued')).toEqual([a.fireId]);
      expect(await backend.fire([])).toEqual([]);
    });

    it('schedules of one queue fire together, each with its own history and overlap, answered in the order asked', async () => {
      const { backend } = store;
      const a1 = enqueueFire('a', MINUTE);
      expect((await fireOne(backend, batch('a', [a1], { overlap: 'skip' })))[0].outcome).toBe('enqueued');
      const results = await backend.fire([
        batch('a', [enqueueFire('a', 2 * MINUTE)], { overlap: 'skip', previousTaskId: a1.fireId }),
        batch('c', [enqueueFire('c', MINUTE, { queue: 'other' })], { queue: 'other' }),
        batch('b', [enqueueFire('b', MINUTE), missedFire('b', 2 * MINUTE), enqueueFire('b', 3 * MINUTE)], { overlap: 'allow', keepHistory: 2 }),
      ]);
      expect(results.map((r) => r.map((f) => f.outcome))).toEqual([['skipped:overlap'], ['enqueued'], ['enqueued', 'missed', 'enqueued']]);
      expect((await backend.listFires('a', 'default', 10)).map((f) => f.outcome)).toEqual(['skipped:overlap', 'enqueued']);
      expect((await backend.listFires('b', 'default', 10)).map((f) => f.nominalAt)).toEqual([3 * MINUTE, 2 * MINUTE]);
      // b's pruned fire stays a no-op, without a task to name.
      expect(await fireOne(backend, batch('b', [enqueueFire('b', MINUTE)]))).toEqual([{ fireId: fireIdOf('b', MINUTE), outcome: 'exists', taskId: null }]);
      expect(await listAll(backend, 'other', 'queued')).toEqual([fireIdOf('c', MINUTE)]);
    });
  });

  describe('fire: overlap policies', () => {
    const store = useStore(openStore);

    it('a manual trigger is not the previous run: an unfinished one does not make a scheduled fire overlap', async () => {
      const { backend } = store;
      const manual = { ...enqueueFire('s', MINUTE), fireId: `${fireIdOf('s', MINUTE)}:manual` };
      manual.task = { ...manual.task!, id: manual.fireId };
      expect((await fireOne(backend, batch('s', [manual], { overlap: 'allow' })))[0].outcome).toBe('enqueued');
      expect((await fireOne(backend, batch('s', [enqueueFire('s', 2 * MINUTE)], { overlap: 'skip' })))[0].outcome).toBe('enqueued');
      expect((await fireOne(backend, batch('s', [enqueueFire('s', 3 * MINUTE)], { overlap: 'skip' })))[0].outcome).toBe('skipped:overlap');
      expect((await backend.getTask(manual.fireId))!.state).toBe('queued');
    });

    it('judges overlap by the stored latest run, also when the scheduler does not know it (it took over)', async () => {
      const { backend } = store;
      const first = enqueueFire('s', MINUTE);
      expect((await fireOne(backend, batch('s', [first], { overlap: 'skip' })))[0].outcome).toBe('enqueued');
      expect(await fireOne(backend, batch('s', [enqueueFire('s', 2 * MINUTE)], { overlap: 'skip', previousTaskId: null }))).toEqual([
        { fireId: fireIdOf('s', 2 * MINUTE), outcome: 'skipped:overlap', taskId: null },
      ]);
      const claimed = await claimTask(backend, first.fireId);
      await ackOk(backend, completeAck(claimed));
      expect((await fireOne(backend, batch('s', [enqueueFire('s', 3 * MINUTE)], { overlap: 'skip', previousTaskId: null })))[0].outcome).toBe('enqueued');
      // cancelPrevious finds it too.
      expect((await fireOne(backend, batch('s', [enqueueFire('s', 4 * MINUTE)], { overlap: 'cancelPrevious', previousTaskId: null })))[0].outcome).toBe('enqueued');
      expect((await backend.getTask(fireIdOf('s', 3 * MINUTE)))!.state).toBe('cancelled');
    });

    it('skip: while the previous task is unfinished the fire is skipped:overlap; once it finished, enqueued', async () => {
      const { backend } = store;
      const first = enqueueFire('s', MINUTE);
      expect((await fireOne(backend, batch('s', [first], { overlap: 'skip' })))[0].outcome).toBe('enqueued');
      const second = enqueueFire('s', 2 * MINUTE);
      expect(await fireOne(backend, batch('s', [second], { overlap: 'skip', previousTaskId: first.fireId }))).toEqual([
        { fireId: second.fireId, outcome: 'skipped:overlap', taskId: null },
      ]);
      expect(await backend.getTask(second.fireId)).toBeNull();
      const claimed = await claimTask(backend, first.fireId);
      const third = enqueueFire('s', 3 * MINUTE);
      expect((await fireOne(backend, batch('s', [third], { overlap: 'skip', previousTaskId: first.fireId })))[0].outcome).toBe('skipped:overlap');
      await ackOk(backend, completeAck(claimed));
      const fourth = enqueueFire('s', 4 * MINUTE);
      expect((await fireOne(backend, batch('s', [fourth], { overlap: 'skip', previousTaskId: first.fireId })))[0].outcome).toBe('enqueued');
    });

    it('skip: within one batch the fire after an enqueued one is skipped; a deleted previous task counts as finished', async () => {
      const { backend } = store;
      const results = await fireOne(backend, batch('s', [enqueueFire('s', MINUTE), enqueueFire('s', 2 * MINUTE)], { overlap: 'skip' }));
      expect(results.map((r) => r.outcome)).toEqual(['enqueued', 'skipped:overlap']);
      await backend.deleteTask(fireIdOf('s', MINUTE));
      const next = await fireOne(backend, batch('s', [enqueueFire('s', 3 * MINUTE)], { overlap: 'skip', previousTaskId: fireIdOf('s', MINUTE) }));
      expect(next[0].outcome).toBe('enqueued');
    });

    it('allow: enqueues whatever the previous task is doing', async () => {
      const { backend } = store;
      const first = enqueueFire('s', MINUTE);
      await fireOne(backend, batch('s', [first]));
      const results = await fireOne(backend, batch('s', [enqueueFire('s', 2 * MINUTE), enqueueFire('s', 3 * MINUTE)], { previousTaskId: first.fireId }));
      expect(results.map((r) => r.outcome)).toEqual(['enqueued', 'enqueued']);
      expect(await listAll(backend, 'default', 'queued')).toHaveLength(3);
    });

    it('cancelPrevious: cancels a queued previous task and enqueues', async () => {
      const { backend } = store;
      const first = enqueueFire('s', MINUTE);
      await fireOne(backend, batch('s', [first], { overlap: 'cancelPrevious' }));
      const second = enqueueFire('s', 2 * MINUTE);
      expect((await fireOne(backend, batch('s', [second], { overlap: 'cancelPrevious', previousTaskId: first.fireId })))[0].outcome).toBe('enqueued');
      expect(await backend.getTask(first.fireId)).toMatchObject({ state: 'cancelled' });
      expect(await listAll(backend, 'default', 'queued')).toEqual([second.fireId]);
      // A queue that keeps no cancelled task deletes the one a later fire cancels.
      await backend.setQueueKeep('default', { cancelled: 0 });
      const third = enqueueFire('s', 3 * MINUTE);
      expect((await fireOne(backend, batch('s', [third], { overlap: 'cancelPrevious', previousTaskId: second.fireId })))[0].outcome).toBe('enqueued');
      expect(await backend.getTask(second.fireId)).toBeNull();
      expect(await backend.getTask(first.fireId)).toBeNull();
      expect(await listAll(backend, 'default', 'queued')).toEqual([third.fireId]);
    });

    it('cancelPrevious: asks a running previous task to stop and enqueues', async () => {
      const { backend } = store;
      const first = enqueueFire('s', MINUTE);
      await fireOne(backend, batch('s', [first], { overlap: 'cancelPrevious' }));
      await claimTask(backend, first.fireId);
      const second = enqueueFire('s', 2 * MINUTE);
      expect((await fireOne(backend, batch('s', [second], { overlap: 'cancelPrevious', previousTaskId: first.fireId })))[0].outcome).toBe('enqueued');
      expect(await backend.getTask(first.fireId)).toMatchObject({ state: 'running', cancelRequested: true });
      expect((await backend.getTask(second.fireId))!.state).toBe('queued');
    });

    it('cancelPrevious: a finished previous task is left alone', async () => {
      const { backend } = store;
      const first = enqueueFire('s', MINUTE);
      await fireOne(backend, batch('s', [first], { overlap: 'cancelPrevious' }));
      await ackOk(backend, completeAck(await claimTask(backend, first.fireId)));
      const second = enqueueFire('s', 2 * MINUTE);
      expect((await fireOne(backend, batch('s', [second], { overlap: 'cancelPrevious', previousTaskId: first.fireId })))[0].outcome).toBe('enqueued');
      expect((await backend.getTask(first.fireId))!.state).toBe('completed');
    });

    it('bufferOne: the first fire is `busy` (not recorded), later ones are skipped:overlap', async () => {
      const { backend } = store;
      const first = enqueueFire('s', MINUTE);
      await fireOne(backend, batch('s', [first], { overlap: 'bufferOne' }));
      const fires = [enqueueFire('s', 2 * MINUTE), enqueueFire('s', 3 * MINUTE), enqueueFire('s', 4 * MINUTE)];
      const results = await fireOne(backend, batch('s', fires, { overlap: 'bufferOne', previousTaskId: first.fireId }));
      expect(results).toEqual([
        { fireId: fires[0].fireId, outcome: 'busy', taskId: null },
        { fireId: fires[1].fireId, outcome: 'skipped:overlap', taskId: null },
        { fireId: fires[2].fireId, outcome: 'skipped:overlap', taskId: null },
      ]);
      const history = await backend.listFires('s', 'default', 10);
      expect(history.map((f) => [f.fireId, f.outcome])).toEqual([
        [fires[2].fireId, 'skipped:overlap'],
        [fires[1].fireId, 'skipped:overlap'],
        [first.fireId, 'enqueued'],
      ]);
      // The buffered fire, sent again first once the previous run finished, is enqueued.
      await ackOk(backend, completeAck(await claimTask(backend, first.fireId)));
      const retry = await fireOne(backend, batch('s', [fires[0], enqueueFire('s', 5 * MINUTE)], { overlap: 'bufferOne', previousTaskId: first.fireId }));
      expect(retry).toEqual([
        { fireId: fires[0].fireId, outcome: 'enqueued', taskId: fires[0].fireId },
        { fireId: fireIdOf('s', 5 * MINUTE), outcome: 'busy', taskId: null },
      ]);
    });

    it('overlap applies to enqueue fires only: missed and skipped fires are recorded as asked', async () => {
      const { backend } = store;
      const first = enqueueFire('s', MINUTE);
      await fireOne(backend, batch('s', [first], { overlap: 'bufferOne' }));
      const results = await fireOne(backend, batch('s', [missedFire('s', 2 * MINUTE), skippedFire('s', 3 * MINUTE, 'paused')], {
        overlap: 'bufferOne', previousTaskId: first.fireId,
      }));
      expect(results.map((r) => r.outcome)).toEqual(['missed', 'skipped:paused']);
    });
  });

  describe('fire history', () => {
    const store = useStore(openStore);

    it('listFires: newest first, with enqueue time, lag and the task’s current state', async () => {
      const { backend } = store;
      const now = await backend.now();
      const nominal = now - 1500;
      await fireOne(backend, batch('s', [missedFire('s', nominal - 2 * MINUTE), skippedFire('s', nominal - MINUTE, 'paused')]));
      const before = await backend.now();
      await fireOne(backend, batch('s', [enqueueFire('s', nominal)]));
      const after = await backend.now();
      const fires = await backend.listFires('s', 'default', 10);
      expect(fires.map((f) => f.nominalAt)).toEqual([nominal, nominal - MINUTE, nominal - 2 * MINUTE]);
      const [enqueued, skipped, missed] = fires;
      expect(enqueued).toMatchObject({ fireId: fireIdOf('s', nominal), outcome: 'enqueued', taskId: fireIdOf('s', nominal), taskState: 'queued' });
      expect(enqueued.enqueuedAt).toBeGreaterThanOrEqual(before);
      expect(enqueued.enqueuedAt).toBeLessThanOrEqual(after);
      expect(enqueued.lagMs).toBe(enqueued.enqueuedAt! - nominal);
      expect(enqueued.lagMs).toBeGreaterThanOrEqual(1500);
      expect(skipped).toEqual({ fireId: fireIdOf('s', nominal - MINUTE), nominalAt: nominal - MINUTE, enqueuedAt: null, lagMs: null, outcome: 'skipped:paused', taskId: null, taskState: null });
      expect(missed).toEqual({ fireId: fireIdOf('s', nominal - 2 * MINUTE), nominalAt: nominal - 2 * MINUTE, enqueuedAt: null, lagMs: null, outcome: 'missed', taskId: null, taskState: null });

      const claimed = await claimTask(backend, fireIdOf('s', nominal));
      expect((await backend.listFires('s', 'default', 1))[0].taskState).toBe('running');
      await ackOk(backend, completeAck(claimed));
      expect((await backend.listFires('s', 'default', 1))[0]).toMatchObject({ outcome: 'enqueued', taskState: 'completed' });
      await backend.deleteTask(claimed.id);
      expect((await backend.listFires('s', 'default', 1))[0]).toMatchObject({ outcome: 'enqueued', taskId: claimed.id, taskState: null });
    });

    it('refuses a fire whose task holds a lone UTF-16 surrogate, and records nothing', async () => {
      const { backend } = store;
      const fire = enqueueFire('s', MINUTE);
      fire.task!.headers = { note: '\ud800' };
      await expectCode(backend.fire([batch('s', [fire])]), 'TL_INVALID_ARGUMENT');
      expect(await backend.listFires('s', 'default', 10)).toEqual([]);
      expect(await backend.getTask(fire.fireId)).toBeNull();
    });

    it('listFires is per schedule and per queue, and honours the limit', async () => {
      const { backend } = store;
      await fireOne(backend, batch('a', [1, 2, 3, 4].map((n) => missedFire('a', n * MINUTE))));
      await fireOne(backend, batch('b', [missedFire('b', MINUTE)]));
      await fireOne(backend, batch('a', [missedFire('a', 9 * MINUTE)], { queue: 'elsewhere' }));
      expect((await backend.listFires('a', 'default', 2)).map((f) => f.nominalAt)).toEqual([4 * MINUTE, 3 * MINUTE]);
      expect(await backend.listFires('a', 'default', 10)).toHaveLength(4);
      expect((await backend.listFires('b', 'default', 10)).map((f) => f.fireId)).toEqual([fireIdOf('b', MINUTE)]);
      expect((await backend.listFires('a', 'elsewhere', 10)).map((f) => f.nominalAt)).toEqual([9 * MINUTE]);
      expect(await backend.listFires('nobody', 'default', 10)).toEqual([]);
      for (const limit of [0, -1, 1.5, 1001, Number.NaN]) await expectCode(backend.listFires('a', 'default', limit), 'TL_INVALID_ARGUMENT');
      expect(await backend.listFires('a', 'default', 1000)).toHaveLength(4);
    });

    it('keeps keepHistory records per schedule; pruned fires stay no-ops (the floor)', async () => {
      const { backend } = store;
      const fires = [1, 2, 3, 4, 5].map((n) => missedFire('s', n * MINUTE));
      await fireOne(backend, batch('s', fires, { keepHistory: 3 }));
      await fireOne(backend, batch('other', [missedFire('other', MINUTE)], { keepHistory: 3 }));
      expect((await backend.listFires('s', 'default', 10)).map((f) => f.nominalAt)).toEqual([5, 4, 3].map((n) => n * MINUTE));
      // The pruned fires have no record any more, yet firing them again does nothing.
      const again = await fireOne(await store.reopen(), batch('s', [enqueueFire('s', MINUTE), enqueueFire('s', 2 * MINUTE)], { keepHistory: 3 }));
      expect(again.map((r) => r.outcome)).toEqual(['exists', 'exists']);
      expect(await listAll(backend, 'default', 'queued')).toEqual([]);
      // Other schedules are not affected by this one's floor; fires after it still enqueue.
      expect(await backend.listFires('other', 'default', 10)).toHaveLength(1);
      const next = await fireOne(backend, batch('s', [enqueueFire('s', 6 * MINUTE)], { keepHistory: 3 }));
      expect(next[0].outcome).toBe('enqueued');
      expect((await backend.listFires('s', 'default', 10)).map((f) => f.nominalAt)).toEqual([6, 5, 4].map((n) => n * MINUTE));
      expect((await fireOne(backend, batch('s', [enqueueFire('s', 3 * MINUTE)], { keepHistory: 3 })))[0].outcome).toBe('exists');
    });
  });
}
