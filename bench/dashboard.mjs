// The dashboard with a million tasks in the store, on both stores: how long each page's API calls
// take on the server, and how long a headless Chromium takes from navigation to the page's first
// data on screen. Taskline only (the peers' dashboards have no equivalent run).
//
//   npm run bench:dashboard [-- --tasks 1000000] [--only redis|sqlite] [--rounds 5]
//
// Fills a private redis-server and a temporary SQLite file with N tasks over 5 queues (1 in 20
// dead, ~1 in 20 scheduled a day ahead, the rest queued), 1,000 per enqueue call, starts a
// task center on each, then for every page: the server time of each API call the page makes
// (Fastify's time from request to response, read in an onResponse hook; median and max over
// the rounds), and the browser's navigation → first row or tile shown (median, max).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { RedisBackend } from '../dist/backend/redis/redis-backend.js';
import { SqliteBackend } from '../dist/backend/sqlite/sqlite-backend.js';
import { DEFAULT_MAX_PAYLOAD_BYTES, normalizeEnqueue } from '../dist/core/options.js';
import { buildServer } from '../dist/server/app.js';
import { machineInfo } from './environment.mjs';
import { RedisServer } from './redis-server.mjs';

const { values } = parseArgs({ options: { tasks: { type: 'string', default: '1000000' }, only: { type: 'string' }, rounds: { type: 'string', default: '5' } } });
const TASKS = Number(values.tasks);
const ROUNDS = Number(values.rounds);
const QUEUES = ['email', 'reports', 'payments', 'sync', 'media'];
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'];

/** The pages, each with the API calls it makes and what shows its first data. */
const PAGES = [
  { name: 'overview', path: '/', calls: ['/api/v1/stats', '/api/v1/queues', '/api/v1/workers', '/api/v1/schedulers'], ready: '.tile' },
  { name: 'queues', path: '/queues', calls: ['/api/v1/queues'], ready: 'tbody tr' },
  { name: 'queue (queued)', path: '/queues/email?state=queued', calls: ['/api/v1/queues/email', '/api/v1/queues/email/tasks?state=queued&limit=50'], ready: 'table.tasks tbody tr' },
  { name: 'queue (dead)', path: '/queues/email?state=dead', calls: ['/api/v1/queues/email', '/api/v1/queues/email/tasks?state=dead&limit=50'], ready: 'table.tasks tbody tr' },
  { name: 'task', path: '/tasks/{id}', calls: ['/api/v1/tasks/{id}'], ready: '.fields' },
  { name: 'dead letter', path: '/dead', calls: ['/api/v1/queues', ...QUEUES.map((q) => `/api/v1/queues/${q}/tasks?state=dead&limit=250`)], ready: 'tbody tr' },
  { name: 'schedules', path: '/schedules', calls: ['/api/v1/schedules'], ready: 'tbody tr' },
  { name: 'workers', path: '/workers', calls: ['/api/v1/workers', '/api/v1/schedulers'], ready: 'section .empty, tbody tr' },
  { name: 'search (payload)', path: '/search?q=payload.user:42', calls: ['/api/v1/tasks?q=payload.user%3A42&limit=50'], ready: '[role=status]' },
  { name: 'search (payload text)', path: '/search?q=payload:%22user%22:4242', calls: ['/api/v1/tasks?q=payload%3A%22user%22%3A4242&limit=50'], ready: '[role=status]' },
  { name: 'search (state, error)', path: '/search?q=state:dead%20err:declined', calls: ['/api/v1/tasks?q=state%3Adead%20err%3Adeclined&limit=50'], ready: '[role=status]' },
];

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function fill(backend) {
  const started = performance.now();
  const context = { maxPayloadBytes: DEFAULT_MAX_PAYLOAD_BYTES, defaults: {} };
  let sample = null;
  // 1 in 20 dead: enqueued first as scheduled, then archived a queue at a time (archiving a queued
  // task one by one is a list removal on Redis, slow in a list this long); then the rest, 18 in
  // 19 queued and 1 in 19 scheduled a day ahead.
  const enqueue = async (from, to, options) => {
    for (let base = from; base < to; base += 1000) {
      const batch = [];
      for (let i = base; i < Math.min(base + 1000, to); i++) {
        batch.push(normalizeEnqueue('bench:task', { user: i % 10_000, note: 'a dashboard benchmark task' }, { queue: QUEUES[Math.floor(i / 20) % QUEUES.length], ...options(i) }, context));
      }
      await backend.enqueue(batch);
      sample ??= batch[0].id;
    }
  };
  const dead = Math.floor(TASKS / 20);
  await enqueue(0, dead, () => ({ runAt: Date.now() + 86_400_000 }));
  for (const queue of QUEUES) await backend.archiveAll(queue, 'scheduled');
  sample = null;
  await enqueue(dead, TASKS, (i) => (i % 19 === 0 ? { runAt: Date.now() + 86_400_000 } : {}));
  return { filledMs: performance.now() - started, dead, sample };
}

