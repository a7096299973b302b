import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/client.js';
import { Worker } from '../../src/worker/worker.js';
import { newTask } from '../../src/backend/conformance/harness.js';
import { STORES } from '../helpers/stores.js';
import { startApi, type TestApi } from './helpers.js';

describe.each(STORES)('tasks API on %s', (_name, open) => {
  let api: TestApi;
  beforeEach(async () => {
    api = await startApi(open);
  });
  afterEach(async () => {
    await api.close();
  });

  it('enqueues a task: 201 {task_id, queue, status}, and shows its status with ISO times', async () => {
    const res = await api.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { type: 'email:deliver', payload: { to: 'ada@example.com' }, queue: 'critical', maxRetries: 5 } });
    expect(res.statusCode).toBe(201);
    const body = res.json<{ task_id: string; queue: string; status: string }>();
    expect(body).toEqual({ task_id: expect.any(String), queue: 'critical', status: 'enqueued' });
    const got = await api.app.inject({ method: 'GET', url: `/api/v1/tasks/${body.task_id}` });
    expect(got.statusCode).toBe(200);
    const task = got.json<Record<string, unknown>>();
    expect(task).toMatchObject({
      id: body.task_id, type: 'email:deliver', queue: 'critical', state: 'queued', payload: { to: 'ada@example.com' }, result: null, error: null,
      attempt: 0, max_retries: 5, started_at: null, finished_at: null, next_run_at: null,
    });
    expect(new Date(task.created_at as string).toISOString()).toBe(task.created_at);
    for (const key of ['id', 'type', 'queue', 'state', 'payload', 'result', 'error', 'attempt', 'max_retries', 'created_at', 'started_at', 'finished_at', 'next_run_at']) {
      expect(task).toHaveProperty(key);
    }
  });

  it('a delayed task is scheduled; runAt may be ISO', async () => {
    const delayed = await api.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { type: 't', delay: 60_000 } });
    expect(delayed.json()).toMatchObject({ status: 'scheduled', queue: 'default' });
    const at = await api.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { type: 't', runAt: new Date(Date.now() + 3_600_000).toISOString() } });
    expect(at.json()).toMatchObject({ status: 'scheduled' });
    const task = (await api.app.inject({ method: 'GET', url: `/api/v1/tasks/${at.json<{ task_id: string }>().task_id}` })).json<{ next_run_at: string }>();
    expect(Date.parse(task.next_run_at)).toBeGreaterThan(Date.now());
  });

  it('enqueues a batch', async () => {
    const res = await api.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { tasks: [{ type: 'a' }, { type: 'b', queue: 'low', delay: 1000 }] } });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({ tasks: [{ task_id: expect.any(String), queue: 'default', status: 'enqueued' }, { task_id: expect.any(String), queue: 'low', status: 'scheduled' }] });
  });

  it('a batch with a conflicting id answers 409 with each outcome', async () => {
    await api.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { type: 'a', id: 'fixed-1' } });
    const res = await api.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { tasks: [{ type: 'a', id: 'fixed-1' }, { type: 'a', id: 'fixed-2' }] } });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ error: { code: 'TL_TASK_CONFLICT' }, tasks: [{ task_id: 'fixed-1', status: 'conflict' }, { task_id: 'fixed-2', status: 'enqueued' }] });
  });

  it('POST /api/v1/tasks/{type}: the body is the payload, options in the query', async () => {
    const res = await api.app.inject({ method: 'POST', url: '/api/v1/tasks/report:generate?queue=critical&maxRetries=2&id=rep-1', payload: { title: 'Q3 ✓' } });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({ task_id: 'rep-1', queue: 'critical', status: 'enqueued' });
    const task = (await api.app.inject({ method: 'GET', url: '/api/v1/tasks/rep-1' })).json();
    expect(task).toMatchObject({ type: 'report:generate', payload: { title: 'Q3 ✓' }, max_retries: 2 });
    const again = await api.app.inject({ method: 'POST', url: '/api/v1/tasks/report:generate?id=rep-1', payload: {} });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ error: { code: 'TL_TASK_CONFLICT' } });
  });

  it('cancel, run, archive and delete', async () => {
    const id = (await api.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { type: 't' } })).json<{ task_id: string }>().task_id;
    expect((await api.app.inject({ method: 'POST', url: `/api/v1/tasks/${id}/cancel` })).json()).toEqual({ id, status: 'cancelled' });
    const runAgain = await api.app.inject({ method: 'POST', url: `/api/v1/tasks/${id}/run` });
    expect(runAgain.statusCode).toBe(200);
    expect((await api.app.inject({ method: 'GET', url: `/api/v1/tasks/${id}` })).json()).toMatchObject({ state: 'queued' });
    expect((await api.app.inject({ method: 'POST', url: `/api/v1/tasks/${id}/archive` })).statusCode).toBe(200);
    expect((await api.app.inject({ method: 'GET', url: `/api/v1/tasks/${id}` })).json()).toMatchObject({ state: 'dead' });
    const archiveAgain = await api.app.inject({ method: 'POST', url: `/api/v1/tasks/${id}/archive` });
    expect(archiveAgain.statusCode).toBe(409);
    expect(archiveAgain.json()).toMatchObject({ error: { code: 'TL_INVALID_STATE' } });
    expect((await api.app.inject({ method: 'DELETE', url: `/api/v1/tasks/${id}` })).statusCode).toBe(200);
    const gone = await api.app.inject({ method: 'GET', url: `/api/v1/tasks/${id}` });
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toEqual({ error: { code: 'TL_TASK_NOT_FOUND', message: expect.any(String) } });
  });

  it('?wait= returns as soon as the task finishes (driven by the notification)', async () => {
    const id = (await api.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { type: 't' } })).json<{ task_id: string }>().task_id;
    const started = Date.now();
    const waiting = api.app.inject({ method: 'GET', url: `/api/v1/tasks/${id}?wait=20` });
    await new Promise((r) => setTimeout(r, 100));
    const other = await api.store.reopen();
    const [claim] = await other.claim('w', [{ queue: 'default', count: 1 }], 30_000);
    const task = claim.tasks[0];
    await other.ack([{ kind: 'complete', id, queue: 'default', token: task.token, result: JSON.stringify({ ok: 1 }), attempt: { attempt: 1, startedAt: task.startedAt, finishedAt: task.startedAt + 1, outcome: 'completed', error: null, stack: null, workerId: 'w' } }]);
    const res = await waiting;
    expect(Date.now() - started).toBeLessThan(4000);
    expect(res.json()).toMatchObject({ id, state: 'completed', result: { ok: 1 }, attempt: 1 });
  });

  it('?wait= on a task its queue keeps none of says it finished, with 404', async () => {
    await api.store.backend.setQueueKeep('default', { completed: 0 });
    const id = (await api.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { type: 't' } })).json<{ task_id: string }>().task_id;
    const waiting = api.app.inject({ method: 'GET', url: `/api/v1/tasks/${id}?wait=20` });
    // The wait registers for the notification and then reads the task, in one turn: once it is
    // registered, its first read is on its way before the ack below (a read after the ack would
    // find no task, and no notification yet to say why).
    const waiters = (api.hub as unknown as { finishWaiters: Map<string, unknown> }).finishWaiters;
    await expect.poll(() => waiters.has(id)).toBe(true);
    const other = await api.store.reopen();
    const [claim] = await other.claim('w', [{ queue: 'default', count: 1 }], 30_000);
    const task = claim.tasks[0];
    await other.ack([{ kind: 'complete', id, queue: 'default', token: task.token, result: '', attempt: { attempt: 1, startedAt: task.startedAt, finishedAt: task.startedAt + 1, outcome: 'completed', error: null, stack: null, workerId: 'w' } }]);
    const res = await waiting;
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ error: { code: 'TL_TASK_NOT_FOUND', message: `task ${id} finished (completed), but its record is gone (its queue's keep bound on completed tasks deletes them: see setQueueKeep, taskline queue keep), so it cannot be read` } });
  });

  it('?wait= on an unfinished task answers its current state after the wait', async () => {
    const id = (await api.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { type: 't' } })).json<{ task_id: string }>().task_id;
    const started = Date.now();
    const res = await api.app.inject({ method: 'GET', url: `/api/v1/tasks/${id}?wait=0.3` });
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(res.json()).toMatchObject({ state: 'queued' });
  });
});

