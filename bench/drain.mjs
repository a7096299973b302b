#!/usr/bin/env node
// The hot path alone, for profiling: fills a private Redis with N no-op tasks, drains them with
// one in-process worker (concurrency 50), and prints tasks/s, the worker's CPU per task (and its
// system part), Redis CPU per task and the Redis commands that cost the most per task.
// Taskline only, one process, no BullMQ: `npm run bench` is the comparison; this is the tool
// for finding where the time goes (docs/performance.md, "Before and after").
//
//   npm run build && node bench/drain.mjs [--count 50000] [--rounds 3] [--cpu-prof file.cpuprofile]
//   npm run build && node bench/drain.mjs --store [--batch 25]
//   … [--keep-completed N]: the queue's bound on completed tasks (setQueueKeep; the benchmark's is 0)
//
// With --store there is no worker: the tasks are claimed and completed through the backend in
// fixed batches, one call after the other, so Redis's CPU per task can be compared between two
// versions of the scripts without the worker's timing changing the batch sizes.
//
// With --cpu-prof, the main thread is sampled during the drain only (not the fill) and the
// profile is written for bench/schedules-profile.mjs or Chrome's DevTools.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { Redis } from 'ioredis';
import { connect, Client, Worker } from '../dist/index.js';
import { RedisServer } from './redis-server.mjs';
import { fillBenchQueue, completeAcks } from './bench-tasks.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? args[index + 1] : fallback;
};
const count = Number(option('count', '50000'));
const rounds = Number(option('rounds', '3'));
const profileFile = option('cpu-prof', null);
const storeOnly = args.includes('--store');
const batch = Number(option('batch', '25'));
const keepCompleted = option('keep-completed', null);

const server = await RedisServer.start(process.env.REDIS_SERVER ?? 'redis-server');
const admin = new Redis(server.url);
const session = new Session();
session.connect();
const post = (method, params = {}) => new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
const redisCpu = async () => {
  const info = await admin.info('cpu');
  return Number(/used_cpu_user:([\d.]+)/.exec(info)[1]) + Number(/used_cpu_sys:([\d.]+)/.exec(info)[1]);
};

try {
  for (let round = 1; round <= rounds; round++) {
    await admin.flushall();
    const producerBackend = await connect(server.url, { prefix: 'tl' });
    const client = new Client(producerBackend);
    if (keepCompleted !== null) await producerBackend.setQueueKeep('bench', { completed: Number(keepCompleted) });
    await fillBenchQueue(client, count);
    await client.close();
    await producerBackend.close();

    const backend = await connect(server.url, { prefix: 'tl' });
    let worker = null;
    let finished;
    if (storeOnly) {
      finished = (async () => {
        for (let done = 0; done < count; ) {
          const [result] = await backend.claim('drain', [{ queue: 'bench', count: batch }], 30_000);
          if (result.tasks.length === 0) throw new Error(`the queue ran dry after ${done} tasks`);
          await backend.ack(completeAcks(result.tasks, 'drain'));
          done += result.tasks.length;
        }
      })();
    } else {
      worker = new Worker(backend, { concurrency: 50, queues: ['bench'] });
      worker.handle('noop', async () => undefined);
      let done = 0;
      let finish;
      finished = new Promise((resolve) => (finish = resolve));
      worker.on('completed', () => {
        if (++done === count) finish();
      });
    }
    await admin.config('RESETSTAT');
    const redisBefore = await redisCpu();
    const profiling = profileFile !== null && round === rounds;
    if (profiling) {
      await post('Profiler.enable');
      await post('Profiler.setSamplingInterval', { interval: 200 });
      await post('Profiler.start');
    }
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    await worker?.start();
    await finished;
    const ms = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    if (profiling) {
      const { profile } = await post('Profiler.stop');
      writeFileSync(profileFile, JSON.stringify(profile));
    }
    const redisUs = ((await redisCpu()) - redisBefore) * 1e6;
    const stats = await admin.info('commandstats');
    const costly = [...stats.matchAll(/cmdstat_([\w|]+):calls=(\d+),usec=(\d+)/g)]
      .map(([, name, calls, usec]) => ({ name, calls: Number(calls), usec: Number(usec) }))
      .filter((c) => c.usec / count >= 0.5)
      .sort((a, b) => b.usec - a.usec)
      .map((c) => `${c.name} ${(c.calls / count).toFixed(2)} calls ${(c.usec / count).toFixed(1)} µs`);
    console.log(
      `round ${round}/${rounds}: ${Math.round((count / ms) * 1000).toLocaleString('en-US')} tasks/s; ` +
        `worker CPU ${((cpu.user + cpu.system) / count).toFixed(1)} µs/task (system ${(cpu.system / count).toFixed(1)}); ` +
        `Redis CPU ${(redisUs / count).toFixed(1)} µs/task`,
    );
    console.log(`  per task, inside Redis: ${costly.join('; ')}`);
    await worker?.stop({ timeout: 2000 });
    await backend.close();
  }
  if (profileFile !== null) console.log(`profile of the last round written to ${profileFile}`);
} finally {
  session.disconnect();
  admin.disconnect();
  await server.stop();
}
