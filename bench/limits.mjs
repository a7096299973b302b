#!/usr/bin/env node
// Queue limits (setQueueLimits), Taskline only, on a private redis-server or a SQLite file:
//
// 1. What limits cost when they do not bind: a fresh worker process (concurrency 50) drains N
//    pre-enqueued no-op tasks from a queue without limits, and from one with a rate, a
//    concurrency and a maxLength all far above what the run reaches; rounds alternate which goes
//    first. Prints tasks/s of each and their ratio (target: limited ≥ 90 % of unlimited).
// 2. What groups cost: the same drain of tasks spread over 100 groups (--groups), with no limits
//    and with a groupConcurrency far above what the run reaches; against each other (target
//    ≥ 90 %), and against the same tasks without groups.
// 3. How exactly a binding rate holds: a rate of R per second, 3 worker processes (concurrency
//    20 each) on a queue kept full, for S seconds; each start is counted at the store's time of
//    its claim (ctx.task.startedAt). Prints the starts per second achieved against R, and the most
//    starts in any 1-second window (never above R).
//
//   npm run build && node bench/limits.mjs [--store redis|sqlite] [--count 50000] [--rounds 3]
//        [--rate 200] [--seconds 60] [--groups 100] [--only free,groups,binding]
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, connect } from '../dist/index.js';
import { fillBenchQueue } from './bench-tasks.mjs';
import { RedisServer } from './redis-server.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : fallback);
const store = option('store', 'redis');
const count = Number(option('count', '50000'));
const rounds = Number(option('rounds', '3'));
const rate = Number(option('rate', '200'));
const seconds = Number(option('seconds', '60'));
const groups = Number(option('groups', '100'));
const only = option('only', 'free,groups,binding').split(',');
const HIGH = { rate: { limit: 100_000, intervalMs: 1000 }, concurrency: 100_000, maxLength: 1_000_000_000 };

if (process.argv[2] === '--child') await child();
else await main();

/** A worker process: `{ url, queue, concurrency, count | untilMs }` over IPC; reports its start times or when it drained `count`. */
async function child() {
  const { Worker } = await import('../dist/index.js');
  process.once('message', async ({ url, queue, concurrency, count: expected, untilMs }) => {
    const backend = await connect(url, { prefix: 'tl' });
    const worker = new Worker(backend, { concurrency, queues: [queue] });
    const starts = [];
    let done = 0;
    // The store's time of each start (what the rate counts), not the handler's clock: one
    // process's handlers may start late on a busy machine.
    worker.handle('noop', async (_payload, ctx) => {
      if (untilMs !== undefined) starts.push(ctx.task.startedAt);
    });
    const cpu = process.cpuUsage();
    const finished = new Promise((resolve) => {
      worker.on('completed', () => {
        if (expected !== undefined && ++done === expected) resolve();
      });
      if (untilMs !== undefined) setTimeout(resolve, untilMs - Date.now());
    });
    const started = performance.now();
    await worker.start();
    await finished;
    const ms = performance.now() - started;
    const used = process.cpuUsage(cpu);
    await worker.stop({ timeout: 2000 });
    await backend.close();
    process.send({ ms, cpuMicros: used.user + used.system, starts }, () => process.exit(0));
  });
}

function startChild(message) {
  const worker = fork(fileURLToPath(import.meta.url), ['--child'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const limit = setTimeout(() => worker.kill('SIGKILL'), 180_000);
  const report = new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('exit', (code) => reject(new Error(`a worker process exited with ${code} before reporting`)));
  }).finally(() => clearTimeout(limit));
  worker.send(message);
  return report;
}

