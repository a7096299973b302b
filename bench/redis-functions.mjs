#!/usr/bin/env node
// Redis Functions (FUNCTION LOAD once, FCALL per call) against EVALSHA (the whole script per
// call) for Taskline's hot path, with the prototype library of bench/redis-functions-lib.mjs:
//
//   npm run build && node bench/redis-functions.mjs [--runs 3] [--count 2000] [--keep-completed N]
//                     [--only instructions,fixed,wall] [--wall-count 20000] [--plain-globals]
//
// instructions  bench/redis-instructions.mjs as it is (redis-server under valgrind's callgrind,
//               the ack-and-claim loop of a busy two-lane worker), once plainly (EVALSHA) and
//               once with the library preloaded (FCALL), alternating which goes first, --runs
//               times: Redis instructions per processed task, and per call (×25: each call acks
//               25 tasks and claims 25). --plain-globals adds the library without its globals
//               bound to locals (FCALL_GLOBALS=plain), to price that part.
// fixed         the per-call cost without the work, under callgrind: ack-claim's prelude (clock,
//               K_ bindings, the lua/lib/ helpers it uses) with its body replaced by
//               `return 0`, by EVALSHA and by FCALL, next to the clock alone and a bare
//               `return 0` both ways; the same 18 keys and 10 arguments, 2,000 calls each.
// wall          no valgrind: a private redis-server, the same loop on --wall-count tasks per
//               measurement, EVALSHA and FCALL alternating, --runs each: µs per call inside
//               Redis (INFO commandstats usec_per_call), Redis CPU per call (INFO cpu) and the
//               round trip the worker sees (median). Wall-clock figures move with the machine's
//               load: the spread over the runs is printed, and the load average.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { connect, Client } from '../dist/index.js';
import * as scripts from '../dist/backend/redis/scripts.js';
import * as luaSource from '../dist/backend/redis/lua-source.js';
import * as keys from '../dist/backend/redis/keys.js';
import { buildLibrary, installFunctions } from './redis-functions-lib.mjs';
import { fillBenchQueue, completeAcks } from './bench-tasks.mjs';
import { RedisServer, freePort, parseInfo } from './redis-server.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : fallback);
const runs = Number(option('runs', 3));
const count = Number(option('count', 2000));
const wallCount = Number(option('wall-count', 20000));
const keepCompleted = option('keep-completed', null);
const only = new Set(option('only', 'instructions,fixed,wall').split(','));
const BATCH = 25;
const here = (path) => fileURLToPath(new URL(path, import.meta.url));

const range = (values, digits = 0) => {
  const sorted = [...values].sort((a, b) => a - b);
  const f = (v) => v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
  const median = sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
  return `${f(median)} (${sorted.map(f).join(' / ')})`;
};

const library = buildLibrary({ scripts, luaSource, keys });
console.log(`Redis ${execFileSync('redis-server', ['--version']).toString().match(/v=(\S+)/)[1]}, Node ${process.version}; library ${library.name}: ${library.source.length.toLocaleString('en-US')} bytes, ${library.functions.size} functions`);
console.log(`per-call values of the lua/lib/ helpers (set at the start of every FCALL): ${library.perCall.join(', ')}`);
console.log(`made once at load: ${library.once.join(', ')}\n`);

// 1. Instructions per task: bench/redis-instructions.mjs unchanged, with and without the library.
if (only.has('instructions')) {
  const extra = ['--count', String(count), ...(keepCompleted === null ? [] : ['--keep-completed', keepCompleted])];
  // --plain-globals adds a third variant: the library without its globals bound to locals.
  const variants = args.includes('--plain-globals') ? ['evalsha', 'fcall', 'fcall-plain'] : ['evalsha', 'fcall'];
  const results = Object.fromEntries(variants.map((v) => [v, []]));
  for (let run = 0; run < runs; run += 1) {
    for (const via of run % 2 === 0 ? variants : [...variants].reverse()) {
      const preload = via === 'evalsha' ? [] : ['--import', here('./redis-functions-fcall.mjs')];
      const env = { ...process.env, FCALL_REPORT: '1', FCALL_GLOBALS: via === 'fcall-plain' ? 'plain' : 'bound' };
      const child = spawnSync(process.execPath, [...preload, here('./redis-instructions.mjs'), ...extra], { encoding: 'utf8', env });
      const match = /^([\d,]+) Redis instructions per processed task/m.exec(child.stdout);
      if (child.status !== 0 || !match) throw new Error(`redis-instructions.mjs (${via}) failed: ${child.stderr}`);
      if (via !== 'evalsha' && !/[1-9]\d* script calls by FCALL/.test(child.stderr)) throw new Error('the FCALL run made no FCALL');
      results[via].push(Number(match[1].replace(/,/g, '')));
      console.log(`  run ${run + 1} ${via.padEnd(11)} ${match[0]}`);
    }
  }
  const setting = keepCompleted === null ? 'default retention' : `the queue keeps ${keepCompleted} completed`;
  console.log(`\ninstructions per processed task (${count} tasks, ${setting}), median (runs):`);
  for (const via of variants) console.log(`  ${via.padEnd(11)} ${range(results[via])} per task, ${range(results[via].map((v) => v * BATCH))} per call`);
  const saved = (results.evalsha.reduce((a, b) => a + b) - results.fcall.reduce((a, b) => a + b)) / runs;
  console.log(`  saved       ${Math.round(saved).toLocaleString('en-US')} per task (${((saved / (results.evalsha.reduce((a, b) => a + b) / runs)) * 100).toFixed(1)} %), ${Math.round(saved * BATCH).toLocaleString('en-US')} per call\n`);
}

