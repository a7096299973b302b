// The chaos suite's scenarios. Each runs real processes on a fresh store, injects its faults, lets
// the work finish, and returns one row of the table: what was acknowledged, what the faults were,
// and what came of them — read back from the store and from the workers' own logs.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, ScheduleService, connect } from '../dist/index.js';
import { RedisServer, sleep, startServer, startWorker, tempDir } from './processes.mjs';

const WORKERS = 3;
const TASK_OPTIONS = { maxRetries: 50, backoff: { type: 'fixed', delay: 0 } };

/** A fresh store of `kind`: a private redis-server with AOF, or a SQLite file. */
export async function openStore(kind) {
  if (kind === 'redis') {
    const redis = await RedisServer.start();
    return { kind, url: redis.url, prefix: 'chaos', redis };
  }
  return { kind, url: `sqlite:${join(tempDir('sqlite'), 'chaos.db')}`, prefix: null, redis: null };
}

async function closeStore(store) {
  await store.redis?.stop();
}

/**
 * The workers' logs, by task id: when each run started, which attempts' handlers returned, and
 * how many late results the store refused.
 */
function readRuns(dir) {
  const runs = new Map();
  for (const file of readdirSync(dir)) {
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
      const [kind, id, attempt, at] = line.split(' ');
      if (kind !== 's' && kind !== 'd' && kind !== 'x') continue;
      const entry = runs.get(id) ?? { startsAt: [], ended: new Set(), refused: 0 };
      if (kind === 's') entry.startsAt.push(Number(at));
      else if (kind === 'd') entry.ended.add(Number(attempt));
      else entry.refused += 1;
      runs.set(id, entry);
    }
  }
  return runs;
}

/** What the logs add to the store's verdict: runs beyond one per task, refused late results, and completions no handler run backs. */
function judgeRuns(runs, ids, records) {
  let starts = 0;
  let refused = 0;
  for (const run of runs.values()) {
    starts += run.startsAt.length;
    refused += run.refused;
  }
  // A completion the store recorded must be the result of a handler run of that very attempt.
  let unbacked = 0;
  for (const id of ids) {
    const completed = records.get(id)?.attempts.find((a) => a.outcome === 'completed');
    if (completed && !runs.get(id)?.ended.has(completed.attempt)) unbacked += 1;
  }
  return { reexecutions: Math.max(0, starts - ids.length), refused, unbacked };
}

/** Waits until `default` has nothing left to run, or `timeoutMs` passed. */
async function drain(backend, timeoutMs) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const queue = await backend.getQueue('default').catch(() => null);
    const c = queue?.counts;
    if (c && c.queued + c.running + c.retrying + c.scheduled === 0) return;
    if (Date.now() > until) return;
    await sleep(200);
  }
}

/**
 * Reads every acknowledged task back: lost (missing, or not completed once the queue drained),
 * duplicates (more than one completed attempt in its record), dead (ran out of attempts).
 */
async function judgeTasks(backend, ids) {
  let lost = 0;
  let duplicates = 0;
  let dead = 0;
  const records = new Map();
  for (const id of ids) {
    const task = await backend.getTask(id);
    if (task) records.set(id, task);
    if (!task || task.state !== 'completed') {
      lost += 1;
      if (task?.state === 'dead') dead += 1;
      continue;
    }
    if (task.attempts.filter((a) => a.outcome === 'completed').length > 1) duplicates += 1;
  }
  return { lost, duplicates, dead, records };
}

/** Enqueues `count` chaos tasks of 100–300 ms; adds their ids (all acknowledged) to `ids`. */
async function enqueueTasks(client, count, ids) {
  for (let i = 0; i < count; i += 250) {
    const items = [];
    for (let j = i; j < Math.min(count, i + 250); j++) items.push({ type: 'chaos', payload: { ms: 100 + (((ids.length + j) * 37) % 200) }, options: TASK_OPTIONS });
    for (const info of await client.enqueueMany(items)) ids.push(info.id);
  }
}

/** Keeps at least `low` tasks queued until `state.producing` turns false, so every fault hits workers at work. */
async function keepBacklog(client, backend, ids, state, low) {
  while (state.producing) {
    const queue = await backend.getQueue('default');
    if ((queue?.counts.queued ?? 0) < low) await enqueueTasks(client, 250, ids);
    await sleep(100);
  }
}

/** The tasks a worker's log shows started and not ended: what it held when it was stopped. */
function heldBy(log) {
  const open = new Set();
  let text = '';
  try {
    text = readFileSync(log, 'utf8');
  } catch {
    return open;
  }
  for (const line of text.split('\n')) {
    const [kind, id] = line.split(' ');
    if (kind === 's') open.add(id);
    else if (kind === 'd') open.delete(id);
  }
  return open;
}

