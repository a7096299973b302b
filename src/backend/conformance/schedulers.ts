/**
 * Conformance: the scheduler instances — check-ins that record each instance and
 * bid for the lease, the leader's progress (firedThrough) written with its run state, gaps of
 * downtime when no instance checked in, the schedules' version, resumedAt, leaving, listing.
 */
import { describe, expect, it } from 'vitest';
import { MAX_DOWNTIME_GAPS, type Backend, type SchedulerInstance } from '../contract.js';
import { useStore, type OpenStore } from './harness.js';
import { definition } from './scheduling-harness.js';

const LEASE = 3_000;

function instance(id: string, overrides: Partial<SchedulerInstance> = {}): SchedulerInstance {
  return { id, host: 'host-1', pid: 42, version: '1.2.3', startedAt: 1_000, lastTickAt: 2_000, firesLastMinute: 7, ...overrides };
}

function checkIn(backend: Backend, id: string, bid = true, overrides: Partial<SchedulerInstance> = {}) {
  return backend.checkInScheduler(instance(id, overrides), { leaseMs: LEASE, bid });
}

export function schedulerConformance(openStore: OpenStore): void {
  describe('scheduler instances: check-in, lease, registry', () => {
    const store = useStore(openStore);

    it('the first check-in takes the lease; others see it and get none while it is valid', async () => {
      const { backend } = store;
      const before = await backend.now();
      const a = await checkIn(backend, 'a');
      expect(a.epoch).toBe(1);
      expect(a.now).toBeGreaterThanOrEqual(before);
      expect(a.lease).toEqual({ holder: 'a', epoch: 1, expiresAt: a.now + LEASE, firedThrough: null });
      const b = await checkIn(await store.reopen(), 'b');
      expect(b.epoch).toBeNull();
      expect(b.lease).toMatchObject({ holder: 'a', epoch: 1 });
      // Renewing keeps the epoch; without a bid nothing is taken.
      expect((await checkIn(backend, 'a')).epoch).toBe(1);
      expect((await checkIn(backend, 'c', false)).epoch).toBeNull();
    });

    it('after the holder stops checking in, the next bidder takes the lease with the next epoch', async () => {
      const { backend } = store;
      await checkIn(backend, 'a');
      const later = await store.later(LEASE + 500);
      expect((await checkIn(later, 'b', false)).lease).toBeNull();
      const b = await checkIn(later, 'b');
      expect(b.epoch).toBe(2);
      expect((await checkIn(later, 'a')).epoch).toBeNull();
      // The same lease the plain lease calls see.
      expect(await later.acquireLeadership('a', LEASE)).toBeNull();
    });

    it('lists live instances with what they reported, the leader marked; expired ones drop out', async () => {
      const { backend } = store;
      const a = await checkIn(backend, 'a', true, { startedAt: 1_000, firesLastMinute: 60 });
      await checkIn(backend, 'b', true, { startedAt: 2_000, host: 'host-2', pid: 7 });
      const listed = await backend.listSchedulers();
      expect(listed.lease).toMatchObject({ holder: 'a', epoch: a.epoch });
      expect(listed.instances.map((i) => [i.id, i.leader, i.epoch, i.host, i.pid, i.firesLastMinute])).toEqual([
        ['a', true, 1, 'host-1', 42, 60],
        ['b', false, null, 'host-2', 7, 7],
      ]);
      expect(listed.instances[0]).toMatchObject({ version: '1.2.3', startedAt: 1_000, lastTickAt: 2_000 });
      expect(listed.instances[0].lastSeenAt).toBeGreaterThanOrEqual(a.now);
      const later = await store.later(LEASE + 500);
      await checkIn(later, 'c');
      expect((await later.listSchedulers()).instances.map((i) => [i.id, i.leader])).toEqual([['c', true]]);
    });

    it('leaving removes the instance and frees its lease at once', async () => {
      const { backend } = store;
      await checkIn(backend, 'a');
      await checkIn(backend, 'b');
      await backend.leaveSchedulers('a');
      expect((await backend.listSchedulers()).instances.map((i) => i.id)).toEqual(['b']);
      expect((await backend.listSchedulers()).lease).toBeNull();
      expect((await checkIn(backend, 'b')).epoch).toBe(2);
      await backend.leaveSchedulers('nobody');
      expect((await backend.listSchedulers()).lease).toMatchObject({ holder: 'b' });
    });

    it('the leader’s progress is written with its run state, fenced, and starts empty for a new holder', async () => {
      const { backend } = store;
      const created = await backend.createSchedule(definition('s'));
      const a = await checkIn(backend, 'a');
      const state = { ...created.state, watermark: created.createdAt + 60_000 };
      expect(await backend.advanceSchedules('a', a.epoch!, [{ id: 's', generation: 1, updatedAt: created.updatedAt, state }], 123_456)).toBe(true);
      expect((await checkIn(backend, 'b')).lease).toMatchObject({ holder: 'a', firedThrough: 123_456 });
      // Without a value the progress stays.
      expect(await backend.advanceSchedules('a', a.epoch!, [], undefined)).toBe(true);
      expect((await backend.listSchedulers()).lease?.firedThrough).toBe(123_456);
      expect(await backend.advanceSchedules('b', a.epoch!, [], 999_999)).toBe(false);
      const later = await store.later(LEASE + 500);
      const b = await checkIn(later, 'b');
      expect(b.lease).toEqual({ holder: 'b', epoch: 2, expiresAt: b.now + LEASE, firedThrough: null });
    });

    it('a schedule changed since the leader read it is not written', async () => {
      const { backend } = store;
      const read = await backend.createSchedule(definition('s'));
      const a = await checkIn(backend, 'a');
      const later = await store.later(1_000);
      const paused = await later.pauseSchedule('s', { note: 'ops' });
      expect(paused.updatedAt).toBeGreaterThan(read.updatedAt);
      const stale = { ...read.state, lastTaskId: 'stale' };
      expect(await later.advanceSchedules('a', a.epoch!, [{ id: 's', generation: 1, updatedAt: read.updatedAt, state: stale }])).toBe(true);
      expect((await later.getSchedule('s'))!.state.lastTaskId).toBeNull();
      const fresh = { ...read.state, lastTaskId: 'fresh' };
      expect(await later.advanceSchedules('a', a.epoch!, [{ id: 's', generation: 1, updatedAt: paused.updatedAt, state: fresh }])).toBe(true);
      expect((await later.getSchedule('s'))!.state.lastTaskId).toBe('fresh');
    });
  });

  describe('scheduler downtime and the schedules version', () => {
    const store = useStore(openStore);

    it('nothing is known before the first check-in; check-ins within the lease of each other leave no gap', async () => {
      const { backend } = store;
      expect((await backend.listSchedulers()).downtime).toBeNull();
      const first = await checkIn(backend, 'a');
      expect((await backend.listSchedulers()).downtime).toEqual({ since: first.now, gaps: [] });
      expect(first.downtime).toEqual({ since: first.now, gaps: [] });
      const next = await checkIn(await store.later(LEASE - 500), 'b');
      expect(next.downtime).toEqual({ since: first.now, gaps: [] });
    });

    it('a check-in after more than the lease without any records the gap, once', async () => {
      const { backend } = store;
      const first = await checkIn(backend, 'a');
      const later = await store.later(10_000);
      const back = await checkIn(later, 'a');
      expect(back.downtime.since).toBe(first.now);
      expect(back.downtime.gaps).toHaveLength(1);
      const [[from, until]] = back.downtime.gaps;
      expect(from).toBe(first.now);
      expect(until).toBe(back.now);
      expect((await checkIn(later, 'b')).downtime.gaps).toEqual([[from, until]]);
    });

    it(`keeps the newest ${MAX_DOWNTIME_GAPS} gaps; since moves up to the end of the ones forgotten`, async () => {
      const { backend } = store;
      let last = await checkIn(backend, 'a');
      for (let i = 1; i <= MAX_DOWNTIME_GAPS + 2; i++) last = await checkIn(await store.later(i * 10_000), 'a');
      const { since, gaps } = last.downtime;
      expect(gaps).toHaveLength(MAX_DOWNTIME_GAPS);
      expect(since).toBe(gaps[0][0]);
      for (let i = 1; i < gaps.length; i++) expect(gaps[i][0]).toBe(gaps[i - 1][1]);
    });

    it('every change of a schedule moves the version; the run state does not', async () => {
      const { backend } = store;
      const version = async () => (await checkIn(backend, 'a')).schedulesVersion;
      const v0 = await version();
      const created = await backend.createSchedule(definition('s'));
      const v1 = await version();
      expect(v1).toBeGreaterThan(v0);
      await backend.updateSchedule(definition('s', { cron: '0 * * * *' }));
      const v2 = await version();
      expect(v2).toBeGreaterThan(v1);
      const epoch = (await checkIn(backend, 'a')).epoch!;
      const current = (await backend.getSchedule('s'))!;
      await backend.advanceSchedules('a', epoch, [{ id: 's', generation: 1, updatedAt: current.updatedAt, state: created.state }]);
      expect(await version()).toBe(v2);
      await backend.pauseSchedule('s');
      const v3 = await version();
      expect(v3).toBeGreaterThan(v2);
      await backend.resumeSchedule('s');
      const v4 = await version();
      expect(v4).toBeGreaterThan(v3);
      await backend.upsertSchedule(definition('s'));
      const v5 = await version();
      expect(v5).toBeGreaterThan(v4);
      await backend.deleteSchedule('s');
      expect(await version()).toBeGreaterThan(v5);
    });

    it('listScheduleChanges: what was created, changed, paused or deleted since a version, as it is now', async () => {
      const { backend } = store;
      const version = async () => (await checkIn(backend, 'a')).schedulesVersion;
      const empty = await backend.listScheduleChanges(0);
      expect(empty).toEqual({ version: await version(), schedules: [], removed: [] });
      await backend.createSchedule(definition('a'));
      await backend.createSchedule(definition('b'));
      await backend.createSchedule(definition('c'));
      const v1 = await version();
      const all = await backend.listScheduleChanges(empty.version);
      expect(all.version).toBe(v1);
      expect(all.schedules.map((x) => x.id).sort()).toEqual(['a', 'b', 'c']);
      expect(all.schedules.find((x) => x.id === 'a')).toEqual(await backend.getSchedule('a'));
      expect(await backend.listScheduleChanges(v1)).toEqual({ version: v1, schedules: [], removed: [] });
      await backend.updateSchedule(definition('a', { cron: '0 * * * *' }));
      await backend.pauseSchedule('b', { note: 'ops' });
      await backend.deleteSchedule('c');
      const since = await backend.listScheduleChanges(v1);
      expect(since.version).toBe(await version());
      expect(since.schedules.map((x) => [x.id, x.cron, x.paused])).toEqual([['a', '0 * * * *', false], ['b', '* * * * *', true]]);
      expect(since.removed).toEqual(['c']);
      // Deleted and created again: a schedule again, at its new generation.
      await backend.createSchedule(definition('c'));
      const again = await backend.listScheduleChanges(since.version);
      expect(again.schedules.map((x) => [x.id, x.generation])).toEqual([['c', 2]]);
      expect(again.removed).toEqual([]);
    });

    it('resuming a paused schedule records when its pause ended; resuming a running one changes nothing', async () => {
      const { backend } = store;
      const created = await backend.createSchedule(definition('s'));
      expect(created.resumedAt).toBeNull();
      expect((await backend.resumeSchedule('s')).resumedAt).toBeNull();
      await backend.pauseSchedule('s');
      const later = await store.later(60_000);
      const before = await later.now();
      const resumed = await later.resumeSchedule('s');
      expect(resumed.resumedAt).toBeGreaterThanOrEqual(before);
      // A pause that ended by itself (until) ended then, not at the later resume.
      const until = (await backend.now()) + 10_000;
      await backend.pauseSchedule('s', { until });
      expect((await (await store.later(120_000)).resumeSchedule('s')).resumedAt).toBe(until);
    });
  });
}
