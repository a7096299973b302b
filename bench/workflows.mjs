#!/usr/bin/env node
// Taskline workflows beside BullMQ flows (FlowProducer) on one private redis-server, in one run.
// See bench/README.md ("Workflow benchmark").
//
//   npm run bench:workflows                    # chord of 1,000 + 1,000 chains of 10, 3 rounds
//   npm run bench:workflows -- --quick         # chord of 200, 200 chains
//   npm run bench:workflows -- --rounds 5 --only chains
//   node bench/workflows.mjs --store sqlite    # Taskline on a SQLite file (BullMQ on Redis)
//
// Every measurement has two fresh child processes (bench/workflows-child.mjs): one worker,
// started first and idle, and one producer; each loads only the library under test. This
// process loads neither library; it starts Redis, reads INFO around each measurement, reports.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { cleanupNow, forkChild, installCleanup, trackServer } from './children.mjs';
import { machineInfo, versions as versionsOf } from './environment.mjs';
import { diffSnapshots, parseInfo, RedisServer, snapshot } from './redis-server.mjs';
import { formatNumber, median, renderTable } from './stats.mjs';
import { SETTINGS } from './settings.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const CHILD = join(HERE, 'workflows-child.mjs');
const RESULTS = join(HERE, 'results', 'workflows-latest.json');
const SYSTEMS = ['taskline', 'bullmq'];
const LABEL = { taskline: 'Taskline', bullmq: 'BullMQ' };
const SCENARIOS = ['chord', 'chains'];
const TARGET = 3;

// ── options ────────────────────────────────────────────────────────────────────

function parseArgs(argv) {
  const options = { rounds: 3, quick: false, only: null, systems: SYSTEMS, store: 'redis' };
  const list = (value, known, what) => {
    const items = value.split(',').map((s) => s.trim()).filter(Boolean);
    const unknown = items.filter((s) => !known.includes(s));
    if (unknown.length > 0 || items.length === 0) throw new Error(`unknown ${what} ${unknown.join(', ')}; known: ${known.join(', ')}`);
    return items;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      if (arg.includes('=')) return arg.slice(arg.indexOf('=') + 1);
      if (i + 1 >= argv.length) throw new Error(`${arg} needs a value`);
      return argv[++i];
    };
    const is = (name) => arg === name || arg.startsWith(`${name}=`);
    if (arg === '--quick') options.quick = true;
    else if (is('--rounds')) {
      options.rounds = Number(value());
      if (!Number.isInteger(options.rounds) || options.rounds < 1 || options.rounds > 20) throw new Error('--rounds must be a whole number from 1 to 20');
    } else if (is('--only')) options.only = list(value(), SCENARIOS, 'scenario(s)');
    else if (is('--systems')) {
      const chosen = list(value(), SYSTEMS, 'system(s)');
      options.systems = SYSTEMS.filter((s) => chosen.includes(s));
    }
    else if (is('--store')) {
      options.store = value();
      if (!['redis', 'sqlite'].includes(options.store)) throw new Error('--store is redis or sqlite');
    } else if (arg === '--help' || arg === '-h') {
      console.log(`usage: npm run bench:workflows -- [--rounds N] [--quick] [--only ${SCENARIOS.join(',')}] [--systems ${SYSTEMS.join(',')}] [--store redis|sqlite]`);
      process.exit(0);
    } else throw new Error(`unknown argument ${arg} (try --help)`);
  }
  return options;
}

function configFor(quick) {
  return {
    concurrency: 50,
    chord: { size: quick ? 200 : 1_000, warmup: 100 },
    chains: { count: quick ? 200 : 1_000, length: 10, inFlight: 100, warmup: 50 },
  };
}

/** Nodes of a scenario: the chord's children and its parent; every step of every chain. */
const nodesOf = (scenario, cfg) => (scenario === 'chord' ? cfg.chord.size + 1 : cfg.chains.count * cfg.chains.length);

/** Hard limits (ms): each child process (a whole measurement: start, warm-up, run), and the run. */
const LIMITS = {
  child: (quick) => (quick ? 60_000 : 120_000),
  run: (quick) => (quick ? 8 : 20) * 60_000,
};

// ── one measurement ────────────────────────────────────────────────────────────

installCleanup();

function startChild(system, role, params, url, limitMs) {
  return forkChild({ script: CHILD, name: `${system} ${role}`, limitMs, init: { type: 'init', role, system, url, params } });
}

async function finish(child) {
  child.send({ type: 'exit' });
  await child.waitExit(10_000);
}

/**
 * Submits one batch (a chord, or `count` chains) and waits for the worker to see the last of
 * them completed. Returns the producer's and the worker's reports.
 */
