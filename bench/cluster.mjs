#!/usr/bin/env node
// Taskline on a Redis Cluster next to one Redis server: a private 3-master cluster (no replicas)
// and a private single server, on 127.0.0.1 and free ports. The same work on each: 6 queues
// (two in the slots of each master) filled with no-op tasks, then drained by one
// in-process worker (concurrency 60) serving all six. Printed per round: tasks per second, and
// Redis CPU per task — on the Cluster for each master, with the share of the tasks it served.
// Rounds alternate which store goes first.
//
// On a 2-core machine every Redis process, the worker and the producer share the same 2 cores, so
// the throughput is bounded by the CPU, not by one Redis: the figure to read is how the Redis
// work spreads over the masters, and what a task costs in all.
//
//   npm run build && node bench/cluster.mjs [--count 30000] [--rounds 3]
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { connect, Client, Worker } from '../dist/index.js';
import { fillBenchQueue } from './bench-tasks.mjs';
import { freePort, RedisServer } from './redis-server.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : fallback);
const count = Number(option('count', '30000'));
const rounds = Number(option('rounds', '3'));
const PREFIX = 'bench';
/** Six queues, two on each master (picked by their slots once the cluster is up). */
let QUEUES = [];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const run = promisify(execFile);

/** A free port whose cluster bus port (plus 10,000) is free and valid too. */
async function clusterPort() {
  const free = (port) => new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
  for (;;) {
    const port = await freePort();
    if (port + 10_000 <= 65_535 && (await free(port + 10_000))) return port;
  }
}

/** Three cluster-enabled redis-servers joined into one cluster, each master serving a third of the slots. */
async function startCluster() {
  const nodes = [];
  for (let i = 0; i < 3; i++) {
    const port = await clusterPort();
    const dir = mkdtempSync(join(tmpdir(), 'taskline-bench-cluster-'));
    const child = spawn('redis-server', [
      '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--loglevel', 'warning',
      '--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf',
    ], { stdio: 'ignore' });
    const admin = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: null });
    admin.on('error', () => undefined);
    nodes.push({ port, dir, child, admin });
  }
  for (const node of nodes) while ((await node.admin.ping().catch(() => '')) !== 'PONG') await sleep(50);
  await run('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '0', '--cluster-yes']);
  for (const node of nodes) while (!/cluster_state:ok/.test(String(await node.admin.call('CLUSTER', 'INFO')))) await sleep(100);
  return {
    url: `redis+cluster://${nodes.map((n) => `127.0.0.1:${n.port}`).join(',')}`,
    nodes,
    stop() {
      for (const node of nodes) {
        node.admin.disconnect();
        node.child.kill('SIGKILL');
        rmSync(node.dir, { recursive: true, force: true });
      }
    },
  };
}

const cpuOf = async (admin) => {
  const info = await admin.info('cpu');
  return Number(/used_cpu_user:([\d.]+)/.exec(info)[1]) + Number(/used_cpu_sys:([\d.]+)/.exec(info)[1]);
};

/** Fills the queues, drains them with one worker; tasks/s and each server's Redis CPU (s) during the drain. */
async function measure(url, admins, prefix) {
  const producer = await connect(url, { prefix });
  const client = new Client(producer);
  for (const queue of QUEUES) {
    await producer.setQueueKeep(queue, { completed: 0 });
    await fillBenchQueue(client, count / QUEUES.length, queue);
  }
  await client.close();
  await producer.close();
  const backend = await connect(url, { prefix });
  const worker = new Worker(backend, { concurrency: 60, queues: QUEUES });
  worker.handle('noop', async () => undefined);
  let done = 0;
  let finish;
  const finished = new Promise((resolve) => (finish = resolve));
  worker.on('completed', () => {
    if (++done === count) finish();
  });
  const before = await Promise.all(admins.map(cpuOf));
  const started = performance.now();
  await worker.start();
  await finished;
  const ms = performance.now() - started;
  const after = await Promise.all(admins.map(cpuOf));
  await worker.stop({ timeout: 2000 });
  await backend.close();
  return { tasksPerSecond: (count / ms) * 1000, redisSeconds: after.map((a, i) => a - before[i]) };
}

