#!/usr/bin/env node
// Schedules at scale: Taskline's scheduler vs BullMQ job schedulers on one private redis-server,
// in one run. See bench/README.md ("Schedule benchmark").
//
//   npm run bench:schedules                       # 1,000 schedules every second, 3 instances, 60 s each
//   npm run bench:schedules -- --schedules 10000 --period 10   # 10,000 held, each every 10 s (1,000 fires/s)
//   npm run bench:schedules -- --quick            # 200 schedules, 15 s
//   npm run bench:schedules -- --seconds 30 --schedules 500 --only taskline --cpu-prof
//
// Each system runs as 3 child processes ("app instances", bench/schedules-child.mjs), each with a
// scheduler and a worker. Everything is counted afterwards from what is stored in Redis and from
// the handlers' own timestamps, never from the schedulers' reports.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { cleanupNow, forkChild, installCleanup, sleep, trackServer } from './children.mjs';
import { machineInfo, versions as versionsOf } from './environment.mjs';
import { diffSnapshots, parseInfo, RedisServer, snapshot } from './redis-server.mjs';
import { analyzeSlots, analyzeStarts, summarize } from './schedules-analyze.mjs';
import { formatNumber, renderTable } from './stats.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const CHILD = join(HERE, 'schedules-child.mjs');
const RESULTS_DIR = join(HERE, 'results');
const RESULTS = join(RESULTS_DIR, 'schedules-latest.json');
const SYSTEMS = ['taskline', 'bullmq'];
const LABEL = { taskline: 'Taskline', bullmq: 'BullMQ' };
const QUEUE = 'bench-schedules';
const TASK_TYPE = 'tick';
const PREFIX = { taskline: 'tl', bullmq: 'bull' };
const INSTANCES = 3;
const CONCURRENCY = 50;
const WARMUP_MS = 5_000;
const DRAIN_MS = 10_000;
const SETUP_LIMIT_MS = 120_000;

const SETTINGS = {
  taskline:
    'each instance: ScheduleService.reconcile() of the schedules (cron "* * * * * *", or "<i mod P>-59/<P> * * * * *" with --period P; overlap allow, catchUp default latest) as at start-up, ' +
    'then new Scheduler(backend) with defaults (lease 3 s, takeover delay 500 ms, grace 2 s) and new Worker(backend, { concurrency: 50, queues: [queue] }) on the same connection; ' +
    'completed tasks kept (default 24 h)',
  bullmq:
    'each instance: queue.upsertJobScheduler(id, { every: P × 1000 }, { name, data }) for every schedule as at start-up (one at a time), ' +
    'then new Worker(queue, processor, { concurrency: 50 }) (connection maxRetriesPerRequest: null); other options default — ' +
    'completed jobs kept (the default, so the parent can count them), lock 30 s, stalled check 30 s; no QueueEvents',
};

// ── options ────────────────────────────────────────────────────────────────────