// 2. The fixed cost per call, under callgrind.

/** The script the loader makes for `name` (lua-source.ts: clock, K_ bindings, the helpers it uses, body), with another body. */
function scriptWithBody(name, body) {
  return luaSource.assembleQueueScript(name, scripts.scriptKeyNames(name), luaSource.readHelpers(), body);
}

if (only.has('fixed')) {
  const CALLS = 2000;
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'taskline-callgrind-fn-'));
  const child = spawn(
    'valgrind',
    ['--tool=callgrind', `--callgrind-out-file=${join(dir, 'callgrind.out')}`, 'redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
  const redis = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => 300, enableAutoPipelining: false });
  redis.on('error', () => undefined);
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`valgrind exited with code ${child.exitCode}`);
      try {
        if (redis.status !== 'ready') await redis.connect();
        if ((await redis.ping()) === 'PONG') break;
      } catch (error) {
        if (Date.now() > deadline) throw new Error(`redis-server under valgrind did not answer within 60 s: ${error.message}`);
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
    }
    // The ack-claim callback with its body replaced by `return 0`: the library's per-call start.
    const probeLibrary = (() => {
      const fn = library.functions.get('ack-claim');
      const start = library.source.indexOf(`register_function('${fn}'`);
      const startup = library.source.slice(start).split('\n').slice(0, 6).join('\n');
      if (!/begin_queue\(\)$/.test(startup)) throw new Error('unexpected shape of the ack-claim registration');
      return `${library.source.replace(/^#!lua name=\S+/, '#!lua name=taskline_probe').replace(new RegExp(library.version, 'g'), 'probe')}\n${startup.replace('tl_probe_ack_claim', 'tl_probe_prelude_only').replace(fn, 'tl_probe_prelude_only')}\n  return 0\nend)\nregister_function('tl_probe_clock_only', function(keys, args)\n  KEYS, ARGV = keys, args\n  begin_clock()\n  return 0\nend)\nregister_function('tl_probe_return_0', function(keys, args) return 0 end)\n`;
    })();
    await redis.function('LOAD', 'REPLACE', probeLibrary);
    if (scriptWithBody('ack-claim', luaSource.readLua('ack-claim.lua')) !== scripts.scriptSource('ack-claim')) throw new Error('the loader assembles ack-claim otherwise');
    const prelude = scriptWithBody('ack-claim', 'return 0');
    const clockOnly = `${luaSource.readLua('lib/clock.lua')}\nreturn 0`;
    const bare = 'return 0';
    const shas = {};
    for (const [name, text] of Object.entries({ prelude, clockOnly, bare })) {
      shas[name] = await redis.script('LOAD', text);
      if (shas[name] !== createHash('sha1').update(text).digest('hex')) throw new Error('sha mismatch');
    }
    const callKeys = scripts.scriptKeyNames('ack-claim').map((k) => `{tl:bench}:${k}`);
    const callArgs = ['0', 'tl:events', 'bench', '0', '86400000', '604800000', '86400000', '0', '25', 'w'];
    const cases = [
      ['EVALSHA ack-claim prelude, body `return 0`', () => redis.evalsha(shas.prelude, callKeys.length, ...callKeys, ...callArgs)],
      ['FCALL   ack-claim start,   body `return 0`', () => redis.fcall('tl_probe_prelude_only', callKeys.length, ...callKeys, ...callArgs)],
      ['EVALSHA clock prelude only, `return 0`', () => redis.evalsha(shas.clockOnly, callKeys.length, ...callKeys, ...callArgs)],
      ['FCALL   clock only,         `return 0`', () => redis.fcall('tl_probe_clock_only', callKeys.length, ...callKeys, ...callArgs)],
      ['EVALSHA `return 0`', () => redis.evalsha(shas.bare, callKeys.length, ...callKeys, ...callArgs)],
      ['FCALL   `return 0`', () => redis.fcall('tl_probe_return_0', callKeys.length, ...callKeys, ...callArgs)],
    ];
    console.log(`fixed cost per call under callgrind (${CALLS} calls each, ${callKeys.length} keys, ${callArgs.length} arguments):`);
    let part = 0;
    const perCall = {};
    for (const [label, call] of cases) {
      for (let i = 0; i < 50; i += 1) await call(); // warm: the script cache, Lua's GC
      execFileSync('callgrind_control', ['--zero', String(child.pid)], { stdio: 'ignore' });
      for (let i = 0; i < CALLS; i += 1) await call();
      execFileSync('callgrind_control', ['--dump', String(child.pid)], { stdio: 'ignore' });
      part += 1;
      const file = readdirSync(dir).find((f) => f.endsWith(`.${part}`));
      const summary = /^summary: (\d+)/m.exec(readFileSync(join(dir, file), 'utf8'));
      perCall[label] = Number(summary[1]) / CALLS;
      console.log(`  ${label.padEnd(44)} ${Math.round(perCall[label]).toLocaleString('en-US')} instructions per call`);
    }
  } finally {
    redis.disconnect();
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  }
  console.log('');
}

