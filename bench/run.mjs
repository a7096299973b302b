#!/usr/bin/env node
// Taskline vs BullMQ on one private redis-server, in one run. See bench/README.md.
//
//   npm run bench                       # default counts, 3 rounds
//   npm run bench -- --quick            # smaller counts (a smoke run)
//   npm run bench -- --rounds 5 --only enqueue-one,process
//
// Every measurement runs in a fresh child process (bench/child.mjs) that loads only the library
// under test; this process only starts Redis, reads INFO around each measurement, and reports.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { cleanupNow, forkChild, installCleanup, sleep, trackServer } from './children.mjs';
import { machineInfo, versions as versionsOf } from './environment.mjs';
import { diffSnapshots, parseInfo, RedisServer, snapshot } from './redis-server.mjs';
import { formatNumber, median, renderTable } from './stats.mjs';
import { SETTINGS } from './settings.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const CHILD = join(HERE, 'child.mjs');
const RESULTS = join(HERE, 'results', 'latest.json');
const SYSTEMS = ['taskline', 'bullmq'];
const LABEL = { taskline: 'Taskline', bullmq: 'BullMQ', sqlite: 'SQLite' };
const SCENARIOS = ['enqueue-one', 'bulk', 'process', 'latency', 'idle', 'sqlite', 'redis-benchmark'];

// ── options ────────────────────────────────────────────────────────────────────

function parseArgs(argv) {
  const options = { rounds: 3, quick: false, only: null };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      if (arg.includes('=')) return arg.slice(arg.indexOf('=') + 1);
      if (i + 1 >= argv.length) throw new Error(`${arg} needs a value`);
      return argv[++i];
    };
    if (arg === '--quick') options.quick = true;
    else if (arg === '--rounds' || arg.startsWith('--rounds=')) {
      options.rounds = Number(value());
      if (!Number.isInteger(options.rounds) || options.rounds < 1 || options.rounds > 20) throw new Error('--rounds must be a whole number from 1 to 20');
    } else if (arg === '--only' || arg.startsWith('--only=')) {
      options.only = value().split(',').map((s) => s.trim()).filter(Boolean);
      const unknown = options.only.filter((s) => !SCENARIOS.includes(s));
      if (unknown.length > 0) throw new Error(`unknown scenario(s) ${unknown.join(', ')}; known: ${SCENARIOS.join(', ')}`);
    } else if (arg === '--help' || arg === '-h') {
      console.log('usage: npm run bench -- [--rounds N] [--quick] [--only ' + SCENARIOS.join(',') + ']');
      process.exit(0);
    } else throw new Error(`unknown argument ${arg} (try --help)`);
  }
  return options;
}

function configFor(quick) {
  return {
    enqueueOne: { count: quick ? 5_000 : 50_000, inFlight: 100, warmup: quick ? 1_000 : 5_000 },
    bulk: { count: quick ? 20_000 : 100_000, batch: 1_000, warmup: 5_000 },
    process: { count: quick ? 10_000 : 50_000, concurrency: 50, fillBatch: 1_000 },
    latency: { rate: 1_000, durationS: quick ? 3 : 10, warmupS: 1, concurrency: 50 },
    idle: { concurrency: 50, settleMs: 2_000, windowMs: quick ? 15_000 : 60_000 },
  };
}

/** Hard limits (ms): one child process, and the whole run. */
const LIMITS = {
  'enqueue-one': 60_000,
  'enqueue-bulk': 90_000,
  process: 120_000,
  latency: (cfg) => (cfg.latency.durationS + cfg.latency.warmupS) * 1000 + 40_000,
  idle: (cfg) => cfg.idle.settleMs + cfg.idle.windowMs + 30_000,
  run: (quick) => (quick ? 8 : 20) * 60_000,
};

// ── processes and cleanup ──────────────────────────────────────────────────────

installCleanup();

