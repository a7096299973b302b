/**
 * The deployment topology end to end, as local processes: a Redis with AOF, two task centers
 * (`taskline server`, with admin and read tokens), two workers (`taskline worker`) and the real
 * `prometheus` (Debian package) scraping all four with the shipped scrape config and alert rules
 * (deploy/prometheus/; only the targets, the token file, the rule file's path and the intervals
 * are made local). A task that dies makes TasklineDeadTasks fire in Prometheus's own
 * /api/v1/alerts; SIGKILLing the leading task center loses no every-second fire, duplicates none,
 * and the other task center's /readyz answers 200 throughout.
 */
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliProcess } from '../cli/helpers.js';
import { freePort } from '../helpers/ports.js';
import { eventually } from '../helpers/processes.js';
import { localPrometheusConfig, prometheusPresent, PrometheusServer, type Sample } from '../helpers/prometheus.js';
import { RedisServer } from '../helpers/redis-server.js';
import { tempDir, uniquePrefix } from '../helpers/stores.js';
import { expectEveryFire, type StoredFire } from '../scheduler/servers.js';

const HANDLERS = resolve(import.meta.dirname, '../fixtures/topology-handlers.mjs');
const RULES = resolve(import.meta.dirname, '../../deploy/prometheus/taskline-alerts.yml');
const API_TOKEN = 'topology-admin-token';
const READ_TOKEN = 'topology-read-token';
const CENTER_JOB = 'taskline-task-center';
const WORKER_JOB = 'taskline-worker';
/** Seconds of fires after the kill that must all be there. */
const AFTER_KILL_MS = 5_000;

const present = prometheusPresent();
if (!present) console.warn('skipping the deployment topology test: prometheus is not installed (apt-get install prometheus; .ci/run installs it)');

interface TaskCenter {
  process: CliProcess;
  url: string;
  /** host:port, as Prometheus names the target. */
  address: string;
  /** Its scheduler's id, from the banner. */
  schedulerId: string;
}

interface Worker {
  process: CliProcess;
  address: string;
}

interface FireView {
  nominal_at: string;
  enqueued_at: string | null;
  lag_ms: number | null;
  outcome: string;
  task_id: string | null;
  task_state: string | null;
}

