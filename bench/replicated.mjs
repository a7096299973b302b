#!/usr/bin/env node
// What `durability=replicated` costs: a private master and one replica of it (127.0.0.1, free
// ports), and Taskline on the master with and without `?durability=replicated` (each write that
// acknowledges work then waits for the replica: Redis WAIT). Rounds alternate which goes first.
// 1. one enqueue per call (a producer that awaits each): enqueues per second, and the median and
//    99th percentile of one call;
// 2. claim 20 and complete them in one ack call: completions per second.
//
//   npm run build && node bench/replicated.mjs [--count 3000] [--rounds 3]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { connect } from '../dist/index.js';
import { freePort, RedisServer } from './redis-server.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : fallback);
const count = Number(option('count', '3000'));
const rounds = Number(option('rounds', '3'));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function startReplica(masterPort) {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'taskline-bench-replica-'));
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--replicaof', '127.0.0.1', String(masterPort), '--loglevel', 'warning'], { stdio: 'ignore' });
  const redis = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: null });
  for (let i = 0; i < 200; i++) {
    const info = await redis.info('replication').catch(() => '');
    if (/master_link_status:up/.test(info)) break;
    await sleep(50);
  }
  redis.disconnect();
  return { stop: () => (child.kill('SIGKILL'), rmSync(dir, { recursive: true, force: true })) };
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function measure(url, prefix) {
  const backend = await connect(url, { prefix });
  await backend.setQueueKeep('default', { completed: 0 });
  const times = [];
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const at = performance.now();
    const [outcome] = await backend.enqueue([{ id: `${prefix}-${i}`, type: 'noop', payload: '{}', queue: 'default', maxRetries: 3, timeout: 60_000, deadline: null, delay: null, runAt: null, uniqueKey: null, uniqueFor: null, retention: null, backoff: null, headers: null, links: null }]);
    if (!outcome.ok) throw new Error('enqueue refused');
    times.push(performance.now() - at);
  }
  const enqueueMs = performance.now() - started;
  const completeStarted = performance.now();
  let done = 0;
  while (done < count) {
    const [claim] = await backend.claim('bench', [{ queue: 'default', count: 20 }], 60_000);
    const now = Date.now();
    const results = await backend.ack(claim.tasks.map((t) => ({
      kind: 'complete', id: t.id, queue: t.queue, token: t.token, result: '',
      attempt: { attempt: t.attempt, startedAt: t.startedAt, finishedAt: now, outcome: 'completed', error: null, stack: null, workerId: 'bench' },
    })));
    done += results.filter((r) => r === 'ok').length;
  }
  const completeMs = performance.now() - completeStarted;
  await backend.close();
  times.sort((a, b) => a - b);
  return { enqueuesPerSecond: (count / enqueueMs) * 1000, p50: percentile(times, 0.5), p99: percentile(times, 0.99), completionsPerSecond: (count / completeMs) * 1000 };
}

const master = await RedisServer.start();
const replica = await startReplica(master.port);
try {
  console.log(`durability=replicated: ${count} tasks, master and one replica on 127.0.0.1, Node ${process.version}`);
  const results = { acknowledged: [], replicated: [] };
  for (let round = 1; round <= rounds; round++) {
    for (const kind of round % 2 === 1 ? ['acknowledged', 'replicated'] : ['replicated', 'acknowledged']) {
      const url = kind === 'replicated' ? `${master.url}?durability=replicated` : master.url;
      const r = await measure(url, `rep-${round}-${kind}`);
      results[kind].push(r);
      console.log(
        `round ${round}/${rounds} ${kind}: enqueue one per call ${Math.round(r.enqueuesPerSecond).toLocaleString('en-US')}/s (median ${r.p50.toFixed(3)} ms, p99 ${r.p99.toFixed(3)} ms); ` +
          `claim 20 + complete ${Math.round(r.completionsPerSecond).toLocaleString('en-US')}/s`,
      );
    }
  }
  const m = (kind, key) => median(results[kind].map((r) => r[key]));
  console.log(
    `medians: enqueue ${Math.round(m('acknowledged', 'enqueuesPerSecond'))} → ${Math.round(m('replicated', 'enqueuesPerSecond'))}/s ` +
      `(+${(m('replicated', 'p50') - m('acknowledged', 'p50')).toFixed(3)} ms per call at the median); ` +
      `completions ${Math.round(m('acknowledged', 'completionsPerSecond'))} → ${Math.round(m('replicated', 'completionsPerSecond'))}/s`,
  );
} finally {
  replica.stop();
  await master.stop();
}
