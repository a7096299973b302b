import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STORES } from '../helpers/stores.js';
import { startApi, type TestApi } from './helpers.js';

describe.each(STORES)('queues, schedules, workers, stats, health on %s', (_name, open) => {
  let api: TestApi;
  beforeEach(async () => {
    api = await startApi(open);
  });
  afterEach(async () => {
    await api.close();
  });
  const post = (url: string, payload?: unknown) => api.app.inject({ method: 'POST', url, ...(payload === undefined ? {} : { payload: payload as object }) });
  const get = (url: string) => api.app.inject({ method: 'GET', url });

  it('GET /api/v1, the URL the banners print, lists every route and the OpenAPI document', async () => {
    const index = await get('/api/v1');
    expect(index.statusCode).toBe(200);
    const body = index.json<{ name: string; version: string; openapi: string; routes: string[] }>();
    expect(body).toMatchObject({ name: 'taskline', openapi: '/openapi.json', access: 'admin', auth: false });
    const documented = Object.entries((await get('/openapi.json')).json<{ paths: Record<string, Record<string, unknown>> }>().paths)
      .flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`));
    expect([...body.routes].sort()).toEqual(documented.sort());
    expect(body.routes).toContain('GET /api/v1/types');
  });

  it('lists queues, one queue, its tasks by state with a cursor; pause, resume, run-all, delete-all', async () => {
    for (let i = 0; i < 3; i++) await post('/api/v1/tasks', { type: 't', queue: 'mail', payload: { i } });
    await post('/api/v1/tasks', { type: 't', queue: 'mail', delay: 3_600_000 });
    const list = (await get('/api/v1/queues')).json<{ queues: { name: string; counts: Record<string, number> }[] }>();
    expect(list.queues.find((q) => q.name === 'mail')).toMatchObject({ counts: { queued: 3, scheduled: 1 }, paused: false, size: 4 });
    expect((await get('/api/v1/queues/mail')).json()).toMatchObject({ name: 'mail', processed: 0, failed: 0, latency_ms: expect.any(Number) });
    expect((await get('/api/v1/queues/nope')).statusCode).toBe(404);
    const page1 = (await get('/api/v1/queues/mail/tasks?state=queued&limit=2')).json<{ tasks: unknown[]; next_cursor: string | null }>();
    expect(page1.tasks).toHaveLength(2);
    expect(page1.next_cursor).not.toBeNull();
    const page2 = (await get(`/api/v1/queues/mail/tasks?state=queued&limit=2&cursor=${encodeURIComponent(page1.next_cursor!)}`)).json<{ tasks: unknown[]; next_cursor: string | null }>();
    expect(page2.tasks).toHaveLength(1);
    expect((await post('/api/v1/queues/mail/pause')).json()).toEqual({ ok: true });
    expect((await get('/api/v1/queues/mail')).json()).toMatchObject({ paused: true });
    expect((await post('/api/v1/queues/mail/resume')).statusCode).toBe(200);
    expect((await post('/api/v1/queues/mail/tasks/scheduled/run-all')).json()).toEqual({ count: 1 });
    expect((await post('/api/v1/queues/mail/tasks/queued/delete-all')).json()).toEqual({ count: 4 });
    expect((await get('/api/v1/queues/mail')).json()).toMatchObject({ counts: { queued: 0 } });
  });

  it('queue keep bounds: read with the queue, changed in part, bad bounds refused with 400', async () => {
    const patch = (url: string, payload: unknown) => api.app.inject({ method: 'PATCH', url, payload: payload as object });
    await post('/api/v1/tasks', { type: 't', queue: 'mail' });
    expect((await get('/api/v1/queues/mail')).json()).toMatchObject({ keep: { completed: null, dead: null, cancelled: null } });
    const set = await patch('/api/v1/queues/mail/keep', { completed: 0, dead: 500 });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toEqual({ completed: 0, dead: 500, cancelled: null });
    expect((await patch('/api/v1/queues/mail/keep', { dead: null })).json()).toEqual({ completed: 0, dead: null, cancelled: null });
    expect((await get('/api/v1/queues')).json<{ queues: { name: string; keep: unknown }[] }>().queues.find((q) => q.name === 'mail')!.keep).toEqual({ completed: 0, dead: null, cancelled: null });
    for (const bad of [{ completed: -1 }, { completed: 1.5 }, { completed: '5' }, { queued: 1 }, { dead: 2e9 }]) {
      const refused = await patch('/api/v1/queues/mail/keep', bad);
      expect(refused.statusCode, JSON.stringify(bad)).toBe(400);
      expect(refused.json()).toMatchObject({ error: { code: 'TL_INVALID_REQUEST' } });
    }
    expect((await patch('/api/v1/queues/bad%20name/keep', { completed: 1 })).statusCode).toBe(400);
    expect((await get('/api/v1/queues/mail')).json()).toMatchObject({ keep: { completed: 0, dead: null, cancelled: null } });
  });

  it('queue limits: set in part with PATCH, shown with the queue; bad limits 400 with nothing stored; a full queue 429 with Retry-After', async () => {
    const patch = (url: string, payload: unknown) => api.app.inject({ method: 'PATCH', url, payload: payload as object });
    const none = { rate: null, concurrency: null, group_concurrency: null, max_length: null };
    await post('/api/v1/tasks', { type: 't', queue: 'mail' });
    expect((await get('/api/v1/queues/mail')).json()).toMatchObject({ limits: none });
    const set = await patch('/api/v1/queues/mail/limits', { rate: { limit: 50, intervalMs: 1000 }, concurrency: 5, maxLength: 2 });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toEqual({ rate: { limit: 50, interval_ms: 1000 }, concurrency: 5, group_concurrency: null, max_length: 2 });
    expect((await patch('/api/v1/queues/mail/limits', { concurrency: 'none', rate: null })).json()).toEqual({ ...none, max_length: 2 });
    expect((await get('/api/v1/queues')).json<{ queues: { name: string; limits: unknown }[] }>().queues.find((q) => q.name === 'mail')!.limits).toEqual({ ...none, max_length: 2 });
    const bads: unknown[] = [
      { concurrency: -1 }, { concurrency: 0 }, { concurrency: 1.5 }, { concurrency: '5' }, { maxLength: 2e9 }, { rate: { limit: 5, intervalMs: 0 } },
      { rate: { limit: 5 } }, { rate: '5/1s' }, { speed: 1 }, { maxLength: 5, concurrency: -1 },
    ];
    for (const bad of bads) {
      const refused = await patch('/api/v1/queues/mail/limits', bad);
      expect(refused.statusCode, JSON.stringify(bad)).toBe(400);
      expect(refused.json()).toMatchObject({ error: { code: 'TL_INVALID_REQUEST' } });
    }
    // Each message names the field and its accepted form, inside the rate too.
    const messages: [unknown, string][] = [
      [{ rate: { limit: 5, intervalMs: 1000, x: 1 } }, 'body.rate.x is not an accepted field; accepted: limit, intervalMs'],
      [{ rate: { limit: 0, intervalMs: 1000 } }, 'body.rate.limit must be a whole number of starts from 1 to 100000, got 0'],
      [{ rate: { limit: 5, intervalMs: 1.5 } }, 'body.rate.intervalMs must be a whole number of milliseconds from 1 to 86400000 (24 h), got 1.5'],
      [{ rate: { limit: 5, interval_ms: 1000 } }, 'body.rate.interval_ms is not an accepted field; accepted: limit, intervalMs'],
      [{ concurrency: 0 }, 'body.concurrency must be a whole number from 1 to'],
    ];
    for (const [bad, message] of messages) {
      expect((await patch('/api/v1/queues/mail/limits', bad)).json<{ error: { message: string } }>().error.message, JSON.stringify(bad)).toContain(message);
    }
    expect((await patch('/api/v1/queues/bad%20name/limits', { concurrency: 1 })).statusCode).toBe(400);
    expect((await get('/api/v1/queues/mail')).json()).toMatchObject({ limits: { ...none, max_length: 2 } });
    // maxLength 2 with 1 waiting: one more fits, then 429 with Retry-After; a batch that would cross it stores nothing.
    expect((await post('/api/v1/tasks', { type: 't', queue: 'mail' })).statusCode).toBe(201);
    const full = await post('/api/v1/tasks', { type: 't', queue: 'mail' });
    expect(full.statusCode).toBe(429);
    expect(full.headers['retry-after']).toBe('1');
    expect(full.json()).toMatchObject({ error: { code: 'TL_QUEUE_FULL', message: expect.stringContaining('queue mail is full: maxLength 2, 2 waiting') } });
    await patch('/api/v1/queues/mail/limits', { maxLength: 3 });
    const batch = await post('/api/v1/tasks', { tasks: [{ type: 't', queue: 'mail' }, { type: 't', queue: 'mail' }] });
    expect(batch.statusCode).toBe(429);
    expect(batch.headers['retry-after']).toBe('1');
    expect(batch.json<{ tasks: { status: string }[] }>().tasks.map((t) => t.status)).toEqual(['refused', 'refused']);
    expect((await get('/api/v1/queues/mail')).json()).toMatchObject({ counts: { queued: 2 } });
  });

  it('a batch refused with 429 names the queue of each task, stored or refused', async () => {
    expect((await api.app.inject({ method: 'PATCH', url: '/api/v1/queues/mail/limits', payload: { maxLength: 1 } })).statusCode).toBe(200);
    const batch = await post('/api/v1/tasks', { tasks: [{ type: 't', queue: 'other' }, { type: 't', queue: 'mail' }, { type: 't', queue: 'mail' }] });
    expect(batch.statusCode).toBe(429);
    expect(batch.json<{ tasks: unknown[] }>().tasks).toEqual([
      { task_id: expect.any(String), queue: 'other', status: 'enqueued' },
      { task_id: expect.any(String), queue: 'mail', status: 'refused', reason: 'queue-full' },
      { task_id: expect.any(String), queue: 'mail', status: 'refused', reason: 'queue-full' },
    ]);
  });

  it('schedules: create, get, list, update, pause, resume, trigger, fires, backfill, preview, delete', async () => {
    const created = await post('/api/v1/schedules', { id: 'weekly-report', cron: '0 0 9 * * 1', timezone: 'Europe/Paris', task: { type: 'send_report', queue: 'reports' } });
    if (created.statusCode === 501) return; // this store has no schedules yet
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ id: 'weekly-report', cron: '0 0 9 * * 1', timezone: 'Europe/Paris', generation: 1, paused: false });
    expect((await post('/api/v1/schedules', { id: 'weekly-report', cron: '* * * * *', task: { type: 'x' } })).statusCode).toBe(409);
    expect((await get('/api/v1/schedules/weekly-report')).json()).toMatchObject({ id: 'weekly-report', task: { type: 'send_report', queue: 'reports' } });
    expect((await get('/api/v1/schedules')).json<{ schedules: unknown[] }>().schedules).toHaveLength(1);
    const updated = await api.app.inject({ method: 'PUT', url: '/api/v1/schedules/weekly-report', payload: { cron: '0 0 10 * * 1', task: { type: 'send_report', queue: 'reports' } } });
    expect(updated.json()).toMatchObject({ cron: '0 0 10 * * 1' });
    expect((await post('/api/v1/schedules/weekly-report/pause', { note: 'holiday' })).json()).toMatchObject({ paused: true, pause_note: 'holiday' });
    expect((await post('/api/v1/schedules/weekly-report/resume')).json()).toMatchObject({ paused: false });
    const triggered = (await post('/api/v1/schedules/weekly-report/trigger')).json<{ fires: { outcome: string; task_id: string }[] }>();
    expect(triggered.fires[0]).toMatchObject({ outcome: 'enqueued', task_id: expect.stringMatching(/^schedule:weekly-report:/) });
    expect((await get(`/api/v1/tasks/${encodeURIComponent(triggered.fires[0].task_id)}`)).json()).toMatchObject({ type: 'send_report', queue: 'reports' });
    const fires = (await get('/api/v1/schedules/weekly-report/fires')).json<{ fires: Record<string, unknown>[] }>();
    expect(fires.fires[0]).toEqual(expect.objectContaining({ fire_id: expect.any(String), nominal_at: expect.any(String), enqueued_at: expect.any(String), lag_ms: expect.any(Number), outcome: 'enqueued', task_id: triggered.fires[0].task_id }));
    const now = Date.now();
    const backfill = await post('/api/v1/schedules/weekly-report/backfill', { from: new Date(now - 15 * 86_400_000).toISOString(), to: new Date(now - 60_000).toISOString() });
    expect(backfill.statusCode).toBe(200);
    expect(backfill.json<{ fires: unknown[] }>().fires.length).toBeGreaterThanOrEqual(2);
    const preview = (await post('/api/v1/schedules/preview', { cron: '0 30 2 * * *', timezone: 'Europe/Berlin', count: 3 })).json<{ times: { utc: string; local: string }[] }>();
    expect(preview.times).toHaveLength(3);
    expect(preview.times[0].local).toContain('02:30');
    expect((await api.app.inject({ method: 'DELETE', url: '/api/v1/schedules/weekly-report' })).json()).toEqual({ ok: true });
    expect((await get('/api/v1/schedules/weekly-report')).json()).toMatchObject({ error: { code: 'TL_SCHEDULE_NOT_FOUND' } });
  });

  it('workers and stats', async () => {
    await api.store.backend.heartbeat({ id: 'w-1', host: 'h', pid: 1, queues: ['default'], concurrency: 4, running: [], startedAt: Date.now(), version: '0.1.0' }, 30_000);
    const workers = (await get('/api/v1/workers')).json<{ workers: Record<string, unknown>[] }>();
    expect(workers.workers).toEqual([expect.objectContaining({ id: 'w-1', concurrency: 4, started_at: expect.any(String), last_heartbeat_at: expect.any(String) })]);
    await post('/api/v1/tasks', { type: 't' });
    const stats = (await get('/api/v1/stats')).json<{ totals: Record<string, number>; minutes: unknown[]; days: unknown[]; queues: { minutes: unknown[] }[]; rates: Record<string, number> }>();
    expect(stats.totals).toMatchObject({ queued: 1, workers: 1, processed: 0, failed: 0 });
    expect(stats.minutes).toHaveLength(60);
    expect(stats.days).toHaveLength(90);
    expect(stats.queues[0].minutes).toHaveLength(60);
    expect(stats.rates).toEqual({ processed_per_minute: 0, failed_per_minute: 0, failure_ratio: 0 });
  });

  it('healthz, readyz, metrics, openapi', async () => {
    expect((await get('/healthz')).json()).toEqual({ status: 'healthy' });
    expect((await get('/readyz')).json()).toEqual({ status: 'healthy' });
    await post('/api/v1/tasks', { type: 't', queue: 'deep' });
    const metrics = await get('/metrics');
    expect(metrics.headers['content-type']).toContain('text/plain');
    expect(metrics.body).toContain('scheduler_queue_depth{queue_name="deep"} 1');
    expect(metrics.body).toMatch(/scheduler_queue_oldest_age_seconds\{queue_name="deep"\} \d+(\.\d+)?(e-\d+)?\n/);
    expect(metrics.body).toContain('scheduler_workers 0');
    expect(metrics.body).toContain('scheduler_tasks_dead_total 0');
    // Queue controls: running, tasks a limit holds back, refusals of a maxLength.
    expect(metrics.body).toContain('scheduler_queue_running{queue_name="deep"} 0');
    expect(metrics.body).toContain('scheduler_queue_refused_total{queue_name="deep"} 0');
    await api.store.backend.setQueueLimits('deep', { concurrency: 1, maxLength: 2 });
    await api.store.backend.claim('w', [{ queue: 'deep', count: 1 }], 30_000);
    await post('/api/v1/tasks', { type: 't', queue: 'deep' });
    await post('/api/v1/tasks', { type: 't', queue: 'deep' });
    expect((await post('/api/v1/tasks', { type: 't', queue: 'deep' })).statusCode).toBe(429);
    const limited = (await get('/metrics')).body;
    expect(limited).toContain('scheduler_queue_running{queue_name="deep"} 1');
    expect(limited).toContain('scheduler_queue_held_tasks{queue_name="deep",limit="concurrency"} 2');
    expect(limited).toContain('scheduler_queue_held_tasks{queue_name="deep",limit="rate"} 0');
    expect(limited).toContain('scheduler_queue_refused_total{queue_name="deep"} 1');
    const doc = (await get('/openapi.json')).json<{ openapi: string; paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { anyOf?: unknown[] } }> } }>> }>();
    expect(doc.openapi).toMatch(/^3\./);
    for (const path of ['/api/v1/tasks', '/api/v1/tasks/{id}', '/api/v1/tasks/{id}/cancel', '/api/v1/queues/{queue}/tasks', '/api/v1/schedules/{id}/fires', '/api/v1/schedules/preview', '/api/v1/events', '/readyz']) {
      expect(doc.paths).toHaveProperty([path]);
    }
    expect(doc.paths['/api/v1/tasks'].post.requestBody!.content['application/json'].schema.anyOf).toHaveLength(2);
  });
});