/** A call to a task center's API: the read token for GET, the admin token otherwise. */
async function call(center: TaskCenter, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(`${center.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${method === 'GET' ? READ_TOKEN : API_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(40_000),
  });
  const text = await response.text();
  return { status: response.status, json: text === '' ? null : JSON.parse(text) };
}

/** Polls a task center's /readyz every ~100 ms until stopped, keeping every answer (a status, or why none came). */
function pollReadiness(center: TaskCenter): { stop: () => Promise<(number | string)[]> } {
  const answers: (number | string)[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      try {
        const response = await fetch(`${center.url}/readyz`, { signal: AbortSignal.timeout(5_000) });
        await response.arrayBuffer();
        answers.push(response.status);
      } catch (error) {
        answers.push(error instanceof Error ? error.message : String(error));
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      return answers;
    },
  };
}

/** The values of a query's samples by one of their labels. */
function byLabel(samples: Sample[], label: string): Record<string, string> {
  return Object.fromEntries(samples.map((s) => [s.metric[label], s.value[1]]));
}

describe.skipIf(!present)('the deployment topology as local processes', () => {
  let dir: { path: string; remove: () => void } | null = null;
  const centers: TaskCenter[] = [];
  const workers: Worker[] = [];
  let redis: RedisServer | null = null;
  let clock: Redis | null = null;
  let prometheus: PrometheusServer | null = null;
  let readiness: ReturnType<typeof pollReadiness> | null = null;

  /** The store's clock (Redis TIME), in ms: fires' nominal times are on it. */
  const storeNow = async () => {
    const [seconds, micros] = await clock!.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  };

  beforeAll(async () => {
    const cwd = (dir = tempDir('taskline-topology')).path;
    // The helper's appendOnly uses fsync always; the deployment's Redis syncs every second.
    redis = await RedisServer.start({ args: ['--appendonly', 'yes', '--appendfsync', 'everysec'] });
    clock = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    const store = { REDIS_URL: redis.url, TASKLINE_PREFIX: uniquePrefix('topology') };

    const startCenter = async (): Promise<TaskCenter> => {
      const port = await freePort();
      const child = new CliProcess(['server', '--port', String(port), '--host', '127.0.0.1'], {
        cwd,
        env: { ...store, TASKLINE_API_TOKEN: API_TOKEN, TASKLINE_READ_TOKEN: READ_TOKEN, LOG_LEVEL: 'warn' },
      });
      const center = { process: child, url: `http://127.0.0.1:${port}`, address: `127.0.0.1:${port}`, schedulerId: '' };
      centers.push(center);
      const [, id] = await child.waitFor(/scheduler {3}running \((scheduler-[^;]+);[^\n]*\n[\s\S]*^ready/m, 30_000);
      center.schedulerId = id;
      return center;
    };
    const startWorker = async (): Promise<Worker> => {
      const port = await freePort();
      const child = new CliProcess(['worker', '--handlers', HANDLERS, '--queues', 'default'], { cwd, env: { ...store, METRICS_PORT: String(port) } });
      const worker = { process: child, address: `127.0.0.1:${port}` };
      workers.push(worker);
      await child.waitFor(/ready — SIGTERM\/SIGINT stops gracefully/, 30_000);
      return worker;
    };
    await Promise.all([startCenter(), startCenter(), startWorker(), startWorker()]);

    const tokenFile = join(cwd, 'read-token');
    writeFileSync(tokenFile, READ_TOKEN);
    const config = localPrometheusConfig({
      targets: { [CENTER_JOB]: centers.map((c) => c.address), [WORKER_JOB]: workers.map((w) => w.address) },
      credentialsFile: tokenFile,
    });
    prometheus = await PrometheusServer.start(config);
  }, 90_000);

  afterAll(async () => {
    await readiness?.stop();
    await Promise.allSettled([...centers.map((c) => c.process.kill()), ...workers.map((w) => w.process.kill()), prometheus?.destroy()]);
    clock?.disconnect();
    await redis?.destroy();
    dir?.remove();
  }, 30_000);

  it('Prometheus scrapes both task centers and both workers with the shipped jobs, paths and token', async () => {
    const prom = prometheus!;
    // Every target up (the task centers' /metrics only with the read token of the credentials file).
    const targets = await eventually(async () => {
      const active = await prom.targets();
      return active.length === 4 && active.every((t) => t.health === 'up') ? active : null;
    }, 30_000, 200).catch(async (error: Error) => {
      const seen = (await prom.targets()).map((t) => `${t.labels.job} ${t.scrapeUrl} ${t.health} ${t.lastError}`);
      throw new Error(`${error.message}; targets:\n${seen.join('\n')}\nprometheus log:\n${prom.logTail(10)}`);
    });
    expect(targets.map((t) => `${t.labels.job} ${t.scrapeUrl}`).sort()).toEqual(
      [...centers.map((c) => `${CENTER_JOB} http://${c.address}/metrics`), ...workers.map((w) => `${WORKER_JOB} http://${w.address}/metrics`)].sort(),
    );
    for (const center of centers) {
      expect((await fetch(`${center.url}/metrics`, { signal: AbortSignal.timeout(5_000) })).status, 'a task center\'s /metrics without a token').toBe(401);
    }

    // `up` is 1 for the four, as Prometheus stored it.
    const up = await eventually(async () => {
      const samples = await prom.query('up');
      return samples.length === 4 ? samples : null;
    }, 15_000, 200);
    expect(Object.fromEntries(up.map((s) => [`${s.metric.job} ${s.metric.instance}`, s.value[1]]))).toEqual(
      Object.fromEntries([...centers.map((c) => [`${CENTER_JOB} ${c.address}`, '1']), ...workers.map((w) => [`${WORKER_JOB} ${w.address}`, '1'])]),
    );
    // The task centers' own metrics: each sees both workers' heartbeats.
    const live = await eventually(async () => {
      const samples = await prom.query(`scheduler_workers{job="${CENTER_JOB}"}`);
      return samples.length === 2 && samples.every((s) => s.value[1] === '2') ? samples : null;
    }, 15_000, 200);
    expect(Object.keys(byLabel(live, 'instance')).sort()).toEqual(centers.map((c) => c.address).sort());

    // The store is the deployment's: Redis with an append-only file synced every second.
    expect(await clock!.config('GET', 'append*')).toEqual(expect.arrayContaining(['appendonly', 'yes', 'appendfsync', 'everysec']));
  }, 60_000);

  it('a task that dies makes TasklineDeadTasks fire in Prometheus\'s /api/v1/alerts', async () => {
    const prom = prometheus!;
    // Both task centers' counters scraped at 0 first, so the rule's increase() has a start.
    await eventually(async () => {
      const samples = await prom.query(`scheduler_tasks_dead_total{job="${CENTER_JOB}"}`);
      return samples.length === 2 && samples.every((s) => s.value[1] === '0');
    }, 15_000, 200);
    // The shipped rules are loaded from the shipped file, and evaluate cleanly on the real metrics;
    // after an evaluation that saw the zero counters, TasklineDeadTasks is inactive.
    const zeroSeenAt = Date.now();
    const groups = await eventually(async () => {
      const loaded = await prom.rules();
      const rules = loaded.flatMap((g) => g.rules);
      return rules.length > 0 && rules.every((r) => Date.parse(r.lastEvaluation) > zeroSeenAt) ? loaded : null;
    }, 15_000, 200);
    expect(groups.map((g) => [g.name, g.file])).toEqual([['taskline', RULES]]);
    const rules = groups[0].rules;
    expect(rules.map((r) => `${r.name} ${r.health}${r.lastError ? ` ${r.lastError}` : ''}`)).toEqual(rules.map((r) => `${r.name} ok`));
    expect(rules.map((r) => r.name)).toContain('TasklineDeadTasks');
    expect(rules.find((r) => r.name === 'TasklineDeadTasks')?.state).toBe('inactive');
    expect((await prom.alerts()).filter((a) => a.labels.alertname === 'TasklineDeadTasks')).toEqual([]);

    const [center] = centers;
    const ok = await call(center, 'POST', '/api/v1/tasks', { type: 'succeeds', payload: { n: 1 }, maxRetries: 0 });
    const failing = await call(center, 'POST', '/api/v1/tasks', { type: 'always-fails', payload: {}, maxRetries: 0 });
    expect([ok.status, failing.status]).toEqual([201, 201]);
    const finished = async (id: string) => {
      const { json } = await call(center, 'GET', `/api/v1/tasks/${encodeURIComponent(id)}?wait=30`);
      return json as { state: string; error: string | null };
    };
    expect(await finished(ok.json.task_id)).toMatchObject({ state: 'completed' });
    const dead = await finished(failing.json.task_id);
    expect(dead.state).toBe('dead');
    expect(JSON.stringify(dead.error)).toContain('this handler always fails');

    // The rule has no `for:`: it fires at the first evaluation that sees the increase.
    const alert = await eventually(async () => (await prom.alerts()).find((a) => a.labels.alertname === 'TasklineDeadTasks' && a.state === 'firing'), 30_000, 200).catch(
      async (error: Error) => {
        throw new Error(`${error.message}; alerts: ${JSON.stringify(await prom.alerts())}; dead counters: ${JSON.stringify(await prom.query('scheduler_tasks_dead_total'))}`);
      },
    );
    expect(alert.labels.severity).toBe('warning');
    expect(alert.annotations.summary).toMatch(/tasks went to the dead letter/);

    // Each task center heard the dead task; the workers counted the failed and the completed attempt.
    await eventually(async () => {
      const samples = await prom.query(`scheduler_tasks_dead_total{job="${CENTER_JOB}"}`);
      return samples.length === 2 && samples.every((s) => s.value[1] === '1');
    }, 15_000, 200);
    await eventually(async () => {
      const failed = await prom.query(`sum(scheduler_tasks_failed_total{job="${WORKER_JOB}",task_name="always-fails"})`);
      const completed = await prom.query(`sum(scheduler_tasks_completed_total{job="${WORKER_JOB}",task_name="succeeds"})`);
      return failed[0]?.value[1] === '1' && completed[0]?.value[1] === '1';
    }, 15_000, 200);
  }, 60_000);

  it('SIGKILLing the leading task center loses no fire and duplicates none; the other\'s /readyz answers 200 throughout', async () => {
    const prom = prometheus!;
    const created = await call(centers[0], 'POST', '/api/v1/schedules', { id: 'every-second', cron: '* * * * * *', task: { type: 'tick' }, overlap: 'allow' });
    expect(created.status).toBe(201);
    const from = (await storeNow()) + 1_000;
    const history = async (via: TaskCenter): Promise<FireView[]> => {
      const { status, json } = await call(via, 'GET', '/api/v1/schedules/every-second/fires?limit=1000');
      expect(status).toBe(200);
      return json.fires as FireView[];
    };
    // A few fires before the kill.
    await eventually(async () => (await history(centers[0])).filter((f) => Date.parse(f.nominal_at) >= from).length >= 3, 30_000, 200);

    // The leader, as the API names it, and as Prometheus scraped it from both task centers.
    const leaderId = await eventually(async () => {
      const { json } = await call(centers[0], 'GET', '/api/v1/schedulers');
      return (json.leader?.id as string | undefined) ?? null;
    }, 15_000, 200);
    const leader = centers.find((c) => c.schedulerId === leaderId);
    expect(leader, `the leader ${leaderId} is one of ${centers.map((c) => c.schedulerId).join(', ')}`).toBeDefined();
    const standby = centers.find((c) => c !== leader)!;
    await eventually(async () => {
      const samples = await prom.query('scheduler_leader == 1');
      return samples.length === 2 && samples.every((s) => s.metric.exported_instance === leaderId);
    }, 15_000, 200);

    readiness = pollReadiness(standby);
    await new Promise((r) => setTimeout(r, 500)); // a few answers before the kill too
    const killedAt = await storeNow();
    leader!.process.signal('SIGKILL');
    await leader!.process.exited;

    // The standby takes the lease; Prometheus sees the killed task center down and the new leader.
    await eventually(async () => (await call(standby, 'GET', '/api/v1/schedulers')).json.leader?.id === standby.schedulerId, 30_000, 200);
    await eventually(async () => {
      const up = byLabel(await prom.query(`up{job="${CENTER_JOB}"}`), 'instance');
      const leading = await prom.query('scheduler_leader == 1');
      return up[leader!.address] === '0' && up[standby.address] === '1' && leading.length === 1 && leading[0].metric.exported_instance === standby.schedulerId;
    }, 30_000, 200);

    // Every second from before the kill to AFTER_KILL_MS after it has its fire (bounded: then judged).
    const to = killedAt + AFTER_KILL_MS;
    const nominals = (fires: FireView[]) => new Set(fires.map((f) => Date.parse(f.nominal_at)));
    await eventually(async () => {
      const seen = nominals(await history(standby));
      for (let t = Math.ceil(from / 1000) * 1000; t <= to; t += 1000) if (!seen.has(t)) return false;
      return true;
    }, 30_000, 200).catch(() => undefined);
    const answers = await readiness.stop();
    readiness = null;

    const fires = await history(standby);
    const inRange = fires.filter((f) => Date.parse(f.nominal_at) >= from && Date.parse(f.nominal_at) <= to);
    expect(inRange.filter((f) => f.outcome !== 'enqueued').map((f) => `${f.nominal_at} ${f.outcome}`), 'fires not enqueued').toEqual([]);
    const stored: StoredFire[] = fires
      .filter((f) => f.enqueued_at !== null)
      .map((f) => ({ nominalAt: Date.parse(f.nominal_at), createdAt: Date.parse(f.enqueued_at!) }))
      .sort((a, b) => a.nominalAt - b.nominalAt);
    // Lag is printed, not judged: the box is busy, and a late fire is not a lost one.
    expectEveryFire(stored, 'every-second', 1_000, from, to, Number.POSITIVE_INFINITY);
    expect(from).toBeLessThan(killedAt);

    // /readyz of the surviving task center: 200 every time it was asked, before, during and after.
    expect(answers.filter((a) => a !== 200), '/readyz answers other than 200').toEqual([]);
    expect(answers.length).toBeGreaterThan(5);

    // The workers ran every task the fires enqueued.
    await eventually(async () => {
      const states = (await history(standby)).filter((f) => Date.parse(f.nominal_at) >= from && Date.parse(f.nominal_at) <= to).map((f) => f.task_state);
      return states.every((s) => s === 'completed');
    }, 30_000, 200);

    const afterKill = stored.filter((f) => f.nominalAt > killedAt && f.nominalAt <= to).map((f) => f.createdAt - f.nominalAt);
    console.log(`topology: leader ${leaderId} SIGKILLed; ${inRange.length} fires from ${new Date(from).toISOString()} to ${new Date(to).toISOString()}; lag of the fires after the kill ${afterKill.join(', ')} ms; /readyz asked ${answers.length} times`);
  }, 90_000);
});