// 3. Wall time per call, no valgrind.
if (only.has('wall')) {
  const { switchTo } = installFunctions({ scripts, luaSource, keys });
  const server = await RedisServer.start(process.env.REDIS_SERVER ?? 'redis-server');
  const admin = new Redis(server.url, { enableAutoPipelining: false });
  const results = { evalsha: { inside: [], cpu: [], trip: [] }, fcall: { inside: [], cpu: [], trip: [] } };
  const loads = [];
  try {
    const loadStart = process.hrtime.bigint();
    await admin.function('LOAD', 'REPLACE', library.source);
    const loadMs = Number(process.hrtime.bigint() - loadStart) / 1e6;
    const memory = parseInfo(await admin.info('memory'));
    console.log(`FUNCTION LOAD of the library: ${loadMs.toFixed(1)} ms (round trip); used_memory_vm_functions ${memory.used_memory_vm_functions} bytes, used_memory_functions ${memory.used_memory_functions} bytes`);
    for (let run = 0; run < runs; run += 1) {
      for (const via of run % 2 === 0 ? ['evalsha', 'fcall'] : ['fcall', 'evalsha']) {
        switchTo(via);
        await admin.flushall();
        const backend = await connect(server.url, { prefix: 'tl' });
        const client = new Client(backend);
        if (keepCompleted !== null) await backend.setQueueKeep('bench', { completed: Number(keepCompleted) });
        await fillBenchQueue(client, wallCount);
        const claimLane = async () => (await backend.claim('w', [{ queue: 'bench', count: BATCH }], 30_000))[0].tasks;
        const lanes = [await claimLane(), await claimLane()];
        await admin.config('RESETSTAT');
        const cpuBefore = parseInfo(await admin.info('cpu'));
        const trips = [];
        let done = 0;
        for (let lane = 0; done + 3 * BATCH <= wallCount; lane = 1 - lane) {
          const acks = completeAcks(lanes[lane], 'w');
          const start = process.hrtime.bigint();
          const reply = await backend.ackAndClaim(acks, 'w', [{ queue: 'bench', count: BATCH }], 30_000);
          trips.push(Number(process.hrtime.bigint() - start) / 1e3);
          done += acks.length;
          lanes[lane] = reply.claims[0].tasks;
        }
        const cpuAfter = parseInfo(await admin.info('cpu'));
        const stats = /cmdstat_(evalsha|fcall):calls=(\d+),usec=(\d+)/.exec(await admin.info('commandstats'));
        if (!stats || stats[1] !== via) throw new Error(`expected ${via} calls, found ${stats?.[1]}`);
        const calls = Number(stats[2]);
        const cpu = ((cpuAfter.used_cpu_user + cpuAfter.used_cpu_sys - cpuBefore.used_cpu_user - cpuBefore.used_cpu_sys) * 1e6) / calls;
        trips.sort((a, b) => a - b);
        results[via].inside.push(Number(stats[3]) / calls);
        results[via].cpu.push(cpu);
        results[via].trip.push(trips[Math.floor(trips.length / 2)]);
        loads.push(loadavg()[0]);
        console.log(`  run ${run + 1} ${via.padEnd(7)} ${calls} calls: ${(Number(stats[3]) / calls).toFixed(1)} µs inside Redis, ${cpu.toFixed(1)} µs Redis CPU, round trip median ${trips[Math.floor(trips.length / 2)].toFixed(0)} µs`);
        await client.close();
        await backend.close();
      }
    }
  } finally {
    admin.disconnect();
    await server.stop();
  }
  const setting = keepCompleted === null ? 'default retention' : `the queue keeps ${keepCompleted} completed`;
  console.log(`\nµs per ack-claim call (25 acks + 25 claims, ${wallCount} tasks per run, ${setting}), median (runs); load average ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}:`);
  for (const via of ['evalsha', 'fcall']) {
    const r = results[via];
    console.log(`  ${via.padEnd(7)} inside Redis ${range(r.inside, 1)}; Redis CPU ${range(r.cpu, 1)}; round trip ${range(r.trip)}`);
  }
  // Each run measured both, one right after the other: the ratio within a run is less exposed
  // to the machine's phases than either figure.
  const ratio = (what) => range(results.fcall[what].map((v, i) => v / results.evalsha[what][i]), 2);
  console.log(`  FCALL / EVALSHA within each run: inside Redis ${ratio('inside')}; Redis CPU ${ratio('cpu')}; round trip ${ratio('trip')}`);
}
