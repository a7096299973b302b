/**
 * OpenAPI-driven fuzzing of the task center on each store: requests generated from
 * /openapi.json — valid ones that create tasks and schedules and reuse their ids and cursors,
 * and mutated ones (wrong types, huge numbers, far times, lone surrogates, 1 MB strings, odd
 * path segments, junk queries and cursors, bad cron text, wrong content types, broken JSON,
 * bad tokens). Every answer must be < 500, in time, and well-formed; afterwards the store must
 * read cleanly. Deterministic for a seed:
 *
 *   TASKLINE_FUZZ_SEED=7 TASKLINE_FUZZ_REQUESTS=10000 TASKLINE_FUZZ_STORE=sqlite npx vitest run test/fuzz
 *
 * TASKLINE_FUZZ_REPORT=<file> also writes the findings there.
 */
import { appendFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer, type TaskCenterServer } from '../../src/server/app.js';
import { STORES } from '../helpers/stores.js';
import { startApi, type TestApi } from '../server/helpers.js';
import { listOperations, type OpenApiDocument, type Operation } from './openapi.js';
import { formatFindings } from './report.js';
import { fuzz, type FuzzRun } from './run.js';
import { sweep } from './sweep.js';

const SEED = Number(process.env.TASKLINE_FUZZ_SEED ?? 20261201);
const REQUESTS = Number(process.env.TASKLINE_FUZZ_REQUESTS ?? 4000);
const ONLY = process.env.TASKLINE_FUZZ_STORE;
const REPORT_FILE = process.env.TASKLINE_FUZZ_REPORT;
/** Generous for a busy 2-core box: the default run takes a fraction of it. */
const TIMEOUT_MS = 60_000 + REQUESTS * 40;

function report(text: string): void {
  console.log(text);
  if (REPORT_FILE) appendFileSync(REPORT_FILE, `${text}\n\n`);
}

/** Requests and 2xx answers per operation reached (for the report file). */
function coverage(run: FuzzRun): string {
  return [...run.routes]
    .sort((a, b) => a[0].localeCompare(b[0]))
    .map(([route, s]) => `  ${route}: ${s.sent} sent, ${s.ok} 2xx; ${[...s.statuses].sort((a, b) => a[0] - b[0]).map(([st, n]) => `${st}×${n}`).join(' ')}`)
    .join('\n');
}

function summary(store: string, run: FuzzRun): string {
  const statuses = new Map<number, number>();
  for (const stats of run.routes.values()) for (const [s, n] of stats.statuses) statuses.set(s, (statuses.get(s) ?? 0) + n);
  const never = [...run.routes].filter(([, s]) => s.ok === 0).map(([route]) => route);
  const undocumented = [...run.undocumented].map(([route, s]) => `${route} ${[...s].sort().join('/')}`);
  return [
    `fuzz ${store}: seed ${SEED}, ${REQUESTS} requests in ${(run.ms / 1000).toFixed(1)} s; statuses ${[...statuses].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}×${n}`).join(' ')}`,
    `  learned ${run.world.everyTaskId.size} task ids, ${run.world.scheduleIds.length} schedules, ${run.world.cursors.length} cursors`,
    `  refused by inject (not sent): ${[...run.refused].map(([m, r]) => `${m} ×${r.count} (first: ${r.url.slice(0, 100)})`).join('; ') || 'none'}`,
    `  reached but never 2xx: ${never.join(', ') || 'none'}`,
    `  statuses not in the OpenAPI document: ${undocumented.join('; ') || 'none'}`,
  ].join('\n');
}

/** Waits until no bulk job of the server is running. */
async function settleBulkJobs(app: TaskCenterServer['app'], headers: Record<string, string> = {}): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const { jobs } = (await app.inject({ method: 'GET', url: '/api/v1/bulk', headers })).json<{ jobs: { state: string }[] }>();
    if (jobs.every((job) => job.state !== 'running')) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('bulk jobs still running after 30 s');
}

describe.each(STORES.filter(([name]) => ONLY === undefined || ONLY === name))('OpenAPI fuzz on %s', (store, open) => {
  let api: TestApi;
  let guarded: TaskCenterServer;
  let operations: Operation[] = [];
  let run: FuzzRun | null = null;

  beforeAll(async () => {
    api = await startApi(open);
    // The same store behind tokens: a bad Authorization header must get a 4xx there.
    guarded = await buildServer({ backend: await api.store.reopen(), apiToken: 'fuzz-admin-token', readToken: 'fuzz-read-token' });
    await guarded.app.ready();
    const res = await api.app.inject({ method: 'GET', url: '/openapi.json' });
    operations = listOperations(res.json<OpenApiDocument>());
  });
  afterAll(async () => {
    await guarded?.app.close();
    await api?.close();
  });

  it('covers every operation of the OpenAPI document', () => {
    expect(operations.length).toBeGreaterThan(20);
    for (const op of operations) expect(op.responses.size, op.route).toBeGreaterThan(0);
  });

  it(`answers ${REQUESTS} generated requests below 500, in time, well-formed`, { timeout: TIMEOUT_MS }, async () => {
    run = await fuzz({ seed: SEED, requests: REQUESTS, app: api.app, guarded: guarded.app, operations });
    report(summary(store, run));
    if (REPORT_FILE) appendFileSync(REPORT_FILE, `coverage ${store}:\n${coverage(run)}\n\n`);
    if (run.findings.length > 0) {
      const context = { store, seed: SEED, requests: REQUESTS };
      report(formatFindings(run.findings, context));
      expect.fail(formatFindings(run.findings, context, true));
    }
  });

  it('reads the store cleanly afterwards', { timeout: TIMEOUT_MS }, async () => {
    expect(run, 'the fuzz run must go first').not.toBeNull();
    // Bulk jobs the run started go on in the background: let them finish before reading back.
    await settleBulkJobs(api.app);
    await settleBulkJobs(guarded.app, { authorization: 'Bearer fuzz-read-token' });
    const started = performance.now();
    const result = await sweep(api.app, operations, run!.world);
    report(
      `sweep ${store}: ${result.queues} queues, ${result.schedules} schedules, ${result.tasks} tasks listed, ${result.requests} reads in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    if (result.findings.length > 0) {
      const context = { store, seed: SEED, requests: REQUESTS };
      report(formatFindings(result.findings, context));
      expect.fail(formatFindings(result.findings, context, true));
    }
  });
});