/** A child process running one measurement (see child.mjs for the protocol). */
function startChild(system, mode, params, url, limitMs) {
  const child = forkChild({ script: CHILD, name: `${system} ${mode}`, limitMs, init: { type: 'init', system, mode, url, params } });
  return {
    ...child,
    /** Asks the child to close its connections and exit; kills it if it takes more than 10 s. */
    async finish() {
      child.send({ type: 'exit' });
      await child.waitExit(10_000);
    },
  };
}

/** Runs one child through ready → go → done; `around` hooks read Redis before go and after done. */
async function runOnce(system, mode, params, url, limitMs, around = {}) {
  const child = startChild(system, mode, params, url, limitMs);
  try {
    await child.next('ready');
    const before = around.before ? await around.before() : null;
    child.send({ type: 'go' });
    const { result } = await child.next('done');
    const after = around.after ? await around.after(before) : null;
    await child.finish();
    return { result, after };
  } finally {
    child.kill();
  }
}

/**
 * One latency measurement: an idle worker child, then a producer child at a steady rate; both
 * start on go. `p` has concurrency, rate, total and skip (the warm-up tasks not measured).
 */
async function measureLatency(system, url, p, limitMs) {
  const worker = startChild(system, 'latency-worker', { concurrency: p.concurrency, total: p.total, skip: p.skip }, url, limitMs);
  let producer = null;
  try {
    await worker.next('ready');
    producer = startChild(system, 'latency-producer', { rate: p.rate, total: p.total }, url, limitMs);
    await producer.next('ready');
    worker.send({ type: 'go' });
    producer.send({ type: 'go' });
    const sent = (await producer.next('done')).result;
    const seen = (await worker.next('done')).result;
    await Promise.all([producer.finish(), worker.finish()]);
    if (seen.errors > 0) throw new Error(`${seen.errors} errors in the worker, first: ${seen.firstError}`);
    return { sent, seen };
  } finally {
    worker.kill();
    producer?.kill();
  }
}