async function measure(label, backend, browser) {
  const { filledMs, dead, sample } = await fill(backend);
  const server = await buildServer({ backend });
  const times = new Map();
  server.app.addHook('onResponse', async (request, reply) => {
    const key = request.url;
    if (!times.has(key)) times.set(key, []);
    times.get(key).push(reply.elapsedTime);
  });
  await server.app.inject({ method: 'POST', url: '/api/v1/schedules', payload: { id: 'nightly', cron: '0 2 * * *', timezone: 'UTC', task: { type: 'bench:task' } } });
  const url = await server.app.listen({ port: 0, host: '127.0.0.1' });
  const rows = [];
  try {
    for (const page of PAGES) {
      const path = page.path.replace('{id}', sample);
      const calls = page.calls.map((c) => c.replace('{id}', sample));
      const shown = [];
      for (let round = 0; round < ROUNDS; round++) {
        const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
        const tab = await context.newPage();
        const start = performance.now();
        await tab.goto(`${url}${path}`, { waitUntil: 'commit' });
        await tab.locator(page.ready).first().waitFor({ timeout: 30_000 });
        shown.push(performance.now() - start);
        await context.close();
      }
      // The page's API calls once more each, directly, ROUNDS times (the browser's calls are in `times` too).
      for (let round = 0; round < ROUNDS; round++) for (const call of calls) await fetch(`${url}${call}`).then((r) => r.arrayBuffer());
      const server = calls.map((call) => ({ call, ms: times.get(call) ?? [] }));
      const worst = server.reduce((max, s) => Math.max(max, ...s.ms), 0);
      const slowest = server.reduce((a, b) => (median(b.ms) > median(a.ms) ? b : a));
      rows.push({ page: page.name, shownMedian: median(shown), shownMax: Math.max(...shown), apiMedian: median(slowest.ms), apiMax: worst, slowest: slowest.call });
    }
  } finally {
    await server.app.close();
  }
  console.log(`\n${label}: ${TASKS.toLocaleString('en')} tasks (filled in ${(filledMs / 1000).toFixed(1)} s, ${dead.toLocaleString('en')} of them dead)`);
  console.log('page                   | first data shown, median / max (ms) | slowest API call, median / max server time (ms)');
  console.log('-----------------------|-------------------------------------|-----------------------------------------------');
  for (const r of rows) {
    console.log(`${r.page.padEnd(22)} | ${`${r.shownMedian.toFixed(0)} / ${r.shownMax.toFixed(0)}`.padStart(35)} | ${`${r.apiMedian.toFixed(1)} / ${r.apiMax.toFixed(1)}`.padStart(14)}  ${r.slowest}`);
  }
  return rows;
}

console.log('Dashboard benchmark');
const machine = machineInfo();
console.log(`machine : ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, ${machine.os}, load ${machine.loadAverage.join(' ')}`);
console.log(`settings: ${TASKS.toLocaleString('en')} tasks over ${QUEUES.length} queues, ${ROUNDS} round(s) per page, headless ${CHROMIUM}`);
const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true });
try {
  if (values.only !== 'sqlite') {
    const redis = await RedisServer.start(process.env.REDIS_SERVER ?? 'redis-server');
    const backend = await RedisBackend.connect(redis.url, { prefix: 'dash' });
    try {
      await measure('Redis', backend, browser);
    } finally {
      await backend.close();
      await redis.stop();
    }
  }
  if (values.only !== 'redis') {
    const dir = mkdtempSync(join(tmpdir(), 'taskline-dashboard-bench-'));
    const backend = await SqliteBackend.open(join(dir, 'bench.db'));
    try {
      await measure('SQLite', backend, browser);
    } finally {
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
} finally {
  await browser.close();
}