function parseArgs(argv) {
  const options = { seconds: 60, schedules: 1_000, period: 1, quick: false, only: SYSTEMS, cpuProf: false, traceTicks: false };
  let seconds = null;
  let schedules = null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      if (arg.includes('=')) return arg.slice(arg.indexOf('=') + 1);
      if (i + 1 >= argv.length) throw new Error(`${arg} needs a value`);
      return argv[++i];
    };
    const whole = (name, min, max) => {
      const n = Number(value());
      if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be a whole number from ${min} to ${max}`);
      return n;
    };
    if (arg === '--quick') options.quick = true;
    else if (arg === '--seconds' || arg.startsWith('--seconds=')) seconds = whole('seconds', 5, 600);
    else if (arg === '--schedules' || arg.startsWith('--schedules=')) schedules = whole('schedules', 1, 10_000);
    else if (arg === '--period' || arg.startsWith('--period=')) {
      options.period = whole('period', 1, 60);
      if (60 % options.period !== 0) throw new Error('--period must divide 60 (1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30 or 60)');
    }
    else if (arg === '--cpu-prof') options.cpuProf = true;
    else if (arg === '--trace-ticks') options.traceTicks = true;
    else if (arg === '--only' || arg.startsWith('--only=')) {
      options.only = value().split(',').map((s) => s.trim()).filter(Boolean);
      const unknown = options.only.filter((s) => !SYSTEMS.includes(s));
      if (unknown.length > 0 || options.only.length === 0) throw new Error(`--only takes ${SYSTEMS.join(' and/or ')}`);
    } else if (arg === '--help' || arg === '-h') {
      console.log('usage: npm run bench:schedules -- [--seconds N] [--schedules N] [--period S] [--quick] [--only taskline,bullmq] [--cpu-prof] [--trace-ticks]');
      process.exit(0);
    } else throw new Error(`unknown argument ${arg} (try --help)`);
  }
  options.seconds = seconds ?? (options.quick ? 15 : 60);
  options.schedules = schedules ?? (options.quick ? 200 : 1_000);
  return options;
}

// ── processes and cleanup ──────────────────────────────────────────────────────

installCleanup();

/** One app instance; `next(type)` rejects on an error message, an early exit or the hard limit. */
function startChild(system, index, params, url, limitMs, execArgv) {
  const starts = [];
  const child = forkChild({
    script: CHILD,
    name: `${system} instance ${index + 1}`,
    limitMs,
    execArgv,
    init: { type: 'init', system, url, params: { ...params, limitMs: limitMs - 2_000 } },
    onMessage: (message) => {
      if (message.type !== 'starts') return false;
      for (const value of message.chunk) starts.push(value);
      return true;
    },
  });
  return { ...child, name: `${child.name} (pid ${child.pid})`, starts };
}

// ── reading the store ──────────────────────────────────────────────────────────

/** Every Taskline task of the queue: id, schedule, nominal time (from the fire id), createdAt. */
async function tasklineStored(redis) {
  const metaKey = `{${PREFIX.taskline}:${QUEUE}}:meta`;
  const items = [];
  let cursor = '0';
  do {
    const [next, entries] = await redis.hscan(metaKey, cursor, 'COUNT', 2_000);
    cursor = next;
    for (let i = 0; i < entries.length; i += 2) {
      const id = entries[i];
      const match = /^schedule:(.+):(\d+):(\d+)$/.exec(id);
      const meta = JSON.parse(entries[i + 1]);
      items.push({ id, schedule: match ? match[1] : null, generation: match ? Number(match[2]) : null, nominalAt: match ? Number(match[3]) : NaN, createdAt: meta.c, state: meta.s });
    }
  } while (cursor !== '0');
  // The fire history: outcomes other than "enqueued" (missed, skipped) would explain gaps.
  const outcomes = {};
  const firesKey = `{${PREFIX.taskline}:${QUEUE}}:fires`;
  cursor = '0';
  do {
    const [next, entries] = await redis.hscan(firesKey, cursor, 'COUNT', 2_000);
    cursor = next;
    for (let i = 1; i < entries.length; i += 2) {
      const { o, n } = JSON.parse(entries[i]);
      outcomes[o] ??= [];
      outcomes[o].push(n);
    }
  } while (cursor !== '0');
  return { items, outcomes };
}

/** Every BullMQ job a scheduler made: key bull:<queue>:repeat:<scheduler>:<millis> (any state). */
async function bullmqStored(redis) {
  const prefix = `${PREFIX.bullmq}:${QUEUE}:repeat:`;
  const pattern = new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}([^:]+):(\\d+)$`);
  const keys = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 2_000);
    cursor = next;
    for (const key of batch) if (pattern.test(key)) keys.push(key);
  } while (cursor !== '0');
  const items = [];
  for (let i = 0; i < keys.length; i += 1_000) {
    const pipeline = redis.pipeline();
    const slice = keys.slice(i, i + 1_000);
    for (const key of slice) pipeline.hmget(key, 'timestamp', 'opts', 'processedOn', 'finishedOn');
    const replies = await pipeline.exec();
    slice.forEach((key, j) => {
      const [, schedule, millis] = pattern.exec(key);
      const [timestamp, opts, processedOn, finishedOn] = replies[j][1];
      // The stored `delay` field is reset to 0 when the job is promoted; opts.delay is the delay it was made with.
      const delay = opts === null ? null : (JSON.parse(opts).delay ?? 0);
      const num = (v) => (v === null ? null : Number(v));
      items.push({ id: `repeat:${schedule}:${millis}`, schedule, nominalAt: Number(millis), timestamp: num(timestamp), delay, processedOn: num(processedOn), finishedOn: num(finishedOn) });
    });
  }
  return { items };
}