describe.each(STORES)('a task view on %s: logs, links and a cancel request', (_name, open) => {
  let api: TestApi;
  beforeEach(async () => {
    api = await startApi(open);
  });
  afterEach(async () => {
    await api.close();
  });

  it('shows the log lines a handler wrote and the schedule fire that made it', async () => {
    const fire = 'schedule:nightly:report:3:1767225600000';
    await api.store.backend.enqueue([{ ...newTask('report', { n: 1 }, { id: 'fired', links: { scheduleFireId: fire } }) }]);
    const worker = new Worker(api.store.backend, { concurrency: 1, idleWait: 200 });
    worker.handle('report', async (_payload, ctx) => {
      ctx.log('step', 1);
      ctx.log({ rows: 3 });
      return 'ok';
    });
    await worker.start();
    const done = await api.app.inject({ method: 'GET', url: '/api/v1/tasks/fired?wait=10' });
    await worker.stop();
    const task = done.json<{ state: string; logs: { at: string; message: string }[]; links: unknown; cancel_requested: boolean }>();
    expect(task.state).toBe('completed');
    expect(task.logs.map((l) => l.message)).toEqual(['step 1', '{"rows":3}']);
    expect(Date.parse(task.logs[0].at)).toBeGreaterThan(0);
    expect(task.links).toEqual({ schedule_id: 'nightly:report', schedule_fire_id: fire, workflow_id: null, workflow_node: null, parent_id: null });
    expect(task.cancel_requested).toBe(false);
  });

  it('a task enqueued by hand has no links and no logs', async () => {
    const res = await api.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { type: 't' } });
    const task = (await api.app.inject({ method: 'GET', url: `/api/v1/tasks/${res.json<{ task_id: string }>().task_id}` })).json<Record<string, unknown>>();
    expect(task).toMatchObject({ logs: [], links: { schedule_id: null, schedule_fire_id: null, workflow_id: null, workflow_node: null, parent_id: null }, cancel_requested: false });
  });
});

