/**
 * Queue limits (setQueueLimits) held by the store across real worker processes, on Redis (a
 * private redis-server, so its command counts are this test's alone) and on a SQLite file:
 * - rate: 50 starts per second over 3 processes — no 1 s window holds more than 50 starts, the
 *   limit is used (≈300 starts in 6 s), and rate-limited workers wait instead of polling;
 * - concurrency: 5 running over 3 processes, also while a SIGKILLed worker's leases hold its
 *   slots (they come back once its leases expire, and the others finish the queue);
 * - groupConcurrency: 2 of a group running at most over 3 processes, and a group of 20 enqueued
 *   behind one of 2,000 finishes before the big one's 200th task (groups take turns);
 * - maxLength: the 101st enqueue and a batch crossing the bound are refused (TL_QUEUE_FULL),
 *   also with producers in several processes racing.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { Client, connect, isTasklineError, type Backend } from '../../src/index.js';
import { ChildWorker, eventually } from '../helpers/processes.js';
import { RedisServer } from '../helpers/redis-server.js';
import { tempDir, uniquePrefix } from '../helpers/stores.js';

const WORKER = fileURLToPath(new URL('../fixtures/limits-worker.mjs', import.meta.url));
const PRODUCER = fileURLToPath(new URL('../fixtures/limits-producer.mjs', import.meta.url));
/** The children exit by themselves after this long, even should this process die. */
const MAX_LIFE_MS = '90000';
const MS = 1_000_000n;

type Kind = 'redis' | 'sqlite';

interface Store {
  url: string;
  env: Record<string, string>;
  backend: Backend;
  /** The private redis-server (Redis only). */
  server: RedisServer | null;
  cleanup(): Promise<void>;
}

async function openStore(kind: Kind): Promise<Store> {
  const prefix = uniquePrefix(`limits-${kind}`);
  if (kind === 'redis') {
    const server = await RedisServer.start();
    const backend = await connect(server.url, { prefix }).catch(async (error: unknown) => {
      await server.destroy();
      throw error;
    });
    return {
      url: server.url, env: { BACKEND_URL: server.url, PREFIX: prefix }, backend, server,
      cleanup: async () => {
        await backend.close();
        await server.destroy();
      },
    };
  }
  const dir = tempDir('taskline-limits');
  const url = `sqlite:${join(dir.path, 'taskline.db')}`;
  const backend = await connect(url, { prefix });
  return {
    url, env: { BACKEND_URL: url, PREFIX: prefix }, backend, server: null,
    cleanup: async () => {
      await backend.close();
      dir.remove();
    },
  };
}

interface HandlerEvent {
  type: 'enter' | 'exit';
  id: string;
  attempt: number;
  wall: number;
  hr: bigint;
  worker: number;
}

interface ClaimLine {
  tasks: number;
  limited: string;
  hr: bigint;
  worker: number;
}

function handlerEvents(children: ChildWorker[]): HandlerEvent[] {
  return children.flatMap((child, worker) =>
    child.lines
      .filter((l) => l.startsWith('enter ') || l.startsWith('exit '))
      .map((l) => {
        const [type, id, attempt, wall, hr] = l.split(' ');
        return { type: type as HandlerEvent['type'], id, attempt: Number(attempt), wall: Number(wall), hr: BigInt(hr), worker };
      }),
  );
}

function claimLines(children: ChildWorker[]): ClaimLine[] {
  return children.flatMap((child, worker) =>
    child.lines
      .filter((l) => l.startsWith('claim '))
      .map((l) => {
        const [, tasks, limited, hr] = l.split(' ');
        return { tasks: Number(tasks), limited, hr: BigInt(hr), worker };
      }),
  );
}

/** Each claimed task's start by the store's clock (from the claims' replies). */
function storeStarts(children: ChildWorker[]): Map<string, number> {
  const starts = new Map<string, number>();
  for (const child of children) {
    for (const line of child.lines.filter((l) => l.startsWith('leased '))) {
      const [, id, startedAt] = line.split(' ');
      starts.set(id, Number(startedAt));
    }
  }
  return starts;
}