// ── scenarios ──────────────────────────────────────────────────────────────────

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const cfg = configFor(options.quick);
  const selected = options.only ?? SCENARIOS;
  const startedAt = new Date();
  const t0 = Date.now();
  const runLimit = LIMITS.run(options.quick);
  setTimeout(() => {
    console.error(`\nThe whole run passed its hard limit of ${runLimit / 60_000} min: stopping.`);
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
  const settings = {
    rounds: options.rounds,
    quick: options.quick,
    scenarios: selected,
    config: cfg,
    payload: '~100 bytes of JSON: {"t":<epoch ms>,"i":<n>,"pad":"x…"}',
    redis: `redis-server ${serverInfo.redis_version} on 127.0.0.1:${server.port}, --save '' --appendonly no, FLUSHALL before every measurement`,
    process: 'every measurement in a fresh Node child process that loads only the library under test',
    taskline: SETTINGS.taskline,
    bullmq: SETTINGS.bullmq,
  };

  console.log('Taskline vs BullMQ benchmark');
  console.log(`machine : ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, ${machine.os}, load ${machine.loadAverage.join(' ')}`);
  console.log(`versions: Node ${versions.node}, Redis ${versions.redis}, BullMQ ${versions.bullmq} (ioredis ${versions.ioredis}), Taskline ${versions.taskline}`);
  console.log(`settings: ${options.rounds} round(s), ${options.quick ? 'quick' : 'full'} counts; ${settings.redis}`);
  for (const system of SYSTEMS) {
    console.log(`          ${LABEL[system]}: ${SETTINGS[system].enqueue}`);
    console.log(`          ${' '.repeat(LABEL[system].length)}  ${SETTINGS[system].worker}; ${SETTINGS[system].retention}`);
  }
  console.log(`          scenarios: ${JSON.stringify(cfg)}`);
  console.log('');

  const elapsed = () => `${String(Math.round((Date.now() - t0) / 1000)).padStart(4)}s`;
  const rounds = {};
  const errors = [];
  /** 1-minute load average after each measurement: a busy machine makes wall-clock figures noisy. */
  const loads = [];
  const record = (key, system, round, value) => {
    rounds[key] ??= { taskline: [], bullmq: [] };
    rounds[key][system][round] = value;
  };
  const flush = () => redis.flushall();

  /** Runs `measure(system, round)` for both systems per round, alternating which goes first. */
  async function scenario(title, count, measure) {
    for (let round = 0; round < count; round++) {
      const order = round % 2 === 0 ? SYSTEMS : [...SYSTEMS].reverse();
      for (const system of order) {
        await flush();
        try {
          const line = await measure(system, round);
          const load = os.loadavg()[0];
          loads.push(load);
          console.log(`[${elapsed()}] ${title} · round ${round + 1}/${count} · ${LABEL[system].padEnd(8)} ${line} [load ${load.toFixed(1)}]`);
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          errors.push({ scenario: title, system, round: round + 1, message });
          console.log(`[${elapsed()}] ${title} · round ${round + 1}/${count} · ${LABEL[system].padEnd(8)} FAILED: ${message.split('\n')[0]}`);
        }
      }
    }
    await flush();
  }

  if (selected.includes('enqueue-one')) {
    const p = cfg.enqueueOne;
    await scenario('1 enqueue one-by-one', options.rounds, async (system, round) => {
      const { result } = await runOnce(system, 'enqueue-one', p, server.url, LIMITS['enqueue-one']);
      record('enqueueOne', system, round, result.perSecond);
      record('enqueueOneCpu', system, round, result.cpuMicrosPerTask);
      return `${formatNumber(result.perSecond)} tasks/s (${p.count} tasks, ${p.inFlight} in flight); producer CPU ${formatNumber(result.cpuMicrosPerTask)} µs/task`;
    });
  }

  if (selected.includes('bulk')) {
    const p = cfg.bulk;
    await scenario('2 bulk enqueue      ', options.rounds, async (system, round) => {
      const { result, after } = await runOnce(system, 'enqueue-bulk', p, server.url, LIMITS['enqueue-bulk'], {
        before: () => snapshot(redis),
        after: async (before) => diffSnapshots(before, await snapshot(redis)),
      });
      const bytesPerTask = after.memoryBytes / p.count;
      record('bulk', system, round, result.perSecond);
      record('bulkCpu', system, round, result.cpuMicrosPerTask);
      record('memoryPerTask', system, round, bytesPerTask);
      return `${formatNumber(result.perSecond)} tasks/s (${p.count} tasks in batches of ${p.batch}); producer CPU ${formatNumber(result.cpuMicrosPerTask)} µs/task; Redis memory ${formatNumber(bytesPerTask)} B/task`;
    });
  }

  if (selected.includes('process')) {
    const p = cfg.process;
    await scenario('3 process no-op     ', options.rounds, async (system, round) => {
      await runOnce(system, 'enqueue-bulk', { count: p.count, batch: p.fillBatch, warmup: 0 }, server.url, LIMITS['enqueue-bulk']);
      const { result, after } = await runOnce(system, 'process', { count: p.count, concurrency: p.concurrency }, server.url, LIMITS.process, {
        before: () => snapshot(redis),
        after: async (before) => diffSnapshots(before, await snapshot(redis)),
      });
      if (result.errors > 0) throw new Error(`${result.errors} errors in the worker, first: ${result.firstError}`);
      const commandsPerTask = after.totalCommands / p.count;
      const cpuMicrosPerTask = (after.cpuSeconds * 1e6) / p.count;
      record('process', system, round, result.perSecond);
      record('rss', system, round, result.maxRssMB);
      record('workerCpuPerTask', system, round, result.cpuMicrosPerTask);
      record('commandsPerTask', system, round, commandsPerTask);
      record('scriptCallsPerTask', system, round, after.scriptCalls / p.count);
      record('redisCpuPerTask', system, round, cpuMicrosPerTask);
      rounds.commandBreakdown ??= { taskline: [], bullmq: [] };
      rounds.commandBreakdown[system][round] = Object.fromEntries(
        Object.entries(after.commands).sort((a, b) => b[1] - a[1]).map(([name, calls]) => [name, Number((calls / p.count).toFixed(3))]),
      );
      return (
        `${formatNumber(result.perSecond)} tasks/s (${p.count} tasks, concurrency ${p.concurrency}); worker CPU ${formatNumber(result.cpuMicrosPerTask)} µs/task; peak RSS ${formatNumber(result.maxRssMB)} MB; ` +
        `${formatNumber(commandsPerTask)} Redis cmds/task (${formatNumber(after.scriptCalls / p.count)} script calls); Redis CPU ${formatNumber(cpuMicrosPerTask)} µs/task`
      );
    });
  }

  if (selected.includes('latency')) {
    const p = cfg.latency;
    const total = p.rate * (p.durationS + p.warmupS);
    const skip = p.rate * p.warmupS;
    await scenario('4 latency @1000/s   ', options.rounds, async (system, round) => {
      const { sent, seen } = await measureLatency(system, server.url, { ...p, total, skip }, LIMITS.latency(cfg));
      record('latencyP50', system, round, seen.p50);
      record('latencyP99', system, round, seen.p99);
      rounds.latencyDetail ??= { taskline: [], bullmq: [] };
      rounds.latencyDetail[system][round] = { ...seen, achievedRate: sent.achievedRate, producerMaxLagMs: sent.maxLagMs };
      return (
        `p50 ${formatNumber(seen.p50)} ms, p90 ${formatNumber(seen.p90)} ms, p99 ${formatNumber(seen.p99)} ms, max ${formatNumber(seen.max)} ms ` +
        `(${seen.measured} tasks measured after ${p.warmupS} s warm-up; producer ${formatNumber(sent.achievedRate)}/s, max lag ${formatNumber(sent.maxLagMs)} ms)`
      );
    });
  }

  if (selected.includes('idle')) {
    const p = cfg.idle;
    await scenario('5 idle worker       ', 1, async (system, round) => {
      const { after } = await runOnce(system, 'idle', { concurrency: p.concurrency }, server.url, LIMITS.idle(cfg), {
        before: async () => {
          await sleep(p.settleMs);
          return snapshot(redis);
        },
        after: async (before) => {
          await sleep(p.windowMs);
          return diffSnapshots(before, await snapshot(redis));
        },
      });
      const perSecond = after.totalCommands / (p.windowMs / 1000);
      record('idleCommandsPerSecond', system, round, perSecond);
      rounds.idleBreakdown ??= { taskline: [], bullmq: [] };
      rounds.idleBreakdown[system][round] = after.commands;
      return `${formatNumber(perSecond)} Redis cmds/s over ${p.windowMs / 1000} s with nothing queued`;
    });
  }

  // ── the same scenarios on the SQLite backend (no peer) ─────────────────────────
  const sqliteRounds = {};
  if (selected.includes('sqlite')) {
    const dir = mkdtempSync(join(os.tmpdir(), 'taskline-bench-sqlite-'));
    const file = join(dir, 'bench.db');
    const url = `sqlite:${file}`;
    const files = [file, `${file}-wal`, `${file}-shm`];
    const fresh = () => files.forEach((f) => rmSync(f, { force: true }));
    const bytesOnDisk = () => files.reduce((sum, f) => sum + (statSync(f, { throwIfNoEntry: false })?.size ?? 0), 0);
    const put = (key, value) => (sqliteRounds[key] ??= []).push(value);
    const sqliteScenario = async (title, measure) => {
      for (let round = 0; round < options.rounds; round++) {
        fresh();
        try {
          const line = await measure();
          const load = os.loadavg()[0];
          loads.push(load);
          console.log(`[${elapsed()}] ${title} · round ${round + 1}/${options.rounds} · SQLite   ${line} [load ${load.toFixed(1)}]`);
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          errors.push({ scenario: title, system: 'sqlite', round: round + 1, message });
          console.log(`[${elapsed()}] ${title} · round ${round + 1}/${options.rounds} · SQLite   FAILED: ${message.split('\n')[0]}`);
        }
      }
    };
    try {
      await sqliteScenario('S1 enqueue one-by-one', async () => {
        const { result } = await runOnce('sqlite', 'enqueue-one', cfg.enqueueOne, url, LIMITS['enqueue-one']);
        put('enqueueOne', result.perSecond);
        put('enqueueOneCpu', result.cpuMicrosPerTask);
        return `${formatNumber(result.perSecond)} tasks/s; producer CPU ${formatNumber(result.cpuMicrosPerTask)} µs/task`;
      });
      await sqliteScenario('S2 bulk enqueue      ', async () => {
        const before = bytesOnDisk();
        const { result } = await runOnce('sqlite', 'enqueue-bulk', cfg.bulk, url, LIMITS['enqueue-bulk']);
        // The warm-up queue is in the file too: count it with the measured tasks.
        const perTask = (bytesOnDisk() - before) / (cfg.bulk.count + cfg.bulk.warmup);
        put('bulk', result.perSecond);
        put('memoryPerTask', perTask);
        return `${formatNumber(result.perSecond)} tasks/s; file (db + WAL) ${formatNumber(perTask)} B/task`;
      });
      await sqliteScenario('S3 process no-op     ', async () => {
        const p = cfg.process;
        await runOnce('sqlite', 'enqueue-bulk', { count: p.count, batch: p.fillBatch, warmup: 0 }, url, LIMITS['enqueue-bulk']);
        const { result } = await runOnce('sqlite', 'process', { count: p.count, concurrency: p.concurrency }, url, LIMITS.process);
        if (result.errors > 0) throw new Error(`${result.errors} errors in the worker, first: ${result.firstError}`);
        put('process', result.perSecond);
        put('rss', result.maxRssMB);
        put('workerCpuPerTask', result.cpuMicrosPerTask);
        return `${formatNumber(result.perSecond)} tasks/s; worker CPU ${formatNumber(result.cpuMicrosPerTask)} µs/task; peak RSS ${formatNumber(result.maxRssMB)} MB`;
      });
      await sqliteScenario('S4 latency @1000/s   ', async () => {
        const p = cfg.latency;
        const total = p.rate * (p.durationS + p.warmupS);
        const { sent, seen } = await measureLatency('sqlite', url, { ...p, total, skip: p.rate * p.warmupS }, LIMITS.latency(cfg));
        put('latencyP50', seen.p50);
        put('latencyP99', seen.p99);
        return `p50 ${formatNumber(seen.p50)} ms, p99 ${formatNumber(seen.p99)} ms (producer ${formatNumber(sent.achievedRate)}/s)`;
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  // ── context: redis-benchmark on the same machine and Redis ─────────────────────
  let redisBenchmark = null;
  if (selected.includes('redis-benchmark')) {
    await flush();
    const binary = process.env.REDIS_BENCHMARK || 'redis-benchmark';
    const requests = options.quick ? 50_000 : 200_000;
    const runBenchmark = (pipeline) => {
      const out = execFileSync(binary, ['-h', '127.0.0.1', '-p', String(server.port), '-q', '-n', String(requests), '-c', '50', '-P', String(pipeline), '-t', 'set,get,lpush,rpop,zadd'], {
        stdio: ['ignore', 'pipe', 'ignore'], timeout: 120_000,
      }).toString();
      const rates = {};
      // Lines look like "SET: 123456.79 requests per second, p50=0.215 msec" (progress lines end in \r).
      for (const line of out.split(/[\r\n]+/)) {
        const match = /^([A-Z_]+)[^:]*: ([\d.]+) requests per second/.exec(line.trim());
        if (match) rates[match[1]] = Number(match[2]);
      }
      return rates;
    };
    try {
      redisBenchmark = { requests, clients: 50, unpipelined: runBenchmark(1), pipelined16: runBenchmark(16) };
      const rates = Object.keys(redisBenchmark.unpipelined).map((cmd) => `${cmd} ${formatNumber(redisBenchmark.unpipelined[cmd])} → ${formatNumber(redisBenchmark.pipelined16[cmd])}`);
      console.log(`[${elapsed()}] redis-benchmark (50 clients, ${requests} requests, unpipelined → -P 16), commands/s: ${rates.join('; ')}`);
    } catch (error) {
      console.log(`[${elapsed()}] redis-benchmark FAILED: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
    }
    await flush();
  }

  // ── report ───────────────────────────────────────────────────────────────────
  const ROWS = [
    ['enqueue-one', 'enqueueOne', `enqueue one-by-one, ${cfg.enqueueOne.inFlight} in flight (tasks/s)`, 'higher'],
    ['bulk', 'bulk', `bulk enqueue, batches of ${cfg.bulk.batch} (tasks/s)`, 'higher'],
    ['process', 'process', `process ${formatNumber(cfg.process.count)} no-op, concurrency ${cfg.process.concurrency} (tasks/s)`, 'higher'],
    ['latency', 'latencyP50', `latency enqueue→start @${cfg.latency.rate}/s, p50 (ms)`, 'lower'],
    ['latency', 'latencyP99', `latency enqueue→start @${cfg.latency.rate}/s, p99 (ms)`, 'lower'],
    ['process', 'rss', 'worker peak RSS during the process run (MB)', 'lower'],
    ['enqueue-one', 'enqueueOneCpu', 'producer CPU per task, one-by-one (µs)', 'lower'],
    ['bulk', 'bulkCpu', 'producer CPU per task, bulk (µs)', 'lower'],
    ['process', 'workerCpuPerTask', 'worker CPU per processed task (µs)', 'lower'],
    ['process', 'commandsPerTask', 'Redis commands per processed task', 'lower'],
    ['process', 'scriptCallsPerTask', '  of which script calls (EVALSHA…)', 'lower'],
    ['process', 'redisCpuPerTask', 'Redis CPU per processed task (µs)', 'lower'],
    ['bulk', 'memoryPerTask', `Redis memory per queued task (bytes, ${formatNumber(cfg.bulk.count)} queued)`, 'lower'],
    ['idle', 'idleCommandsPerSecond', 'Redis commands/s, one idle worker', 'lower'],
  ];
  const results = {};
  const table = [];
  for (const [scenarioName, key, label, better] of ROWS) {
    if (!selected.includes(scenarioName)) continue;
    const values = rounds[key] ?? { taskline: [], bullmq: [] };
    const tl = median(values.taskline);
    const bq = median(values.bullmq);
    let ratio = null;
    if (tl !== null && bq !== null) ratio = better === 'higher' ? (bq === 0 ? null : tl / bq) : tl === 0 ? null : bq / tl;
    results[key] = { label, better, taskline: tl, bullmq: bq, ratio, rounds: values };
    const arrow = better === 'higher' ? '↑' : '↓';
    table.push([`${arrow} ${label}`, formatNumber(tl), formatNumber(bq), ratio === null ? 'n/a' : `${ratio.toFixed(2)}×`]);
  }

  const durationS = Math.round((Date.now() - t0) / 1000);
  machine.loadAverageAtEnd = os.loadavg().map((x) => Number(x.toFixed(2)));
  machine.loadAverageAfterEachMeasurement = loads.map((x) => Number(x.toFixed(2)));
  console.log('');
  console.log(`Results: median of ${options.rounds} round(s) (idle row: 1 round). ratio = Taskline's advantage: Taskline/BullMQ on ↑ rows (higher is better),`);
  console.log('BullMQ/Taskline on ↓ rows (lower is better); above 1.00× means Taskline is better.');
  console.log('');
  console.log(renderTable(['scenario', 'Taskline', 'BullMQ', 'ratio'], table));
  console.log('');
  const sqliteResults = {};
  if (selected.includes('sqlite')) {
    const SQLITE_ROWS = [
      ['enqueueOne', `enqueue one-by-one, ${cfg.enqueueOne.inFlight} in flight (tasks/s)`],
      ['bulk', `bulk enqueue, batches of ${cfg.bulk.batch} (tasks/s)`],
      ['process', `process ${formatNumber(cfg.process.count)} no-op, concurrency ${cfg.process.concurrency} (tasks/s)`],
      ['latencyP50', `latency enqueue→start @${cfg.latency.rate}/s, p50 (ms)`],
      ['latencyP99', `latency enqueue→start @${cfg.latency.rate}/s, p99 (ms)`],
      ['rss', 'worker peak RSS during the process run (MB)'],
      ['enqueueOneCpu', 'producer CPU per task, one-by-one (µs)'],
      ['workerCpuPerTask', 'worker CPU per processed task (µs)'],
      ['memoryPerTask', 'database file (db + WAL) per queued task (bytes)'],
    ];
    const sqliteTable = SQLITE_ROWS.map(([key, label]) => {
      sqliteResults[key] = { label, value: median(sqliteRounds[key] ?? []), rounds: sqliteRounds[key] ?? [] };
      return [label, formatNumber(sqliteResults[key].value)];
    });
    console.log(`SQLite backend (one file in a temporary directory, WAL; the same scenarios, median of ${options.rounds}):`);
    console.log('');
    console.log(renderTable(['scenario', 'Taskline on SQLite'], sqliteTable));
    console.log('');
  }
  if (redisBenchmark) {
    const cmds = Object.keys(redisBenchmark.unpipelined);
    console.log(`Context: redis-benchmark on this machine and Redis (50 clients, ${redisBenchmark.requests} requests each), commands/s:`);
    console.log('');
    console.log(renderTable(['command', 'unpipelined', 'pipelined (-P 16)'], cmds.map((c) => [c, formatNumber(redisBenchmark.unpipelined[c]), formatNumber(redisBenchmark.pipelined16[c])])));
    const process_ = results.process;
    const perTask = results.commandsPerTask;
    if (process_?.taskline && perTask?.taskline) {
      console.log('');
      console.log(
        `During the process run Redis executed ${formatNumber(process_.taskline * perTask.taskline)} commands/s for Taskline ` +
          `(${formatNumber(perTask.taskline)} per task × ${formatNumber(process_.taskline)} tasks/s) and ` +
          `${formatNumber((process_.bullmq ?? 0) * (perTask.bullmq ?? 0))} for BullMQ.`,
      );
    }
    console.log('');
  }

  if (errors.length > 0) {
    console.log(`${errors.length} measurement(s) failed (medians use the remaining rounds):`);
    for (const e of errors) console.log(`  - ${e.scenario.trim()} round ${e.round} ${LABEL[e.system]}: ${e.message.split('\n')[0]}`);
  }

  const report = {
    startedAt: startedAt.toISOString(),
    durationS,
    machine,
    versions,
    settings,
    results,
    sqlite: sqliteResults,
    redisBenchmark,
    details: { commandsPerTaskByCommand: rounds.commandBreakdown, latency: rounds.latencyDetail, idleCommands: rounds.idleBreakdown },
    errors,
  };
  mkdirSync(dirname(RESULTS), { recursive: true });
  writeFileSync(RESULTS, `${JSON.stringify(report, null, 2)}\n`);
  const peakLoad = Math.max(0, ...loads);
  console.log(`Load average (1 min) during the run: up to ${peakLoad.toFixed(1)} on ${machine.cores} cores.`);
  if (peakLoad > machine.cores) {
    console.log('Warning: the machine was busy with other work; throughput and latency (wall-clock) figures are noisy. The CPU-per-task,');
    console.log('commands-per-task and memory rows depend little on load. See bench/README.md.');
  }
  console.log(`Wrote ${RESULTS} (total ${durationS} s).`);

  redis.disconnect();
  await server.stop();
  trackServer(null);
  process.exit(errors.length > 0 ? 1 : 0);
}

main().catch((error) => {
  console.error(error instanceof Error ? error.stack : error);
  cleanupNow();
  process.exit(1);
});