describe.each(STORES)('why a task waits, on %s', (_name, open) => {
  let api: TestApi;
  beforeEach(async () => {
    api = await startApi(open);
  });
  afterEach(async () => {
    await api.close();
  });
  const waiting = async (id: string) => (await api.app.inject({ method: 'GET', url: `/api/v1/tasks/${id}` })).json<{ waiting: unknown }>().waiting;

  it('names the reason: no worker, paused, scheduled, no handler for the type; none once a worker can take it', async () => {
    await api.store.backend.enqueue([newTask('email:send', {}, { id: 'w-1', queue: 'mail' }), newTask('email:send', {}, { id: 'w-2', queue: 'mail', runAt: Date.now() + 60_000 })]);
    expect(await waiting('w-1')).toEqual({ reason: 'no-worker-for-queue', message: 'no live worker serves the queue mail', until: null });
    expect(await waiting('w-2')).toMatchObject({ reason: 'scheduled', until: expect.stringMatching(/Z$/) });
    await api.store.backend.pauseQueue('mail');
    expect(await waiting('w-1')).toMatchObject({ reason: 'paused' });
    await api.store.backend.resumeQueue('mail');
    const now = Date.now();
    await api.store.backend.heartbeat({ id: 'wk-1', host: 'h', pid: 1, queues: ['mail'], concurrency: 1, running: [], startedAt: now, version: 'x', types: ['sms:*'] }, 30_000);
    expect(await waiting('w-1')).toMatchObject({ reason: 'no-worker-for-type' });
    await api.store.backend.heartbeat({ id: 'wk-1', host: 'h', pid: 1, queues: ['mail'], concurrency: 1, running: [], startedAt: now, version: 'x', types: ['email:*'] }, 30_000);
    expect(await waiting('w-1')).toBeNull();
    // A queue's task list says it for each task, reading the queue and the workers once.
    const list = (await api.app.inject({ method: 'GET', url: '/api/v1/queues/mail/tasks?state=scheduled' })).json<{ tasks: { id: string; waiting: unknown }[] }>();
    expect(list.tasks).toEqual([expect.objectContaining({ id: 'w-2', waiting: expect.objectContaining({ reason: 'scheduled' }) })]);
    await api.store.backend.pauseQueue('mail');
    const queued = (await api.app.inject({ method: 'GET', url: '/api/v1/queues/mail/tasks?state=queued' })).json<{ tasks: { waiting: { reason: string } }[] }>();
    expect(queued.tasks.map((t) => t.waiting.reason)).toEqual(['paused']);
    await api.store.backend.resumeQueue('mail');
    const client = new Client(api.store.backend);
    expect(await client.whyWaiting('w-2')).toMatchObject({ reason: 'scheduled' });
    await expect(client.whyWaiting('nope')).rejects.toMatchObject({ code: 'TL_TASK_NOT_FOUND' });
  });

  it('names a limit of the queue that holds the task back: its concurrency, or its rate and until when', async () => {
    const { backend } = api.store;
    await backend.heartbeat({ id: 'wk-1', host: 'h', pid: 1, queues: ['mail'], concurrency: 5, running: [], startedAt: Date.now(), version: 'x', types: ['*'] }, 30_000);
    await backend.setQueueLimits('mail', { concurrency: 1 });
    await backend.enqueue([newTask('email:send', {}, { id: 'l-1', queue: 'mail' }), newTask('email:send', {}, { id: 'l-2', queue: 'mail' })]);
    expect(await waiting('l-2')).toBeNull();
    await backend.claim('wk-1', [{ queue: 'mail', count: 5 }], 30_000);
    expect(await waiting('l-2')).toEqual({ reason: 'concurrency-full', message: 'the queue mail runs as many tasks as its concurrency allows (1)', until: null });
    await backend.setQueueLimits('mail', { concurrency: null, rate: { limit: 1, intervalMs: 60_000 } });
    await backend.enqueue([newTask('email:send', {}, { id: 'l-3', queue: 'mail' })]);
    // l-2 starts, the rate's one start in the minute: l-3 waits for the window.
    await backend.claim('wk-1', [{ queue: 'mail', count: 5 }], 30_000);
    expect(await waiting('l-3')).toMatchObject({ reason: 'rate-limited', message: expect.stringMatching(/^the queue mail is rate-limited until \S+Z \(at most 1 start per 1m\)$/), until: expect.stringMatching(/Z$/) });
  });
});