/** Groups items by the whole second of their slot; per second: count, min, p50, max of value(item). */
function bySecond(items, value, slotOf = (item) => item.nominalAt) {
  const groups = new Map();
  for (const item of items) {
    const second = Math.floor(slotOf(item) / 1000) * 1000;
    let list = groups.get(second);
    if (!list) groups.set(second, (list = []));
    list.push(value(item));
  }
  return [...groups]
    .sort((a, b) => a[0] - b[0])
    .map(([second, values]) => {
      const s = summarize(values);
      return { second: new Date(second).toISOString().slice(11, 19), count: s.count, min: Math.round(s.min), p50: Math.round(s.p50), max: Math.round(s.max) };
    });
}

/** A compact line: the p50 of each 5-second group of per-second values. */
function sparkline(series, key) {
  const out = [];
  for (let i = 0; i < series.length; i += 5) out.push(Math.round(summarize(series.slice(i, i + 5).map((s) => s[key])).p50));
  return out.join(' ');
}

// ── one system ─────────────────────────────────────────────────────────────────

async function runSystem(system, options, redis, url, profileDir) {
  const params = { prefix: PREFIX[system], queue: QUEUE, count: options.schedules, period: options.period, concurrency: CONCURRENCY, taskType: TASK_TYPE, traceTicks: options.traceTicks };
  const limitMs = SETUP_LIMIT_MS + WARMUP_MS + options.seconds * 1000 + DRAIN_MS + 60_000;
  const execArgv = options.cpuProf && system === 'taskline' ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [];
  const children = Array.from({ length: INSTANCES }, (_, i) => startChild(system, i, params, url, limitMs, execArgv));
  try {
    const ready = await Promise.all(children.map((c) => c.next('ready')));
    const readyAt = Date.now();
    const windowStart = Math.ceil((readyAt + WARMUP_MS) / 1000) * 1000;
    const windowEnd = windowStart + options.seconds * 1000;
    await sleep(windowStart - Date.now());
    const before = await snapshot(redis);
    const load0 = os.loadavg()[0];
    await sleep(windowEnd - Date.now());
    const after = diffSnapshots(before, await snapshot(redis));
    const loadEnd = os.loadavg();
    await sleep(DRAIN_MS);
    for (const child of children) child.send({ type: 'stop' });
    const done = await Promise.all(children.map((c) => c.next('done')));
    await Promise.all(children.map((c) => c.waitExit(10_000)));

    const starts = [];
    const createdOf = new Map();
    const stride = system === 'taskline' ? 3 : 4;
    for (const child of children) {
      const s = child.starts;
      for (let i = 0; i < s.length; i += stride) {
        starts.push({ id: s[i], startedAt: s[i + 1] });
        if (system === 'taskline') createdOf.set(s[i], s[i + 2]);
      }
    }
    const stored = system === 'taskline' ? await tasklineStored(redis) : await bullmqStored(redis);
    const scheduleIds = Array.from({ length: options.schedules }, (_, i) => `s${String(i).padStart(4, '0')}`);
    const slots = analyzeSlots({
      items: stored.items,
      schedules: scheduleIds,
      windowStart,
      windowEnd,
      periodMs: options.period * 1000,
      // Taskline's schedule i fires at second i mod period (0 with period 1); BullMQ's grid is set by its first upsert.
      fixedPhase: system === 'taskline' && options.period === 1 ? 0 : null,
    });
    const nominalOf = new Map(stored.items.map((item) => [item.id, item.nominalAt]));
    const runs = analyzeStarts({ starts, nominalOf, slotOf: slots.slotOf, windowStart, windowEnd });
    const startOf = new Map();
    for (const { id, startedAt } of starts) if (!startOf.has(id) || startedAt < startOf.get(id)) startOf.set(id, startedAt);
    const inWindow = (item) => {
      const slot = slots.slotOf.get(item.id);
      return slot >= windowStart && slot < windowEnd;
    };
    const result = {
      window: { start: new Date(windowStart).toISOString(), end: new Date(windowEnd).toISOString(), seconds: options.seconds },
      setupMs: ready.map((r) => r.setupMs),
      stored: stored.items.length,
      expected: slots.expected,
      fires: slots.fires,
      duplicates: slots.duplicates,
      missed: slots.missed,
      offGrid: slots.offGrid,
      unknownItems: slots.unknownItems,
      duplicateExamples: slots.duplicateExamples,
      missedExamples: slots.missedExamples,
      missedBySecond: slots.missedBySecond.slice(0, 120),
      lag: runs.lag,
      duplicateRuns: runs.duplicateRuns,
      notStarted: runs.notStarted,
      unknownRuns: runs.unknownRuns,
      handlerStarts: starts.length,
      redis: { cpuSeconds: after.cpuSeconds, commands: after.totalCommands, scriptCalls: after.scriptCalls, memoryBytes: after.memoryBytes, topCommands: Object.fromEntries(Object.entries(after.commands).sort((a, b) => b[1] - a[1]).slice(0, 12)) },
      instances: done.map((d) => d.result),
      lagBySecond: bySecond(stored.items.filter((item) => startOf.has(item.id) && inWindow(item)), (item) => startOf.get(item.id) - item.nominalAt, (item) => slots.slotOf.get(item.id)),
      // Flat lag: the first and the second half of the window alike.
      lagHalves: [0, 1].map((half) => {
        const mid = windowStart + (windowEnd - windowStart) / 2;
        const lags = stored.items
          .filter((item) => startOf.has(item.id) && inWindow(item) && (half === 0 ? slots.slotOf.get(item.id) < mid : slots.slotOf.get(item.id) >= mid))
          .map((item) => startOf.get(item.id) - item.nominalAt);
        return summarize(lags);
      }),
      load: { atWindowStart: Number(load0.toFixed(2)), atWindowEnd: loadEnd.map((x) => Number(x.toFixed(2))) },
    };
    if (system === 'taskline' && options.traceTicks) {
      // Ticks of the leader(s) whose fire call started in the window.
      const ticks = done.flatMap((d) => d.result.ticks ?? []).filter(([start]) => start >= windowStart && start < windowEnd);
      const col = (i) => summarize(ticks.map((t) => t[i]));
      const wakes = ticks.map(([start]) => start - Math.floor(start / 1000) * 1000);
      result.ticks = { count: ticks.length, fireAfterSecond: summarize(wakes), fireMs: col(1), advanceMs: col(2), firesPerTick: col(3), reloadMs: summarize(done.flatMap((d) => d.result.reloadMs ?? [])) };
      for (const d of done) {
        delete d.result.ticks;
        delete d.result.reloadMs;
      }
    }
    if (system === 'taskline') {
      const enqueueLags = [];
      const states = {};
      for (const item of stored.items) {
        if (!inWindow(item)) continue;
        enqueueLags.push(item.createdAt - item.nominalAt);
        states[item.state] = (states[item.state] ?? 0) + 1;
      }
      result.enqueueLag = summarize(enqueueLags);
      // Per nominal second: the first and last enqueue of that second's fires (createdAt − nominal).
      // first ≈ when the scheduler's tick got to enqueueing; last − first = how long the enqueueing took.
      result.enqueueBySecond = bySecond(stored.items.filter(inWindow), (item) => item.createdAt - item.nominalAt);
      result.taskStates = states;
      result.fireOutcomes = Object.fromEntries(
        Object.entries(stored.outcomes).map(([outcome, nominals]) => [outcome, nominals.filter((n) => n >= windowStart && n < windowEnd).length]),
      );
      let createdMismatch = 0;
      for (const item of stored.items) if (createdOf.has(item.id) && createdOf.get(item.id) !== item.createdAt) createdMismatch += 1;
      result.handlerCreatedAtMismatch = createdMismatch;
    } else {
      // job.timestamp + job.opts.delay is the nominal time whenever the delay was not clamped at 0
      // (the job was made before its slot); a clamped job was made after its slot.
      let equal = 0;
      let late = 0;
      let other = 0;
      const created = [];
      for (const item of stored.items) {
        if (!inWindow(item) || item.timestamp === null) continue;
        created.push(item.timestamp - item.nominalAt);
        if (item.timestamp + item.delay === item.nominalAt) equal += 1;
        else if (item.delay === 0 && item.timestamp > item.nominalAt) late += 1;
        else other += 1;
      }
      result.jobCreatedMinusNominal = summarize(created);
      result.timestampPlusDelay = { equalsIdMillis: equal, madeAfterItsSlot: late, other };
    }
    return result;
  } finally {
    for (const child of children) child.kill();
  }
}