/** The most times of `sorted` (ascending) in any window [t, t + width). */
function maxInWindow(sorted: number[], width: number): number {
  let most = 0;
  let end = 0;
  for (let start = 0; start < sorted.length; start++) {
    while (end < sorted.length && sorted[end] < sorted[start] + width) end++;
    most = Math.max(most, end - start);
  }
  return most;
}

/** Handlers running after each event, in time order (an exit before an enter at the same instant). */
function runningProfile(events: HandlerEvent[]): { hr: bigint; running: number }[] {
  const sorted = [...events].sort((a, b) => (a.hr < b.hr ? -1 : a.hr > b.hr ? 1 : a.type === b.type ? 0 : a.type === 'exit' ? -1 : 1));
  let running = 0;
  return sorted.map((e) => ({ hr: e.hr, running: (running += e.type === 'enter' ? 1 : -1) }));
}

/** The most handlers running at once at any time in [from, to]. */
function maxRunningBetween(profile: { hr: bigint; running: number }[], from: bigint, to: bigint): number {
  let most = 0;
  for (const point of profile) {
    if (point.hr <= from) most = point.running;
    else break;
  }
  for (const point of profile) if (point.hr > from && point.hr <= to) most = Math.max(most, point.running);
  return most;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** Calls of each command the server ran (INFO commandstats). */
async function commandCalls(redis: Redis): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  for (const match of (await redis.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(match[1], Number(match[2]));
  return calls;
}

describe.each<Kind>(['redis', 'sqlite'])('queue limits across worker processes, on %s', (kind) => {
  let store: Store;
  const children: ChildWorker[] = [];
  const clients: (Client | Redis)[] = [];

  beforeEach(async () => {
    store = await openStore(kind);
  });

  afterEach(async () => {
    await Promise.all(children.splice(0).map((c) => c.destroy()));
    for (const c of clients.splice(0)) {
      if (c instanceof Redis) c.disconnect();
      else await c.close();
    }
    await store?.cleanup();
  });

  function startWorkers(count: number, env: Record<string, string>): ChildWorker[] {
    const started = Array.from({ length: count }, () => ChildWorker.start(WORKER, { ...store.env, MAX_LIFE_MS, ...env }));
    children.push(...started);
    return started;
  }

  async function ready(workers: ChildWorker[]): Promise<void> {
    await Promise.all(workers.map((c) => c.waitForLine((l) => l === 'ready', 20_000)));
  }

  it('rate 50 per second over 3 processes: no 1 s window holds more than 50 starts, ~300 start in 6 s, without busy polling', async () => {
    await store.backend.setQueueLimits('default', { rate: { limit: 50, intervalMs: 1000 } });
    const workers = startWorkers(3, { CONCURRENCY: '20' });
    await ready(workers);
    const redis = store.server ? new Redis(store.server.url) : null;
    if (redis) clients.push(redis);
    const client = new Client(store.backend);
    clients.push(client);

    await client.enqueueMany(Array.from({ length: 400 }, (_, i) => ({ type: 'work', payload: { ms: 5, i } })));
    const first = await eventually(async () => {
      const entries = handlerEvents(workers).filter((e) => e.type === 'enter');
      return entries.length > 0 ? Math.min(...entries.map((e) => e.wall)) : null;
    }, 15_000, 5);

    // While the workers are held back by the rate (from 1.5 s to 5.5 s): their claims, and on
    // Redis the commands the server ran.
    await pause(first + 1500 - Date.now());
    const claimsBefore = claimLines(workers).length;
    const commandsBefore = redis ? await commandCalls(redis) : null;
    const measuredFrom = Date.now();
    await pause(first + 5500 - Date.now());
    const measuredMs = Date.now() - measuredFrom;
    const claimsDuring = claimLines(workers).length - claimsBefore;
    const commandsAfter = redis ? await commandCalls(redis) : null;
    await pause(first + 6800 - Date.now());
    await Promise.all(workers.map((c) => c.destroy()));

    const entries = handlerEvents(workers).filter((e) => e.type === 'enter');
    const byStore = storeStarts(workers);
    // Every task started once (5 ms each, a 30 s lease: no retries).
    expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
    for (const e of entries) expect(byStore.has(e.id), `task ${e.id} was not claimed`).toBe(true);

    // By the store's clock (the one the limit is kept by): at most 50 starts in any 1 s window.
    const starts = [...byStore.values()].sort((a, b) => a - b);
    const maxPerSecond = maxInWindow(starts, 1000);
    expect(maxPerSecond).toBeLessThanOrEqual(50);
    // At handler entry (Date.now(), a little after the store's start): a window shorter by the
    // largest delay from start to entry holds starts of a window under 1 s: at most 50 too.
    const lag = Math.max(0, ...entries.map((e) => e.wall - byStore.get(e.id)!));
    const entryTimes = entries.map((e) => e.wall).sort((a, b) => a - b);
    const maxPerEntryWindow = maxInWindow(entryTimes, Math.max(1, 1000 - lag));
    expect(maxPerEntryWindow).toBeLessThanOrEqual(50);
    expect(lag).toBeLessThan(1000);

    // The limit is used: the 6 s from the first start hold close to 6 × 50 starts (a worker
    // waking late after each window would fall well short), and no more.
    const storeFirst = starts[0];
    const inSixSeconds = starts.filter((t) => t < storeFirst + 6000).length;
    expect(inSixSeconds).toBeLessThanOrEqual(300);
    expect(inSixSeconds).toBeGreaterThanOrEqual(280);
    // At entry, by the same reasoning: at most 300 in 6 s less the largest start→entry delay.
    const entriesInSixSeconds = entryTimes.filter((t) => t < first + 6000 - lag).length;
    expect(entriesInSixSeconds).toBeLessThanOrEqual(300);
    // All three processes took part.
    expect(new Set(entries.map((e) => e.worker)).size).toBe(3);

    // No busy polling while rate-limited: ~200 starts in the 4 s measured need a few claims per
    // burst per process; a loop that polled until the window opened would make thousands.
    const claimsPerSecond = (claimsDuring * 1000) / measuredMs;
    expect(claimsPerSecond).toBeLessThan(100);
    let commandsPerSecond = 0;
    let summary = '';
    if (commandsBefore && commandsAfter) {
      const diff = [...commandsAfter].map(([name, n]) => [name, n - (commandsBefore.get(name) ?? 0)] as const).filter(([name, n]) => n > 0 && name !== 'info');
      const total = diff.reduce((sum, [, n]) => sum + n, 0);
      commandsPerSecond = (total * 1000) / measuredMs;
      summary = diff.map(([name, n]) => `${name}=${n}`).join(' ');
      // Scripts' own commands included; a polling loop would run thousands per second.
      expect(commandsPerSecond).toBeLessThan(1500);
    }
    console.log(
      `${kind} rate: ${entries.length} started, max ${maxPerSecond} per 1 s window (store clock), max ${maxPerEntryWindow} per ${1000 - lag} ms window at entry (max start→entry ${lag} ms), ` +
        `${inSixSeconds} in 6 s (store) / ${entriesInSixSeconds} in ${6000 - lag} ms (entry), ${claimsPerSecond.toFixed(1)} claims/s` +
        (redis ? `, ${commandsPerSecond.toFixed(0)} Redis commands/s (${summary})` : ''),
    );
  }, 60_000);

  it('concurrency 5 over 3 processes: never more than 5 running; a SIGKILLed worker’s slots come back after its lease', async () => {
    await store.backend.setQueueLimits('default', { concurrency: 5 });
    const workers = startWorkers(3, { CONCURRENCY: '20', LEASE_MS: '1500', RECOVER_MS: '500' });
    await ready(workers);
    const client = new Client(store.backend);
    clients.push(client);

    // 60 tasks of 100 ms.
    const startedAt = Date.now();
    const quick = await client.enqueueMany(Array.from({ length: 60 }, (_, i) => ({ type: 'work', payload: { ms: 100, i }, options: { maxRetries: 5 } })));
    await eventually(async () => (await store.backend.getQueue('default'))!.counts.completed === 60, 30_000, 50);
    const quickMs = Date.now() - startedAt;
    const quickEvents = handlerEvents(workers);
    const quickMax = Math.max(...runningProfile(quickEvents).map((p) => p.running));
    expect(quickMax).toBeLessThanOrEqual(5);
    expect(quickMax).toBeGreaterThanOrEqual(3);
    expect(new Set(quickEvents.filter((e) => e.type === 'exit').map((e) => e.id))).toEqual(new Set(quick.map((t) => t.id)));
    // 12 rounds of 5 at least; woken by acks, not by a 30 s idle wait.
    expect(quickMs).toBeGreaterThanOrEqual(1100);
    expect(quickMs).toBeLessThan(15_000);
    // (One process may take all of them: each has 20 slots of its own. Logged, not asserted.)
    const quickWorkers = new Set(quickEvents.map((e) => e.worker)).size;

    // 10 tasks of 2 s: once 5 run, the worker running most of them is killed while it holds them.
    // A lost lease fails the attempt: retry 50 ms later, not after the default backoff of ~10 s.
    const retry = { maxRetries: 5, backoff: { type: 'fixed' as const, delay: 50 } };
    const slow = await client.enqueueMany(Array.from({ length: 10 }, (_, i) => ({ type: 'work', payload: { ms: 2000, i }, options: retry })));
    const slowIds = new Set(slow.map((t) => t.id));
    const openSlow = () => {
      const open = new Map<string, HandlerEvent>();
      for (const e of handlerEvents(workers).filter((x) => slowIds.has(x.id))) {
        if (e.type === 'enter') open.set(e.id, e);
        else open.delete(e.id);
      }
      return [...open.values()];
    };
    await eventually(async () => openSlow().length === 5, 15_000, 10);
    await pause(300);
    const open = openSlow();
    expect(open).toHaveLength(5);
    const perWorker = [0, 1, 2].map((w) => open.filter((e) => e.worker === w).length);
    const victim = perWorker.indexOf(Math.max(...perWorker));
    const held = open.filter((e) => e.worker === victim).map((e) => e.id);
    expect(held.length).toBeGreaterThanOrEqual(2);
    const killedAt = process.hrtime.bigint();
    const killedAtWall = Date.now();
    workers[victim].kill('SIGKILL');
    await workers[victim].exited;
    // One more task wakes the survivors: their claims find the killed worker's slots still taken.
    const extra = await client.enqueue('work', { ms: 2000, extra: true }, retry);
    slowIds.add(extra.id);

    await eventually(async () => (await store.backend.getQueue('default'))!.counts.completed === 71, 40_000, 100);
    const recoveredMs = Date.now() - killedAtWall;
    const survivors = [0, 1, 2].filter((w) => w !== victim);
    const survivorEvents = handlerEvents(workers).filter((e) => e.worker !== victim);
    const survivorProfile = runningProfile(survivorEvents);

    // Until its leases can have expired (≥ 1 s after its last renewal, every 500 ms), the killed
    // worker's slots stay taken: the survivors run at most 5 − held.
    const leaseHeld = killedAt + 600n * MS;
    expect(maxRunningBetween(survivorProfile, killedAt, leaseHeld)).toBeLessThanOrEqual(5 - held.length);
    // The held tasks run again on the survivors, only after the killed worker's leases ran out.
    const reruns = survivorEvents.filter((e) => e.type === 'enter' && held.includes(e.id));
    expect(new Set(reruns.map((e) => e.id))).toEqual(new Set(held));
    for (const e of reruns) expect(e.hr).toBeGreaterThan(leaseHeld);
    const firstRerun = reruns.map((e) => e.hr).reduce((a, b) => (a < b ? a : b));
    // The slots come back once the leases expire (≤ 1.5 s) and the recoverer (every 500 ms) ran:
    // the survivors' first start after the kill comes then, neither before nor much later.
    const firstStartAfterKill = survivorEvents.filter((e) => e.type === 'enter' && e.hr > killedAt).map((e) => e.hr).reduce((a, b) => (a < b ? a : b));
    const slotsBackMs = Number((firstStartAfterKill - killedAt) / MS);
    if (held.length === 5) expect(slotsBackMs).toBeGreaterThan(600);
    expect(slotsBackMs).toBeLessThan(6000);
    expect(Number((firstRerun - killedAt) / MS)).toBeLessThan(8000);
    // Meanwhile the survivors did try (woken by the extra task): the store refused them.
    const refused = claimLines(workers).filter((c) => c.worker !== victim && c.hr > killedAt && c.hr < firstRerun && c.limited === 'concurrency');
    expect(refused.length).toBeGreaterThanOrEqual(1);
    // Never more than 5 running, counting the killed worker's tasks until its death.
    const allProfile = runningProfile(handlerEvents(workers).filter((e) => e.worker !== victim || e.hr < killedAt));
    expect(Math.max(...allProfile.filter((p) => p.hr < killedAt).map((p) => p.running))).toBeLessThanOrEqual(5);
    expect(Math.max(...survivorProfile.map((p) => p.running))).toBeLessThanOrEqual(5);
    // The slots came back: every slow task completed, on the survivors.
    for (const id of slowIds) {
      const record = (await client.getTask(id))!;
      expect(record.state).toBe('completed');
      if (held.includes(id)) {
        expect(record.attempts[0].error).toBe('lease expired (worker lost)');
        expect(record.attempts.at(-1)!.outcome).toBe('completed');
      }
    }
    const survivorMaxAfter = maxRunningBetween(survivorProfile, leaseHeld, process.hrtime.bigint());
    expect(survivorMaxAfter).toBe(5);
    console.log(
      `${kind} concurrency: 60×100 ms in ${quickMs} ms on ${quickWorkers} processes, max running ${quickMax}; killed worker held ${held.length}, ` +
        `survivors ran ≤ ${maxRunningBetween(survivorProfile, killedAt, leaseHeld)} until its lease, ${refused.length} refused claims, ` +
        `first start after the kill ${slotsBackMs} ms, first re-run of a held task ${Number((firstRerun - killedAt) / MS)} ms after, ` +
        `max ${survivorMaxAfter} after, all done ${recoveredMs} ms after the kill (survivors ${survivors.join(',')})`,
    );
  }, 60_000);

  it('groupConcurrency 2 over 3 processes: never more than 2 of a group run; B (20) finishes before A’s (2,000) 200th', async () => {
    await store.backend.setQueueLimits('default', { groupConcurrency: 2 });
    const workers = startWorkers(3, { CONCURRENCY: '20' });
    await ready(workers);
    const client = new Client(store.backend);
    clients.push(client);

    const tasks = (group: string, n: number) => Array.from({ length: n }, (_, i) => ({ type: 'work', payload: { ms: 20, i }, options: { group, id: `${group}-${i}` } }));
    await client.enqueueMany(tasks('A', 2000));
    await client.enqueueMany(tasks('B', 20));
    const exitsOf = (group: string) => handlerEvents(workers).filter((e) => e.type === 'exit' && e.id.startsWith(`${group}-`));
    await eventually(async () => exitsOf('B').length === 20, 30_000, 20);
    const lastB = exitsOf('B').map((e) => e.hr).reduce((a, b) => (a > b ? a : b));
    await eventually(async () => exitsOf('A').length >= 200, 60_000, 20);
    await Promise.all(workers.map((c) => c.destroy()));

    const aExits = exitsOf('A').map((e) => e.hr).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const aBeforeLastB = aExits.filter((hr) => hr < lastB).length;
    // Every B task ended before A's 200th did: B was not held behind A's 2,000.
    expect(lastB).toBeLessThan(aExits[199]);
    const events = handlerEvents(workers);
    const maxOf = (group: string) => Math.max(...runningProfile(events.filter((e) => e.id.startsWith(`${group}-`))).map((p) => p.running));
    // At most 2 of a group at once (seen in the handlers, over 60 slots), and the limit was used.
    expect(maxOf('A')).toBe(2);
    expect(maxOf('B')).toBe(2);
    // Every task ran once (no lease was lost).
    const entries = events.filter((e) => e.type === 'enter');
    expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
    console.log(`${kind} groupConcurrency: all 20 of B done when ${aBeforeLastB} of A were; max running A ${maxOf('A')}, B ${maxOf('B')}; ${new Set(entries.map((e) => e.worker)).size} processes took part`);
  }, 90_000);

  it('maxLength 100: the 101st enqueue and a batch crossing it are refused with TL_QUEUE_FULL, also for racing producer processes', async () => {
    const client = new Client(store.backend);
    clients.push(client);
    await store.backend.setQueueLimits('capped', { maxLength: 100 });
    const batch = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ type: 'work', payload: { i }, options: { queue: 'capped', id: `${tag}-${i}` } }));

    expect(await client.enqueueMany(batch(70, 'a'))).toHaveLength(70);
    // 70 + 31 > 100: the batch is refused whole.
    const crossing = await client.enqueueMany(batch(31, 'b')).then(() => null, (error: unknown) => error);
    expect(isTasklineError(crossing, 'TL_QUEUE_FULL'), String(crossing)).toBe(true);
    expect((await store.backend.getQueue('capped'))!.counts.queued).toBe(70);
    for (let i = 0; i < 31; i++) expect(await client.getTask(`b-${i}`)).toBeNull();
    // One that fits exactly is taken.
    expect(await client.enqueueMany(batch(30, 'c'))).toHaveLength(30);
    expect((await store.backend.getQueue('capped'))!.counts.queued).toBe(100);
    // The 101st.
    const refused = await client.enqueue('work', { i: 101 }, { queue: 'capped', id: 'd-101' }).then(() => null, (error: unknown) => error);
    expect(isTasklineError(refused, 'TL_QUEUE_FULL'), String(refused)).toBe(true);
    expect((refused as { details: unknown }).details).toEqual({ queue: 'capped', limit: 100, waiting: 100 });
    expect(await client.getTask('d-101')).toBeNull();
    expect((await store.backend.getQueue('capped'))!.counts.queued).toBe(100);

    // Three producer processes racing 50 enqueues each into another queue of maxLength 100.
    await store.backend.setQueueLimits('raced', { maxLength: 100 });
    const producers = Array.from({ length: 3 }, () => ChildWorker.start(PRODUCER, { ...store.env, QUEUE: 'raced', COUNT: '50', MAX_LIFE_MS }));
    children.push(...producers);
    await Promise.all(producers.map((p) => p.waitForLine((l) => l === 'ready', 20_000)));
    for (const p of producers) p.kill('SIGUSR2');
    await Promise.all(producers.map((p) => p.waitForLine((l) => l === 'finished', 30_000)));
    const oks = producers.flatMap((p) => p.lines.filter((l) => l.startsWith('ok ')));
    const fulls = producers.flatMap((p) => p.lines.filter((l) => l === 'full'));
    expect(oks).toHaveLength(100);
    expect(fulls).toHaveLength(50);
    expect((await store.backend.getQueue('raced'))!.counts.queued).toBe(100);
    console.log(`${kind} maxLength: racing producers stored ${oks.length} (${producers.map((p) => p.lines.filter((l) => l.startsWith('ok ')).length).join('+')}), refused ${fulls.length}`);
  }, 60_000);
});
