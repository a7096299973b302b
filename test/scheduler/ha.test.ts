/**
 * Exactly-once fires with several scheduler processes (DESIGN §6.1): three processes on one
 * store, 20 schedules firing every second for 30 s — one task per (schedule, nominal time), none
 * missing — also while the leader is SIGKILLed every few seconds.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { ScheduleService, type Backend } from '../../src/index.js';
import { ChildWorker } from '../helpers/processes.js';
import { SHARED_STORE_KINDS, sharedStore, type SharedStore } from '../helpers/process-stores.js';

const SCHEDULER = fileURLToPath(new URL('../fixtures/scheduler-process.mjs', import.meta.url));
const SCHEDULES = 20;
const RUN_MS = 30_000;

describe.each(SHARED_STORE_KINDS)('scheduler high availability on %s', (kind) => {
  let store: SharedStore;
  let backend: Backend;
  const children: ChildWorker[] = [];

  beforeEach(async () => {
    store = await sharedStore(kind);
    backend = store.backend;
  });

  afterEach(async () => {
    await Promise.all(children.splice(0).map((c) => c.destroy()));
    await store.cleanup();
  });

  function spawnScheduler(): ChildWorker {
    const child = ChildWorker.start(SCHEDULER, { ...store.env, LEASE_MS: '1500' });
    children.push(child);
    return child;
  }

  /** Nominal times of every task each schedule enqueued. */
  async function firesPerSchedule(): Promise<Map<string, number[]>> {
    const byId = new Map<string, number[]>();
    for (const state of ['queued', 'scheduled'] as const) {
      let cursor: string | undefined;
      do {
        const page = await backend.listTasks('default', state, { limit: 1000, cursor });
        for (const task of page.tasks) {
          const [, id, , nominal] = task.id.split(':');
          const list = byId.get(id) ?? [];
          list.push(Number(nominal));
          byId.set(id, list);
        }
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
    }
    return byId;
  }

  async function createSchedules(): Promise<number> {
    const service = new ScheduleService(backend);
    for (let i = 0; i < SCHEDULES; i++) {
      await service.create({ id: `s${i}`, cron: '* * * * * *', task: { type: 'tick', payload: { i } }, overlap: 'allow', catchUp: { policy: 'all' } });
    }
    return backend.now();
  }

  function expectExactlyOnce(fires: Map<string, number[]>, from: number, to: number): void {
    expect(fires.size).toBe(SCHEDULES);
    for (const [id, nominals] of fires) {
      const sorted = [...nominals].sort((a, b) => a - b);
      // No duplicates…
      expect(new Set(sorted).size, `${id} has duplicate fires`).toBe(sorted.length);
      // …and none missing: one fire per second from the first to the last.
      expect(sorted[sorted.length - 1] - sorted[0], `${id} has gaps`).toBe((sorted.length - 1) * 1000);
      expect(sorted[0]).toBeLessThanOrEqual(from + 2000);
      expect(sorted[sorted.length - 1]).toBeGreaterThanOrEqual(to - 2000);
    }
  }

  it('three schedulers, 20 schedules every second for 30 s: zero duplicates, zero missing', async () => {
    const schedulers = [spawnScheduler(), spawnScheduler(), spawnScheduler()];
    await Promise.all(schedulers.map((s) => s.waitForLine((l) => l === 'ready')));
    const from = await createSchedules();
    await new Promise((r) => setTimeout(r, RUN_MS));
    const to = await backend.now();
    await Promise.all(schedulers.map(async (s) => {
      s.kill('SIGTERM');
      await s.exited;
    }));
    const fires = await firesPerSchedule();
    expectExactlyOnce(fires, from, to);
    expect([...fires.values()].every((n) => n.length >= RUN_MS / 1000 - 2)).toBe(true);
    // Exactly one instance led the whole time.
    expect(schedulers.filter((s) => s.lines.some((l) => l.startsWith('leader'))).length).toBe(1);
  }, 90_000);

  it('the same while the leader is SIGKILLed every few seconds (catch-up all): zero duplicates, zero missing', async () => {
    const schedulers = [spawnScheduler(), spawnScheduler(), spawnScheduler()];
    await Promise.all(schedulers.map((s) => s.waitForLine((l) => l === 'ready')));
    const from = await createSchedules();
    const started = Date.now();
    let kills = 0;
    let epoch = 0;
    while (Date.now() - started < RUN_MS) {
      await new Promise((r) => setTimeout(r, 4000));
      // The current leader is the live child that announced the highest epoch.
      let leader: ChildWorker | undefined;
      for (const child of children) {
        if (child.child.exitCode !== null || child.child.signalCode !== null) continue;
        for (const line of child.lines) {
          const match = /^leader (\d+)$/.exec(line);
          if (match && Number(match[1]) > epoch) {
            epoch = Number(match[1]);
            leader = child;
          }
        }
      }
      if (leader && Date.now() - started < RUN_MS - 3000) {
        leader.kill('SIGKILL');
        await leader.exited;
        kills += 1;
        spawnScheduler(); // keep three instances
      }
    }
    // Let the last failover finish and catch up.
    await new Promise((r) => setTimeout(r, 3000));
    const to = (await backend.now()) - 3000;
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(children.map((c) => c.exited));
    expect(kills).toBeGreaterThanOrEqual(4);
    expectExactlyOnce(await firesPerSchedule(), from, to);
  }, 120_000);
});