// ── main ───────────────────────────────────────────────────────────────────────

const ms = (v) => (v === null || v === undefined ? 'n/a' : formatNumber(v));

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const perSystemMs = SETUP_LIMIT_MS + WARMUP_MS + options.seconds * 1000 + DRAIN_MS + 90_000;
  const runLimit = perSystemMs * options.only.length;
  setTimeout(() => {
    console.error(`\nThe whole run passed its hard limit of ${Math.round(runLimit / 1000)} s: stopping.`);
    cleanupNow();
    process.exit(2);
  }, runLimit).unref();

  const server = await RedisServer.start(process.env.REDIS_SERVER || 'redis-server');
  trackServer(server);
  const redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  const serverInfo = parseInfo(await redis.info('server'));
  const versions = versionsOf(serverInfo.redis_version);
  const machine = machineInfo();
  const profileDir = join(RESULTS_DIR, 'profiles');
  if (options.cpuProf) mkdirSync(profileDir, { recursive: true });

  console.log('Schedules at scale: Taskline scheduler vs BullMQ job schedulers');
  console.log(`machine : ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, ${machine.os}, load ${machine.loadAverage.join(' ')}`);
  console.log(`versions: Node ${versions.node}, Redis ${versions.redis}, BullMQ ${versions.bullmq} (ioredis ${versions.ioredis}), Taskline ${versions.taskline}`);
  console.log(
    `settings: ${options.schedules} schedules firing every ${options.period === 1 ? 'second' : `${options.period} s (schedule i at second i mod ${options.period})`}, ${INSTANCES} instances (child processes) each with a scheduler and a worker (no-op handler, concurrency ${CONCURRENCY}); ` +
      `measured window ${options.seconds} s starting ${WARMUP_MS / 1000} s after all instances are up (rounded up to a whole second), then ${DRAIN_MS / 1000} s for the handlers to catch up; ` +
      `redis-server on 127.0.0.1:${server.port} (--save '' --appendonly no), FLUSHALL before each system`,
  );
  for (const system of options.only) console.log(`          ${LABEL[system]}: ${SETTINGS[system]}`);
  if (options.cpuProf) console.log(`          --cpu-prof: Taskline instances write CPU profiles to ${profileDir}`);
  console.log('');

  const results = {};
  const errors = [];
  for (const system of options.only) {
    await redis.flushall();
    const started = Date.now();
    try {
      const r = await runSystem(system, options, redis, server.url, profileDir);
      results[system] = r;
      const instErrors = r.instances.reduce((n, i) => n + i.errors, 0);
      console.log(
        `${LABEL[system].padEnd(8)} window ${r.window.start} +${options.seconds} s: ${r.fires} fires of ${r.expected} expected, ${r.duplicates} duplicates, ${r.missed} missed, ` +
          `${r.offGrid} off-grid, ${r.duplicateRuns} duplicate handler runs, ${r.notStarted} never started; lag p50 ${ms(r.lag.p50)} p90 ${ms(r.lag.p90)} p99 ${ms(r.lag.p99)} max ${ms(r.lag.max)} ms; ` +
          `instance CPU ${r.instances.map((i) => `${formatNumber(i.cpuSeconds)} s`).join(' / ')}; Redis CPU ${formatNumber(r.redis.cpuSeconds)} s, ${formatNumber(r.redis.commands)} cmds in the window; ` +
          `setup ${r.setupMs.map((x) => `${formatNumber(x / 1000)} s`).join(' / ')}; load ${r.load.atWindowStart} → ${r.load.atWindowEnd[0]}; ${instErrors} errors${instErrors ? ` (first: ${r.instances.find((i) => i.firstError)?.firstError})` : ''} ` +
          `[${Math.round((Date.now() - started) / 1000)} s]`,
      );
      if (system === 'taskline') {
        console.log(`         enqueued lag (task createdAt − nominal) p50 ${ms(r.enqueueLag.p50)} p99 ${ms(r.enqueueLag.p99)} max ${ms(r.enqueueLag.max)} ms; fire outcomes in the window ${JSON.stringify(r.fireOutcomes)}`);
        console.log(`         leadership changes: ${r.instances.map((i) => i.leadership.map((l) => l.event).join(',') || '-').join(' / ')}; fires made by standbys (whole run): ${r.instances.map((i) => i.takeoverFires).join(' / ')}`);
        if (r.ticks) {
          const t = r.ticks;
          const f = (x) => `p50 ${ms(x.p50)} p90 ${ms(x.p90)} max ${ms(x.max)}`;
          console.log(`         leader ticks in the window: ${t.count}; fires per tick ${f(t.firesPerTick)}; ms: fire ${f(t.fireMs)} · advance ${f(t.advanceMs)}; fire call starts after the whole second ${f(t.fireAfterSecond)}; schedule reloads (whole run) ${t.reloadMs.count}, ${f(t.reloadMs)} ms`);
        }
        console.log(`         per 5 s of the window (ms): first enqueue of each second ${sparkline(r.enqueueBySecond, 'min')}; last ${sparkline(r.enqueueBySecond, 'max')}`);
      } else {
        const t = r.timestampPlusDelay;
        console.log(`         job made (job.timestamp − nominal) p50 ${ms(r.jobCreatedMinusNominal.p50)} p99 ${ms(r.jobCreatedMinusNominal.p99)} ms; timestamp + opts.delay = id millis for ${t.equalsIdMillis} jobs, made after their slot (delay clamped to 0) ${t.madeAfterItsSlot}, other ${t.other}`);
      }
      console.log(`         per 5 s of the window (ms): handler lag p50 of each second ${sparkline(r.lagBySecond, 'p50')}; max ${sparkline(r.lagBySecond, 'max')}`);
      console.log(`         lag p99 first half / second half of the window: ${ms(r.lagHalves[0].p99)} / ${ms(r.lagHalves[1].p99)} ms`);
      if (r.missed > 0) console.log(`         missed slots by second (first ones): ${r.missedBySecond.slice(0, 8).map((m) => `${m.second.slice(11, 19)}×${m.missed}`).join(', ')}`);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      errors.push({ system, message });
      console.log(`${LABEL[system].padEnd(8)} FAILED: ${message.split('\n')[0]}`);
    }
  }
  await redis.flushall();

  const header = ['', 'fires', 'duplicates', 'missed', 'lag p50 (ms)', 'lag p99 (ms)', 'lag p99 1st / 2nd half (ms)', 'enqueued lag p50 (ms)', 'enqueued lag p99 (ms)'];
  const rows = options.only.map((system) => {
    const r = results[system];
    if (!r) return [LABEL[system], 'failed', '', '', '', '', '', '', ''];
    const enqueued = system === 'taskline' ? [ms(r.enqueueLag.p50), ms(r.enqueueLag.p99)] : ['n/a', 'n/a'];
    return [
      `${LABEL[system]} (${formatNumber(r.expected)} expected)`,
      formatNumber(r.fires),
      String(r.duplicates),
      String(r.missed),
      ms(r.lag.p50),
      ms(r.lag.p99),
      `${ms(r.lagHalves[0].p99)} / ${ms(r.lagHalves[1].p99)}`,
      ...enqueued,
    ];
  });
  console.log('');
  console.log(`${options.schedules} schedules × every ${options.period === 1 ? 'second' : `${options.period} s`} × ${options.seconds} s, ${INSTANCES} instances, ${machine.cores} cores (load at start ${machine.loadAverage[0]})`);
  console.log(renderTable(header, rows));
  console.log('');
  console.log('fires: tasks/jobs found in Redis afterwards whose nominal time lies in the window. duplicates: tasks/jobs beyond the first for one (schedule, nominal slot).');
  console.log('missed: nominal slots of the window with no task/job. Taskline slots: every whole second (the nominal UTC ms in the task id schedule:<id>:<gen>:<ms>).');
  console.log('BullMQ slots: each scheduler\'s own grid, phase + k·1000 ms, phase = its most common (millis in the job id repeat:<id>:<millis>) mod 1000, set by the first upsert.');
  console.log('lag: handler start (wall clock in the worker) − nominal time (Taskline: the ms in the fire id; BullMQ: the millis in the job id, which equals job.timestamp +');
  console.log('job.opts.delay unless the job was made after its slot with its delay clamped to 0 — the stored `delay` field itself is reset to 0 when BullMQ promotes the job).');
  console.log('enqueued lag (Taskline): the stored task createdAt (store clock) − nominal. BullMQ makes each job');
  console.log('before its slot as a delayed job (when the previous one starts), so it has no comparable enqueue moment: n/a (its job.timestamp − nominal is in the JSON).');

  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(
    RESULTS,
    `${JSON.stringify({ date: new Date().toISOString(), machine, versions, options, settings: { instances: INSTANCES, concurrency: CONCURRENCY, warmupMs: WARMUP_MS, drainMs: DRAIN_MS, ...SETTINGS }, results, errors }, null, 2)}\n`,
  );
  console.log(`\nJSON: ${RESULTS}`);
  await redis.quit();
  await server.stop();
  trackServer(null);
  process.exit(errors.length > 0 ? 1 : 0);
}

main().catch((error) => {
  console.error(error instanceof Error ? error.stack : error);
  cleanupNow();
  process.exit(1);
});
