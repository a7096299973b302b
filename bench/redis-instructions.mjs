#!/usr/bin/env node
// Redis's cost per processed task in CPU instructions, counted by valgrind's callgrind: the same
// count for the same scripts on every run (±0.2 %), where CPU time on a shared 2-core box moves
// ±15 % between runs. For comparing two versions of the Lua scripts (docs/performance.md).
//
//   npm run build && node bench/redis-instructions.mjs [--count 2000] [--keep-completed N]
//   npm run build && node bench/redis-instructions.mjs --chains [--count 2000]
//
// Starts its own redis-server under `valgrind --tool=callgrind` (Debian packages valgrind and
// redis-server), enqueues the tasks, then runs what a busy worker with two lanes does: each call
// acks one lane's 25 tasks and claims 25 more for it (Backend.ackAndClaim), so the running set
// holds 25–50 tasks. Only that part is counted (callgrind_control zeroes the counters before it
// and dumps them after). Prints instructions per task. --keep-completed sets the queue's bound on
// completed tasks first (setQueueKeep; the benchmark's setting is 0).
// --chains: workflow nodes instead (count/10 chains of 10, as in bench/workflows.mjs, each step's
// result its parent's + 1, the queue keeping 0 completed): instructions per node to create the
// chains, and per node to run them (every ack starts the step's child).
// KEEP_CALLGRIND=1 keeps callgrind's output files (their folder is printed) for callgrind_annotate.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { connect, Client } from '../dist/index.js';
import { fillBenchQueue, completeAcks } from './bench-tasks.mjs';
import { freePort } from './redis-server.mjs';

const args = process.argv.slice(2);
const countAt = args.indexOf('--count');
const count = countAt >= 0 ? Number(args[countAt + 1]) : 2000;
const option = (name) => (args.includes(`--${name}`) ? Number(args[args.indexOf(`--${name}`) + 1]) : null);
const keepCompleted = option('keep-completed');
const chains = args.includes('--chains');
const BATCH = 25;

const port = await freePort();
const dir = mkdtempSync(join(tmpdir(), 'taskline-callgrind-'));
const child = spawn(
  'valgrind',
  ['--tool=callgrind', `--callgrind-out-file=${join(dir, 'callgrind.out')}`, 'redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
  { stdio: 'ignore' },
);
const url = `redis://127.0.0.1:${port}`;

try {
  // valgrind takes a few seconds to start redis-server.
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`valgrind exited with code ${child.exitCode} (are valgrind and redis-server installed?)`);
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      if ((await probe.ping()) === 'PONG') break;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`redis-server under valgrind did not answer within 60 s: ${error.message}`);
    } finally {
      probe.disconnect();
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  const backend = await connect(url, { prefix: 'tl' });
  const client = new Client(backend);
  if (chains) await countChains(child.pid, dir, backend, client);
  else await countTasks(child.pid, dir, backend, client);
  await client.close();
  await backend.close();
} finally {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  if (process.env.KEEP_CALLGRIND) console.log(`callgrind files kept in ${dir}`); else rmSync(dir, { recursive: true, force: true });
}

/** Plain no-op tasks: `count` enqueued, then acked and claimed 25 at a time by two lanes. */
async function countTasks(pid, dir, backend, client) {
  if (keepCompleted !== null) await backend.setQueueKeep('bench', { completed: keepCompleted });
  await fillBenchQueue(client, count);
  const claimLane = async () => (await backend.claim('w', [{ queue: 'bench', count: BATCH }], 30_000))[0].tasks;
  const lanes = [await claimLane(), await claimLane()];
  // The redis-server process under valgrind (its pid is valgrind's: valgrind runs it in place).
  execFileSync('callgrind_control', ['--zero', String(pid)], { stdio: 'ignore' });
  let done = 0;
  for (let lane = 0; done + 3 * BATCH <= count; lane = 1 - lane) {
    const acks = completeAcks(lanes[lane], 'w');
    const reply = await backend.ackAndClaim(acks, 'w', [{ queue: 'bench', count: BATCH }], 30_000);
    done += acks.length;
    lanes[lane] = reply.claims[0].tasks;
  }
  execFileSync('callgrind_control', ['--dump', String(pid)], { stdio: 'ignore' });
  // The dump after zeroing is the second part file (callgrind.out.1).
  const part = readdirSync(dir).find((f) => f.endsWith('.1'));
  const summary = /^summary: (\d+)/m.exec(readFileSync(join(dir, part), 'utf8'));
  if (!summary) throw new Error('no callgrind summary found');
  const setting = keepCompleted === null ? '' : `, the queue keeps ${keepCompleted} completed`;
  console.log(`${Math.round(Number(summary[1]) / done).toLocaleString('en-US')} Redis instructions per processed task (${done} tasks, ack + claim of ${BATCH} per call, two lanes${setting})`);
}

/** Instructions counted by callgrind between `--zero` and `--dump` around `work` (dump number `n`). */
async function counted(pid, dir, n, work) {
  execFileSync('callgrind_control', ['--zero', String(pid)], { stdio: 'ignore' });
  await work();
  execFileSync('callgrind_control', ['--dump', String(pid)], { stdio: 'ignore' });
  const part = readdirSync(dir).find((f) => f.endsWith(`.${n}`));
  const summary = /^summary: (\d+)/m.exec(readFileSync(join(dir, part), 'utf8'));
  if (!summary) throw new Error('no callgrind summary found');
  return Number(summary[1]);
}

/** --chains: count/10 chains of 10 created 100 at a time (one call), then run by two lanes. */
async function countChains(pid, dir, backend, client) {
  const { chain, task } = await import('../dist/index.js');
  await backend.setQueueKeep('bench', { completed: 0 });
  const nodes = Math.floor(count / 10) * 10;
  const create = await counted(pid, dir, 1, async () => {
    for (let i = 0; i < nodes / 10; i += 100) {
      const calls = Math.min(100, nodes / 10 - i);
      await Promise.all(Array.from({ length: calls }, () => client.enqueueWorkflow(chain(...Array.from({ length: 10 }, () => task('step', null, { queue: 'bench' }))))));
    }
  });
  const results = (tasks) => completeAcks(tasks, 'w').map((ack, i) => ({ ...ack, result: String((tasks[i].links?.workflowNode ?? 0) * 1 + 1) }));
  const claimLane = async () => (await backend.claim('w', [{ queue: 'bench', count: BATCH }], 30_000))[0].tasks;
  let done = 0;
  const run = await counted(pid, dir, 2, async () => {
    const lanes = [await claimLane(), await claimLane()];
    for (let lane = 0; lanes[0].length + lanes[1].length > 0; lane = 1 - lane) {
      const acks = results(lanes[lane]);
      const reply = await backend.ackAndClaim(acks, 'w', [{ queue: 'bench', count: BATCH }], 30_000);
      done += acks.length;
      lanes[lane] = reply.claims[0].tasks;
    }
  });
  if (done !== nodes) throw new Error(`ran ${done} of ${nodes} nodes`);
  const per = (n) => Math.round(n / nodes).toLocaleString('en-US');
  console.log(`${per(create)} Redis instructions per chain node created, ${per(run)} per chain node run (${nodes / 10} chains of 10; ack + claim of ${BATCH} per call, two lanes)`);
}
