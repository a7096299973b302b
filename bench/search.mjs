// Task search at scale, on both stores: how long one search call takes, and a whole sweep, with
// N tasks stored (default 1,000,000). Taskline only (no peer has a search).
//
//   node bench/search.mjs [--tasks 1000000] [--only redis|sqlite]
//
// Fills a private redis-server and a temporary SQLite file with N tasks over 10 queues (6 in 7
// queued, 1 in 7 scheduled; payload {user_id: i % 10000, batch}), 1,000 per enqueue call, then
// times the first page of several queries (median of 5) and a sweep of `payload.user_id:42`
// following the cursor to the end (each call examines at most 5,000 tasks).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { RedisBackend } from '../dist/backend/redis/redis-backend.js';
import { SqliteBackend } from '../dist/backend/sqlite/sqlite-backend.js';
import { DEFAULT_MAX_PAYLOAD_BYTES, normalizeEnqueue } from '../dist/core/options.js';
import { parseTaskQuery } from '../dist/core/task-query.js';
import { machineInfo } from './environment.mjs';
import { RedisServer } from './redis-server.mjs';

const { values } = parseArgs({ options: { tasks: { type: 'string', default: '1000000' }, only: { type: 'string' } } });
const TASKS = Number(values.tasks);
const QUEUES = 10;

async function fill(backend) {
  const started = performance.now();
  let probe = null;
  for (let base = 0; base < TASKS; base += 1000) {
    const batch = [];
    for (let i = base; i < Math.min(base + 1000, TASKS); i++) {
      const options = { queue: `q${i % QUEUES}`, ...(i % 7 === 6 ? { delay: 3_600_000 } : {}) };
      batch.push(normalizeEnqueue(`bench:t${i % 7}`, { user_id: i % 10_000, batch: Math.floor(i / 1000) }, options, { maxPayloadBytes: DEFAULT_MAX_PAYLOAD_BYTES, defaults: {} }));
    }
    probe ??= batch[500].id;
    await backend.enqueue(batch);
  }
  return { ms: performance.now() - started, probe };
}

async function timeQuery(backend, query) {
  const filter = parseTaskQuery(query);
  const times = [];
  let page;
  for (let round = 0; round < 5; round++) {
    const started = performance.now();
    page = await backend.searchTasks(filter, { limit: 50 });
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { query, ms: Number(times[2].toFixed(1)), found: page.tasks.length, scanned: page.scanned, total: page.total };
}

async function sweep(backend, query) {
  const filter = parseTaskQuery(query);
  const started = performance.now();
  let cursor;
  let calls = 0;
  let found = 0;
  let slowest = 0;
  do {
    const t = performance.now();
    const page = await backend.searchTasks(filter, { limit: 1000, cursor });
    slowest = Math.max(slowest, performance.now() - t);
    calls += 1;
    found += page.tasks.length;
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  const ms = performance.now() - started;
  return { query, calls, found, totalMs: Math.round(ms), meanCallMs: Number((ms / calls).toFixed(1)), slowestCallMs: Number(slowest.toFixed(1)) };
}

async function measure(name, backend) {
  const filled = await fill(backend);
  console.log(`${name}: stored ${TASKS} tasks in ${(filled.ms / 1000).toFixed(1)} s`);
  const queries = ['', `id:${filled.probe}`, 'queue:q3 state:scheduled', 'state:queued', 'type:bench:t3', 'payload.user_id:42', 'err:timeout', 'queue:q5 payload.user_id:42 t3'];
  const rows = [];
  for (const query of queries) rows.push(await timeQuery(backend, query));
  console.table(rows);
  console.table([await sweep(backend, 'payload.user_id:42')]);
}

console.log({ machine: machineInfo(), tasks: TASKS, node: process.version });
if (values.only !== 'sqlite') {
  const server = await RedisServer.start(process.env.REDIS_SERVER || 'redis-server');
  try {
    const backend = await RedisBackend.connect(server.url, { prefix: 'bench' });
    try {
      await measure(`redis (private redis-server on 127.0.0.1:${server.port}, no persistence)`, backend);
    } finally {
      await backend.close();
    }
  } finally {
    await server.stop();
  }
}
if (values.only !== 'redis') {
  const dir = mkdtempSync(join(tmpdir(), 'taskline-bench-search-'));
  try {
    const backend = await SqliteBackend.open(join(dir, 'bench.db'));
    try {
      await measure('sqlite (WAL, synchronous NORMAL, a temporary file)', backend);
    } finally {
      await backend.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