/** The master (index into `nodes`) that serves a queue's slot. */
async function masterOf(cluster, queue) {
  const slots = (await cluster.nodes[0].admin.call('CLUSTER', 'SLOTS')).map(([from, to, [, port]]) => ({ from, to, port }));
  const slot = Number(await cluster.nodes[0].admin.call('CLUSTER', 'KEYSLOT', `{${PREFIX}:${queue}}:meta`));
  const port = slots.find((s) => slot >= s.from && slot <= s.to).port;
  return cluster.nodes.findIndex((n) => n.port === port);
}

/** Six queue names, two whose slots each master serves. */
async function spreadQueues(cluster) {
  const picked = [];
  const perMaster = [0, 0, 0];
  for (let i = 0; picked.length < 6; i++) {
    const master = await masterOf(cluster, `bench${i}`);
    if (perMaster[master] < 2) {
      perMaster[master] += 1;
      picked.push(`bench${i}`);
    }
  }
  return picked;
}

const single = await RedisServer.start();
const singleAdmin = new Redis(single.url);
const cluster = await startCluster();
QUEUES = await spreadQueues(cluster);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const us = (seconds, tasks) => (tasks === 0 ? '-' : ((seconds * 1e6) / tasks).toFixed(1));
try {
  console.log(`Redis Cluster (3 masters) next to one server: ${count.toLocaleString('en-US')} no-op tasks over ${QUEUES.length} queues per round, one worker of concurrency 60, Node ${process.version}`);
  const rates = { single: [], cluster: [] };
  const perTask = { single: [], cluster: [] };
  for (let round = 1; round <= rounds; round++) {
    for (const kind of round % 2 === 1 ? ['single', 'cluster'] : ['cluster', 'single']) {
      if (kind === 'single') {
        await singleAdmin.flushall();
        const r = await measure(single.url, [singleAdmin], PREFIX);
        rates.single.push(r.tasksPerSecond);
        perTask.single.push((r.redisSeconds[0] * 1e6) / count);
        console.log(`round ${round}/${rounds} one server: ${Math.round(r.tasksPerSecond).toLocaleString('en-US')} tasks/s; Redis CPU ${us(r.redisSeconds[0], count)} µs/task`);
      } else {
        await Promise.all(cluster.nodes.map((n) => n.admin.flushall()));
        const masters = await Promise.all(QUEUES.map((queue) => masterOf(cluster, queue)));
        const r = await measure(cluster.url, cluster.nodes.map((n) => n.admin), PREFIX);
        rates.cluster.push(r.tasksPerSecond);
        const total = r.redisSeconds.reduce((a, b) => a + b, 0);
        perTask.cluster.push((total * 1e6) / count);
        const spread = cluster.nodes.map((node, i) => {
          const served = masters.filter((m) => m === i).length * (count / QUEUES.length);
          return `master ${i + 1} (${masters.filter((m) => m === i).length} queues, ${served.toLocaleString('en-US')} tasks): ${r.redisSeconds[i].toFixed(2)} s CPU, ${us(r.redisSeconds[i], served)} µs/task`;
        });
        console.log(`round ${round}/${rounds} cluster: ${Math.round(r.tasksPerSecond).toLocaleString('en-US')} tasks/s; Redis CPU ${us(total, count)} µs/task in all; ${spread.join('; ')}`);
      }
    }
  }
  console.log(
    `medians: one server ${Math.round(median(rates.single)).toLocaleString('en-US')} tasks/s (${median(perTask.single).toFixed(1)} µs Redis CPU/task); ` +
      `cluster ${Math.round(median(rates.cluster)).toLocaleString('en-US')} tasks/s (${median(perTask.cluster).toFixed(1)} µs Redis CPU/task over its masters)`,
  );
} finally {
  singleAdmin.disconnect();
  await single.stop();
  cluster.stop();
}
