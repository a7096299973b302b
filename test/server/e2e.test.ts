/**
 * End to end with real processes: a `taskline server` and a `taskline worker` child on a private
 * redis-server; everything through HTTP.
 */
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliProcess } from '../cli/helpers.js';
import { freePort, RedisServer } from '../helpers/redis-server.js';

const HANDLERS = resolve(import.meta.dirname, 'fixtures/handlers.mjs');

function metricValue(text: string, name: string, labels = ''): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `) || (labels === '' && l.startsWith(`${name} `)));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

describe('task center end to end (server + worker processes on Redis)', () => {
  let redis: RedisServer;
  let server: CliProcess;
  let worker: CliProcess;
  let api = '';
  let metricsUrl = '';

  beforeAll(async () => {
    redis = await RedisServer.start();
    const [port, metricsPort] = [await freePort(), await freePort()];
    const store = ['--backend', redis.url, '--prefix', 'e2e'];
    server = new CliProcess([...store, 'server', '--port', String(port)]);
    worker = new CliProcess([...store, 'worker', '--handlers', HANDLERS, '--metrics-port', String(metricsPort), '--concurrency', '4']);
    await server.waitFor(/ready/);
    await worker.waitFor(/ready/);
    api = `http://127.0.0.1:${port}`;
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  }, 30_000);

  afterAll(async () => {
    for (const child of [worker, server]) await child?.stop();
    await redis?.destroy();
  }, 30_000);

  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${api}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const get = async (path: string) => {
    const res = await fetch(`${api}${path}`);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('enqueue over HTTP; ?wait= returns the result', async () => {
    const enqueued = await post('/api/v1/tasks', { type: 'e2e:double', payload: { n: 21 } });
    expect(enqueued).toEqual({ status: 201, body: { task_id: expect.any(String), queue: 'default', status: 'enqueued' } });
    const started = Date.now();
    const done = await get(`/api/v1/tasks/${enqueued.body.task_id as string}?wait=20`);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ state: 'completed', result: { doubled: 42 }, attempt: 1, error: null });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(Date.parse(done.body.finished_at as string)).toBeGreaterThan(0);
  });

  it('a failing task shows up as dead with its attempts', async () => {
    const enqueued = await post('/api/v1/tasks', { type: 'e2e:fail', payload: {}, maxRetries: 2 });
    const dead = await get(`/api/v1/tasks/${enqueued.body.task_id as string}?wait=20`);
    expect(dead.body).toMatchObject({ state: 'dead', attempt: 3, max_retries: 2, error: 'the remote service said no' });
    const attempts = dead.body.attempts as { outcome: string; error: string }[];
    expect(attempts).toHaveLength(3);
    expect(attempts.every((a) => a.outcome === 'failed' && a.error === 'the remote service said no')).toBe(true);
  });

  it('metrics counters and the duration histogram move', async () => {
    const before = await (await fetch(metricsUrl)).text();
    const completedBefore = metricValue(before, 'scheduler_tasks_completed_total', '{task_name="e2e:double"}');
    const countBefore = metricValue(before, 'scheduler_task_duration_seconds_count', '{task_name="e2e:double"}');
    for (let n = 0; n < 3; n++) {
      const { body } = await post('/api/v1/tasks', { type: 'e2e:double', payload: { n } });
      await get(`/api/v1/tasks/${body.task_id as string}?wait=20`);
    }
    const after = await (await fetch(metricsUrl)).text();
    expect(metricValue(after, 'scheduler_tasks_completed_total', '{task_name="e2e:double"}')).toBe(completedBefore + 3);
    expect(metricValue(after, 'scheduler_tasks_dispatched_total', '{task_name="e2e:double"}')).toBeGreaterThanOrEqual(completedBefore + 3);
    expect(metricValue(after, 'scheduler_task_duration_seconds_count', '{task_name="e2e:double"}')).toBe(countBefore + 3);
    expect(metricValue(after, 'scheduler_task_duration_seconds_sum', '{task_name="e2e:double"}')).toBeGreaterThan(0.05);
    expect(metricValue(after, 'scheduler_tasks_failed_total', '{task_name="e2e:fail"}')).toBe(3);
    expect(metricValue(after, 'scheduler_task_retries_total', '{task_name="e2e:fail"}')).toBe(2);
    const center = await (await fetch(`${api}/metrics`)).text();
    expect(metricValue(center, 'scheduler_tasks_dead_total')).toBe(1);
    expect(metricValue(center, 'scheduler_workers')).toBe(1);
    expect(center).toContain('scheduler_queue_depth{queue_name="default"} 0');
  });

  it('/readyz turns 503 when Redis stops and back to 200 when it returns', async () => {
    expect(await get('/readyz')).toEqual({ status: 200, body: { status: 'healthy' } });
    await redis.stop();
    const down = await get('/readyz');
    expect(down.status).toBe(503);
    // In Taskline's words, naming the store; never the driver's (ioredis's maxRetriesPerRequest …).
    expect(down.body).toMatchObject({ status: 'unhealthy', error: expect.stringMatching(/^the store (is unreachable )?\(redis 127\.0\.0\.1:\d+\)/) });
    expect(JSON.stringify(down.body)).not.toMatch(/maxRetriesPerRequest|ioredis/);
    expect((await get('/healthz')).status).toBe(200);
    await redis.start();
    const deadline = Date.now() + 15_000;
    let status = 0;
    while (Date.now() < deadline) {
      status = (await get('/readyz')).status;
      if (status === 200) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe(200);
  }, 30_000);
});