/**
 * How long after a fault the store gave back the tasks the faulted worker held: the end the store
 * wrote to each one's lost attempt (its lease ran out), from the fault; the longest of them.
 */
function recoveryMs(hits, records) {
  let longest = 0;
  for (const { at, held } of hits) {
    for (const id of held) {
      const lostAttempt = records.get(id)?.attempts.find((a) => a.startedAt <= at && a.outcome !== 'completed' && a.finishedAt !== null && a.finishedAt >= at);
      if (lostAttempt) longest = Math.max(longest, lostAttempt.finishedAt - at);
    }
  }
  return longest;
}

/**
 * Workers SIGKILLed (`fault` 'kill') or SIGSTOPped past their lease and resumed ('freeze') under
 * load, one fault every `everyMs`, a killed worker replaced at once. Resume time: the longest the
 * store took to give a faulted worker's tasks back to the queue (recoveryMs).
 */
export async function workerFaults(kind, { fault, tasks, faults, everyMs, freezeMs = 2500 }) {
  const store = await openStore(kind);
  const backend = await connect(store.url, store.prefix ? { prefix: store.prefix } : {});
  const client = new Client(backend);
  const logs = tempDir('logs');
  let serial = 0;
  const newWorker = () => {
    const log = join(logs, `worker-${serial++}.log`);
    return startWorker(store, log).then((worker) => Object.assign(worker, { log }));
  };
  const started = Date.now();
  const workers = [];
  const state = { producing: true };
  let producer = Promise.resolve();
  try {
    const ids = [];
    await enqueueTasks(client, tasks, ids);
    workers.push(...(await Promise.all(Array.from({ length: WORKERS }, newWorker))));
    producer = keepBacklog(client, backend, ids, state, 200).catch((error) => error);
    const hits = [];
    for (let k = 0; k < faults; k++) {
      await sleep(everyMs);
      const index = k % workers.length;
      const target = workers[index];
      if (fault === 'kill') {
        target.signal('SIGKILL');
        await target.exited;
        hits.push({ at: Date.now(), held: heldBy(target.log) });
        workers[index] = await newWorker();
      } else {
        target.signal('SIGSTOP');
        const at = Date.now();
        await sleep(freezeMs);
        hits.push({ at, held: heldBy(target.log) });
        target.signal('SIGCONT');
      }
    }
    state.producing = false;
    const failure = await producer;
    if (failure instanceof Error) throw failure;
    await drain(backend, 60_000);
    await Promise.all(workers.map((w) => w.stop()));
    const verdict = await judgeTasks(backend, ids);
    const runs = judgeRuns(readRuns(logs), ids, verdict.records);
    return {
      scenario: fault === 'kill' ? 'worker SIGKILL' : 'worker SIGSTOP',
      store: kind, tasks: ids.length, faults: hits.length, idleFaults: hits.filter((h) => h.held.size === 0).length,
      lost: verdict.lost, duplicates: verdict.duplicates + runs.unbacked, reexecutions: runs.reexecutions, lateRefused: runs.refused,
      resumeMs: recoveryMs(hits, verdict.records), missedFires: null, seconds: (Date.now() - started) / 1000,
    };
  } finally {
    state.producing = false;
    await producer;
    await Promise.all(workers.map((w) => w.stop()));
    await client.close();
    await backend.close();
    await closeStore(store);
  }
}

/**
 * Redis SIGKILLed under load and started again on its append-only file, while a producer enqueues
 * and workers run. Only enqueues the store acknowledged count; each must complete. Resume time:
 * the longest from a restart to the next task a worker finished.
 */
export async function redisRestarts({ restarts, everyMs, downMs = 1000 }) {
  const store = await openStore('redis');
  const backend = await connect(store.url, { prefix: store.prefix });
  const client = new Client(backend);
  const logs = tempDir('logs');
  const started = Date.now();
  const ids = [];
  let producing = true;
  let refused = 0;
  const producer = (async () => {
    for (let i = 0; producing; i++) {
      const items = Array.from({ length: 10 }, (_, j) => ({ type: 'chaos', payload: { ms: 20 + (((i * 10 + j) * 37) % 80) }, options: TASK_OPTIONS }));
      try {
        for (const info of await client.enqueueMany(items)) ids.push(info.id);
      } catch {
        refused += 1; // not acknowledged: the producer would send it again; it is not counted
      }
      await sleep(25);
    }
  })();
  const workers = [];
  try {
    for (let w = 0; w < WORKERS; w++) workers.push(await startWorker(store, join(logs, `worker-${w}.log`)));
    const restartsAt = [];
    for (let k = 0; k < restarts; k++) {
      await sleep(everyMs);
      await store.redis.kill();
      await sleep(downMs);
      await store.redis.restart();
      restartsAt.push(Date.now());
    }
    await sleep(everyMs);
    producing = false;
    await producer;
    await drain(backend, 60_000);
    await Promise.all(workers.map((w) => w.stop()));
    const verdict = await judgeTasks(backend, ids);
    const logged = readRuns(logs);
    const runs = judgeRuns(logged, ids, verdict.records);
    // A run starts only once a worker claimed its task from the restarted Redis.
    const starts = [...logged.values()].flatMap((r) => r.startsAt).sort((a, b) => a - b);
    const resume = Math.max(0, ...restartsAt.map((at) => (starts.find((t) => t >= at) ?? at) - at));
    return {
      scenario: 'Redis SIGKILL + AOF restart', store: 'redis', tasks: ids.length, faults: restartsAt.length, idleFaults: 0,
      lost: verdict.lost, duplicates: verdict.duplicates + runs.unbacked, reexecutions: runs.reexecutions, lateRefused: runs.refused,
      resumeMs: resume, missedFires: null, seconds: (Date.now() - started) / 1000, refusedEnqueues: refused,
    };
  } finally {
    producing = false;
    await producer;
    await Promise.all(workers.map((w) => w.stop()));
    await client.close();
    await backend.close();
    await closeStore(store);
  }
}