async function submitAndWait(worker, producer, tag, scenario, spec, chainLength, around = {}) {
  const finals = scenario === 'chord' ? 1 : spec.count;
  const value = scenario === 'chord' ? spec.size : chainLength;
  worker.send({ type: 'expect', tag, count: finals, value });
  await worker.next('expecting');
  const before = around.before ? await around.before() : null;
  const submit = scenario === 'chord' ? { kind: 'chord', size: spec.size } : { kind: 'chains', count: spec.count, length: chainLength, inFlight: spec.inFlight };
  producer.send({ type: 'submit', tag, ...submit });
  const [submitted, finished] = await Promise.all([producer.next('submitted'), worker.next('finished')]);
  const after = around.after ? await around.after(before) : null;
  if (finished.wrong > 0) throw new Error(`${finished.wrong} of ${finals} workflows ended with a wrong value (expected ${value})`);
  return { submitted, finished, after };
}

/**
 * One measurement: a fresh worker child (idle), a fresh producer child, a warm-up batch of the
 * same shape, then the measured batch, with INFO read just before the submit and after the
 * worker saw the last completion.
 */
async function measureOnce(system, scenario, cfg, url, redisForStats, limitMs) {
  const worker = startChild(system, 'worker', { concurrency: cfg.concurrency, chainLength: cfg.chains.length }, url, limitMs);
  let producer = null;
  try {
    await worker.next('ready');
    producer = startChild(system, 'producer', {}, url, limitMs);
    await producer.next('ready');
    const warm = scenario === 'chord' ? { size: cfg.chord.warmup } : { count: cfg.chains.warmup, inFlight: cfg.chains.inFlight };
    await submitAndWait(worker, producer, 'warm-up', scenario, warm, cfg.chains.length);
    const spec = scenario === 'chord' ? { size: cfg.chord.size } : { count: cfg.chains.count, inFlight: cfg.chains.inFlight };
    const around = redisForStats ? { before: () => snapshot(redisForStats), after: async (before) => diffSnapshots(before, await snapshot(redisForStats)) } : {};
    const { submitted, finished, after } = await submitAndWait(worker, producer, 'measured', scenario, spec, cfg.chains.length, around);
    await Promise.all([finish(producer), finish(worker)]);
    const nodes = nodesOf(scenario, cfg);
    const elapsedMs = finished.at - submitted.startedAt;
    return {
      nodes,
      elapsedMs,
      submitMs: submitted.submitMs,
      nodesPerSecond: (nodes / elapsedMs) * 1000,
      workerCpuPerNode: finished.cpuMicros / nodes,
      producerCpuPerNode: submitted.cpuMicros / nodes,
      commandsPerNode: after ? after.totalCommands / nodes : null,
      scriptCallsPerNode: after ? after.scriptCalls / nodes : null,
      redisCpuPerNode: after ? (after.cpuSeconds * 1e6) / nodes : null,
      memoryPerNode: after ? after.memoryBytes / nodes : null,
      commands: after ? Object.fromEntries(Object.entries(after.commands).sort((a, b) => b[1] - a[1]).map(([name, calls]) => [name, Number((calls / nodes).toFixed(3))])) : null,
    };
  } finally {
    worker.kill();
    producer?.kill();
  }
}