async function main() {
  let server = null;
  let dir = null;
  let url;
  if (store === 'redis') {
    server = await RedisServer.start(process.env.REDIS_SERVER ?? 'redis-server');
    url = server.url;
  } else {
    dir = mkdtempSync(join(os.tmpdir(), 'taskline-bench-limits-'));
    url = `sqlite:${join(dir, 'limits.db')}`;
  }
  const machine = `${os.cpus()[0]?.model ?? 'cpu'}, ${os.cpus().length} cores, Node ${process.version}, store ${store}`;
  console.log(`Queue limits: ${machine}`);
  let n = 0;
  try {
    if (only.includes('free')) {
      const rates = { none: [], limited: [] };
      for (let round = 1; round <= rounds; round++) {
        const order = round % 2 === 1 ? ['none', 'limited'] : ['limited', 'none'];
        for (const kind of order) {
          const queue = `free-${++n}`;
          const backend = await connect(url, { prefix: 'tl' });
          await backend.setQueueKeep(queue, { completed: 0 });
          if (kind === 'limited') await backend.setQueueLimits(queue, HIGH);
          await fillBenchQueue(new Client(backend), count, queue);
          await backend.close();
          const report = await startChild({ url, queue, concurrency: 50, count });
          const perSecond = (count / report.ms) * 1000;
          rates[kind].push(perSecond);
          console.log(`round ${round}/${rounds} ${kind === 'none' ? 'no limits' : 'limits not binding'}: ${Math.round(perSecond).toLocaleString('en-US')} tasks/s, worker CPU ${(report.cpuMicros / count).toFixed(1)} µs/task`);
        }
      }
      const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
      const ratio = median(rates.limited) / median(rates.none);
      console.log(`limits not binding: ${Math.round(median(rates.limited)).toLocaleString('en-US')} vs ${Math.round(median(rates.none)).toLocaleString('en-US')} tasks/s (medians): ${(ratio * 100).toFixed(1)} % of unlimited (target ≥ 90 %: ${ratio >= 0.9 ? 'met' : 'NOT met'})`);
    }
    if (only.includes('groups')) {
      const kinds = { plain: 'no groups, no limits', grouped: `${groups} groups, no limits`, limited: `${groups} groups, groupConcurrency not binding` };
      const rates = { plain: [], grouped: [], limited: [] };
      for (let round = 1; round <= rounds; round++) {
        const order = [['plain', 'grouped', 'limited'], ['limited', 'plain', 'grouped'], ['grouped', 'limited', 'plain']][(round - 1) % 3];
        for (const kind of order) {
          const queue = `groups-${++n}`;
          const backend = await connect(url, { prefix: 'tl' });
          await backend.setQueueKeep(queue, { completed: 0 });
          if (kind === 'limited') await backend.setQueueLimits(queue, { groupConcurrency: 100_000 });
          await fillBenchQueue(new Client(backend), count, queue, kind === 'plain' ? 0 : groups);
          await backend.close();
          const report = await startChild({ url, queue, concurrency: 50, count });
          const perSecond = (count / report.ms) * 1000;
          rates[kind].push(perSecond);
          console.log(`round ${round}/${rounds} ${kinds[kind]}: ${Math.round(perSecond).toLocaleString('en-US')} tasks/s, worker CPU ${(report.cpuMicros / count).toFixed(1)} µs/task`);
        }
      }
      const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
      const ratio = median(rates.limited) / median(rates.grouped);
      const cost = median(rates.grouped) / median(rates.plain);
      console.log(
        `groups: groupConcurrency not binding ${Math.round(median(rates.limited)).toLocaleString('en-US')} vs ${Math.round(median(rates.grouped)).toLocaleString('en-US')} tasks/s (medians): ` +
          `${(ratio * 100).toFixed(1)} % (target ≥ 90 %: ${ratio >= 0.9 ? 'met' : 'NOT met'}); grouped tasks at ${(cost * 100).toFixed(1)} % of the same without groups (${Math.round(median(rates.plain)).toLocaleString('en-US')} tasks/s)`,
      );
    }
    if (only.includes('binding')) {
      const queue = `binding-${++n}`;
      const backend = await connect(url, { prefix: 'tl' });
      const client = new Client(backend);
      await backend.setQueueKeep(queue, { completed: 0 });
      await backend.setQueueLimits(queue, { rate: { limit: rate, intervalMs: 1000 } });
      // More than the run can start, so the queue never runs dry.
      await fillBenchQueue(client, Math.ceil(rate * seconds * 1.2) + 1000, queue);
      await backend.close();
      const from = Date.now() + 1000;
      const untilMs = from + seconds * 1000 + 1000;
      const reports = await Promise.all([1, 2, 3].map(() => startChild({ url, queue, concurrency: 20, untilMs })));
      const starts = reports.flatMap((r) => r.starts).sort((a, b) => a - b);
      // The whole seconds after the first start (the workers start together, the first window is full).
      const first = starts[0];
      const inRun = starts.filter((t) => t >= first && t < first + seconds * 1000);
      let most = 0;
      for (let i = 0, j = 0; i < starts.length; i++) {
        while (starts[j] <= starts[i] - 1000) j++;
        most = Math.max(most, i - j + 1);
      }
      const achieved = inRun.length / seconds;
      console.log(
        `rate ${rate}/s for ${seconds} s, 3 worker processes: ${inRun.length} starts, ${achieved.toFixed(2)}/s (${((achieved / rate - 1) * 100).toFixed(2)} % from the limit; ` +
          `target within 1 %: ${Math.abs(achieved / rate - 1) <= 0.01 ? 'met' : 'NOT met'}); most starts in any 1-s window: ${most} (limit ${rate})`,
      );
    }
  } finally {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}