async function leaderOf(servers) {
  const until = Date.now() + 15_000;
  for (;;) {
    for (const via of servers.filter((s) => s.running)) {
      try {
        const reply = await (await fetch(`${via.url}/api/v1/schedulers`, { signal: AbortSignal.timeout(2000) })).json();
        const entry = reply.schedulers.find((s) => s.leader);
        const server = entry && servers.find((s) => s.running && s.id === entry.id && s.pid === entry.pid);
        if (server) return server;
      } catch {
        // ask the next one
      }
    }
    if (Date.now() > until) throw new Error('no task center leads the scheduler');
    await sleep(100);
  }
}

/**
 * Three task centers on one store with a schedule firing every second; the scheduler's leader
 * SIGKILLed every `everyMs` and replaced. Every nominal second from the first kill's lead-in to the
 * end must have exactly one task. Resume time: the worst lag of the fires due in the 3 s after a kill.
 */
export async function leaderKills(kind, { kills, everyMs }) {
  const store = await openStore(kind);
  const backend = await connect(store.url, store.prefix ? { prefix: store.prefix } : {});
  const cwd = tempDir('centers');
  const started = Date.now();
  const servers = [];
  try {
    for (let i = 0; i < 3; i++) servers.push(await startServer(store, cwd));
    const service = new ScheduleService(backend);
    await service.create({ id: 'every-second', cron: '* * * * * *', task: { type: 'tick', queue: 'fires' }, overlap: 'allow' });
    const from = (await backend.now()) + 1000;
    const killsAt = [];
    for (let k = 0; k < kills; k++) {
      await sleep(everyMs);
      const leader = await leaderOf(servers);
      killsAt.push(await backend.now());
      leader.signal('SIGKILL');
      await leader.exited;
      servers.push(await startServer(store, cwd));
    }
    await sleep(4000);
    const to = (await backend.now()) - 3500;
    await Promise.all(servers.map((s) => s.stop()));

    const nominal = [];
    for (const state of ['queued', 'scheduled']) {
      let cursor;
      do {
        const page = await backend.listTasks('fires', state, { limit: 1000, cursor });
        for (const task of page.tasks) nominal.push({ at: Number(task.id.split(':')[3]), createdAt: task.createdAt });
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
    }
    const byTime = new Map();
    for (const f of nominal) byTime.set(f.at, (byTime.get(f.at) ?? 0) + 1);
    let missed = 0;
    let expected = 0;
    for (let t = Math.ceil(from / 1000) * 1000; t <= to; t += 1000) {
      expected += 1;
      if (!byTime.has(t)) missed += 1;
    }
    const ledger = await service.fires('every-second', { limit: 1000 });
    missed = Math.max(missed, ledger.filter((f) => f.outcome === 'missed').length);
    // A second fire of one time would be refused by its task id; the fire history would still
    // show a second enqueued entry for it.
    const enqueuedAt = new Map();
    for (const f of ledger.filter((e) => e.outcome === 'enqueued')) enqueuedAt.set(f.nominalAt, (enqueuedAt.get(f.nominalAt) ?? 0) + 1);
    const duplicates = [...byTime.values(), ...enqueuedAt.values()].filter((n) => n > 1).length;
    const resume = Math.max(0, ...killsAt.map((at) => Math.max(0, ...nominal.filter((f) => f.at > at && f.at <= at + 3000).map((f) => f.createdAt - f.at))));
    return {
      scenario: 'scheduler leader SIGKILL', store: kind, tasks: expected, faults: killsAt.length, idleFaults: 0, lost: null, duplicates,
      reexecutions: null, lateRefused: null, resumeMs: resume, missedFires: missed, seconds: (Date.now() - started) / 1000,
    };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await backend.close();
    await closeStore(store);
  }
}