// ── the run ────────────────────────────────────────────────────────────────────

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const cfg = configFor(options.quick);
  const selected = options.only ?? SCENARIOS;
  const systems = options.systems;
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

  const sqliteDir = options.store === 'sqlite' ? mkdtempSync(join(os.tmpdir(), 'taskline-bench-wf-')) : null;
  const sqliteFile = sqliteDir ? join(sqliteDir, 'workflows.db') : null;
  const urlOf = (system) => (system === 'taskline' && sqliteFile ? `sqlite:${sqliteFile}` : server.url);
  const onRedis = (system) => urlOf(system) === server.url;

  const settings = {
    rounds: options.rounds,
    quick: options.quick,
    scenarios: selected,
    systems,
    tasklineStore: options.store,
    config: cfg,
    redis: `redis-server ${serverInfo.redis_version} on 127.0.0.1:${server.port}, --save '' --appendonly no, FLUSHALL before every measurement`,
    process: 'every measurement: a fresh worker child (concurrency 50, started and idle first) and a fresh producer child, each loading only the library under test',
    timing: 'wall clock from just before the first submit call (producer) to the worker\'s completion event of the last workflow\'s last node (both libraries emit it after the completion is stored)',
    taskline:
      `chord(group(${cfg.chord.size} × task('child', { i })), task('parent')) / chain(${cfg.chains.length} × task('step')) via client.enqueueWorkflow, default workflow options; ` +
      `handlers: child returns i, parent checks ctx.parent (the array) and returns its length, step returns (ctx.parent ?? 0) + 1; ${SETTINGS.taskline.worker}; ${SETTINGS.taskline.retention}`,
    bullmq:
      `flowProducer.add({ name: 'parent', queueName, children: ${cfg.chord.size} × { name: 'child', data: { i }, queueName } }) / a flow nested ${cfg.chains.length} deep; ` +
      `processors: child returns i, parent sums job.getChildrenValues() and returns the count, step returns its child's value + 1 (the deepest does not ask); ${SETTINGS.bullmq.worker}; ${SETTINGS.bullmq.retention}`,
  };

  console.log('Workflows: Taskline beside BullMQ flows (FlowProducer)');
  console.log(`machine : ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, ${machine.os}, load ${machine.loadAverage.join(' ')}`);
  console.log(`versions: Node ${versions.node}, Redis ${versions.redis}, BullMQ ${versions.bullmq} (ioredis ${versions.ioredis}), Taskline ${versions.taskline}`);
  console.log(`settings: ${options.rounds} round(s), ${options.quick ? 'quick' : 'full'} counts; ${settings.redis}`);
  if (sqliteFile) console.log(`          Taskline on SQLite (${sqliteFile}, deleted before every measurement); BullMQ on the Redis`);
  console.log(`          chord: 1 parent + ${formatNumber(cfg.chord.size)} children (warm-up: one chord of ${cfg.chord.warmup}); chains: ${formatNumber(cfg.chains.count)} × chain of ${cfg.chains.length}, ${cfg.chains.inFlight} submit calls in flight (warm-up: ${cfg.chains.warmup} chains)`);
  console.log(`          one worker process, concurrency ${cfg.concurrency}, handlers are no-ops returning a small value; ${settings.timing}`);
  console.log(`          Taskline: ${SETTINGS.taskline.retention}`);
  console.log(`          BullMQ:   ${SETTINGS.bullmq.retention}`);
  console.log('');

  const elapsed = () => `${String(Math.round((Date.now() - t0) / 1000)).padStart(4)}s`;
  const rounds = {};
  const details = {};
  const errors = [];
  const loads = [];
  const record = (key, system, round, value) => {
    rounds[key] ??= { taskline: [], bullmq: [] };
    rounds[key][system][round] = value;
  };

  try {
    for (const scenario of selected) {
      const title = scenario === 'chord' ? `chord of ${formatNumber(cfg.chord.size)}` : `${formatNumber(cfg.chains.count)} chains of ${cfg.chains.length}`;
      for (let round = 0; round < options.rounds; round++) {
        const order = round % 2 === 0 ? systems : [...systems].reverse();
        for (const system of order) {
          await redis.flushall();
          if (sqliteFile) for (const f of [sqliteFile, `${sqliteFile}-wal`, `${sqliteFile}-shm`]) rmSync(f, { force: true });
          const prefix = `[${elapsed()}] ${title.padEnd(17)} · round ${round + 1}/${options.rounds} · ${LABEL[system].padEnd(8)}`;
          try {
            const r = await measureOnce(system, scenario, cfg, urlOf(system), onRedis(system) ? redis : null, LIMITS.child(options.quick));
            for (const key of ['elapsedMs', 'nodesPerSecond', 'commandsPerNode', 'scriptCallsPerNode', 'redisCpuPerNode', 'workerCpuPerNode', 'producerCpuPerNode', 'memoryPerNode', 'submitMs']) {
              record(`${scenario}.${key}`, system, round, r[key]);
            }
            ((details[scenario] ??= { taskline: [], bullmq: [] })[system][round] = { commandsPerNode: r.commands });
            const load = os.loadavg()[0];
            loads.push(load);
            const redisPart = r.commandsPerNode === null ? 'Redis n/a (SQLite)' : `${formatNumber(r.commandsPerNode)} Redis cmds/node (${formatNumber(r.scriptCallsPerNode)} script calls), Redis CPU ${formatNumber(r.redisCpuPerNode)} µs/node`;
            console.log(
              `${prefix} ${formatNumber(r.elapsedMs)} ms, ${formatNumber(r.nodesPerSecond)} nodes/s (submit ${formatNumber(r.submitMs)} ms); ${redisPart}; ` +
                `worker CPU ${formatNumber(r.workerCpuPerNode)} µs/node, producer ${formatNumber(r.producerCpuPerNode)} µs/node [load ${load.toFixed(1)}]`,
            );
          } catch (error) {
            const message = error instanceof Error ? error.message : String(error);
            errors.push({ scenario, system, round: round + 1, message });
            console.log(`${prefix} FAILED: ${message.split('\n').slice(0, 2).join(' | ')}`);
          }
        }
      }
    }
  } finally {
    if (sqliteDir) rmSync(sqliteDir, { recursive: true, force: true });
  }

  // ── report ───────────────────────────────────────────────────────────────────
  const rowsOf = (scenario) => {
    const name = scenario === 'chord' ? `chord, 1 + ${formatNumber(cfg.chord.size)} children` : `${formatNumber(cfg.chains.count)} chains of ${cfg.chains.length}`;
    return [
      [`${scenario}.elapsedMs`, `${name}: time to finish (ms)`, 'lower'],
      [`${scenario}.nodesPerSecond`, `${name}: nodes/s`, 'higher'],
      [`${scenario}.commandsPerNode`, `${name}: Redis commands per node`, 'lower'],
      [`${scenario}.scriptCallsPerNode`, `${name}:   of which script calls`, 'lower'],
      [`${scenario}.redisCpuPerNode`, `${name}: Redis CPU per node (µs)`, 'lower'],
      [`${scenario}.workerCpuPerNode`, `${name}: worker CPU per node (µs)`, 'lower'],
      [`${scenario}.producerCpuPerNode`, `${name}: producer CPU per node (µs)`, 'lower'],
    ];
  };
  const results = {};
  const table = [];
  for (const scenario of selected) {
    for (const [key, label, better] of rowsOf(scenario)) {
      const values = rounds[key] ?? { taskline: [], bullmq: [] };
      const tl = median(values.taskline);
      const bq = median(values.bullmq);
      let ratio = null;
      if (tl !== null && bq !== null) ratio = better === 'higher' ? (bq === 0 ? null : tl / bq) : tl === 0 ? null : bq / tl;
      results[key] = { label, better, taskline: tl, bullmq: bq, ratio, rounds: values };
      table.push([`${better === 'higher' ? '↑' : '↓'} ${label}`, formatNumber(tl), formatNumber(bq), ratio === null ? 'n/a' : `${ratio.toFixed(2)}×`]);
    }
  }

  const durationS = Math.round((Date.now() - t0) / 1000);
  machine.loadAverageAtEnd = os.loadavg().map((x) => Number(x.toFixed(2)));
  machine.loadAverageAfterEachMeasurement = loads.map((x) => Number(x.toFixed(2)));
  console.log('');
  console.log(`Results: median of ${options.rounds} round(s). ratio = Taskline's advantage: Taskline/BullMQ on ↑ rows (higher is better),`);
  console.log('BullMQ/Taskline on ↓ rows (lower is better); above 1.00× means Taskline is better. A node is one task / one job.');
  console.log('');
  console.log(renderTable(['scenario', 'Taskline', 'BullMQ', 'ratio'], table));
  console.log('');
  console.log('Per round (nodes/s, in round order):');
  for (const scenario of selected) {
    for (const system of systems) {
      const values = (rounds[`${scenario}.nodesPerSecond`]?.[system] ?? []).map((v) => (v === undefined ? 'failed' : formatNumber(v)));
      console.log(`  ${scenario.padEnd(6)} ${LABEL[system].padEnd(8)} ${values.join(' / ')}`);
    }
  }
  console.log('');
  const verdicts = selected.map((scenario) => {
    const ratio = results[`${scenario}.nodesPerSecond`]?.ratio;
    const verdict = ratio === null || ratio === undefined ? 'n/a' : ratio >= TARGET ? 'met' : 'NOT met';
    return `${scenario} ${ratio == null ? 'n/a' : `${ratio.toFixed(2)}×`} (${verdict})`;
  });
  console.log(`Target: Taskline ≥ ${TARGET}× BullMQ's throughput (nodes/s) on both scenarios — ${verdicts.join(', ')}.`);
  if (sqliteFile) console.log('(Taskline ran on SQLite in this run: the ratio compares two stores, not the target setting.)');
  console.log('');
  if (errors.length > 0) {
    console.log(`${errors.length} measurement(s) failed (medians use the remaining rounds):`);
    for (const e of errors) console.log(`  - ${e.scenario} round ${e.round} ${LABEL[e.system]}: ${e.message.split('\n')[0]}`);
  }

  const report = {
    startedAt: startedAt.toISOString(),
    durationS,
    machine,
    versions,
    settings,
    results,
    // Every key per round, also those outside the table: memoryPerNode (Redis memory left per node
    // after the batch: Taskline keeps the finished workflows, BullMQ removes its flows) and submitMs.
    details: { perRound: rounds, commandsPerNodeByCommand: details },
    errors,
  };
  mkdirSync(dirname(RESULTS), { recursive: true });
  writeFileSync(RESULTS, `${JSON.stringify(report, null, 2)}\n`);
  const peakLoad = Math.max(0, ...loads);
  console.log(`Load average (1 min) during the run: up to ${peakLoad.toFixed(1)} on ${machine.cores} cores (after each measurement: ${loads.map((x) => x.toFixed(1)).join(' ')}).`);
  if (peakLoad > machine.cores) {
    console.log('Warning: the machine was busy with other work; the time and nodes/s rows are noisy. The per-node commands and CPU rows');
    console.log('depend little on load. See bench/README.md.');
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
