/**
 * Task groups over HTTP, on each store: the enqueue option `group` in the JSON body (single and
 * batch) and as a query parameter, refused with a 400 naming the field and the accepted form when
 * it is not one; the task views' `group`; a queue view's groups; the waiting reason
 * group-concurrency-full; and the OpenAPI document describing all of it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STORES } from '../helpers/stores.js';
import { startApi, type TestApi } from './helpers.js';

const GROUP_FORM = 'a group: 1–200 characters of letters, digits and _ . : @ / + = -';

describe.each(STORES)('task groups in the API on %s', (_name, open) => {
  let api: TestApi;
  beforeEach(async () => {
    api = await startApi(open);
  });
  afterEach(async () => {
    await api.close();
  });
  const post = (url: string, payload?: unknown) => api.app.inject({ method: 'POST', url, payload: payload as object });
  const get = (url: string) => api.app.inject({ method: 'GET', url });
  const taskOf = async (res: { json<T>(): T }) => (await get(`/api/v1/tasks/${res.json<{ task_id: string }>().task_id}`)).json<Record<string, unknown>>();

  it('takes group in the body (single and batch) and as a query parameter; the task view shows it, null without one', async () => {
    const single = await post('/api/v1/tasks', { type: 't', queue: 'tenants', group: 'tenant:42' });
    expect(single.statusCode, single.body).toBe(201);
    expect(await taskOf(single)).toMatchObject({ queue: 'tenants', group: 'tenant:42' });
    expect((await api.store.backend.getTask(single.json<{ task_id: string }>().task_id))?.group).toBe('tenant:42');

    const batch = await post('/api/v1/tasks', { tasks: [{ type: 't', group: 'acme' }, { type: 't' }] });
    expect(batch.statusCode, batch.body).toBe(201);
    const ids = batch.json<{ tasks: { task_id: string }[] }>().tasks.map((t) => t.task_id);
    expect(await Promise.all(ids.map(async (id) => (await get(`/api/v1/tasks/${id}`)).json<{ group: unknown }>().group))).toEqual(['acme', null]);

    const query = await post('/api/v1/tasks/t?group=user%40example.com', { x: 1 });
    expect(query.statusCode, query.body).toBe(201);
    expect(await taskOf(query)).toMatchObject({ payload: { x: 1 }, group: 'user@example.com' });

    // The queue's task list shows it too.
    const list = (await get('/api/v1/queues/tenants/tasks?state=queued')).json<{ tasks: { group: unknown }[] }>();
    expect(list.tasks.map((t) => t.group)).toEqual(['tenant:42']);
  });

  it('a group that is not one is a 400 naming the field and the accepted form; nothing is stored', async () => {
    const cases: [string, unknown, string][] = [
      ['/api/v1/tasks', { type: 't', group: 'no spaces' }, `body.group must be ${GROUP_FORM}, got "no spaces"`],
      ['/api/v1/tasks', { type: 't', group: '' }, `body.group must be ${GROUP_FORM}, got ""`],
      ['/api/v1/tasks', { type: 't', group: 'x'.repeat(201) }, `body.group must be ${GROUP_FORM}, got "${'x'.repeat(100)}"… (201 characters)`],
      ['/api/v1/tasks', { type: 't', group: 7 }, `body.group must be ${GROUP_FORM}, got 7`],
      ['/api/v1/tasks', { tasks: [{ type: 't', group: 'ok' }, { type: 't', group: 'a"b' }] }, `body.tasks[1].group must be ${GROUP_FORM}, got "a\\"b"`],
      ['/api/v1/tasks/t?group=%C3%A9t%C3%A9', {}, `query.group must be ${GROUP_FORM}, got "été"`],
    ];
    for (const [url, body, message] of cases) {
      const res = await post(url, body);
      expect(res.statusCode, url).toBe(400);
      const error = res.json<{ error: { code: string; message: string } }>().error;
      expect(error.code).toBe('TL_INVALID_REQUEST');
      expect(error.message.startsWith(message), error.message).toBe(true);
    }
    expect((await api.store.backend.listQueues()).reduce((sum, q) => sum + q.counts.queued, 0)).toBe(0);
  });

  it('a queue view shows its groups; a task whose group is full says why it waits', async () => {
    await api.app.inject({ method: 'PATCH', url: '/api/v1/queues/tenants/limits', payload: { groupConcurrency: 1 } });
    const first = await post('/api/v1/tasks', { type: 't', queue: 'tenants', group: 'acme', id: 'acme-1' });
    expect(first.statusCode, first.body).toBe(201);
    await post('/api/v1/tasks', { type: 't', queue: 'tenants', group: 'acme', id: 'acme-2' });
    await post('/api/v1/tasks', { type: 't', queue: 'tenants', group: 'globex', id: 'globex-1' });
    expect((await get('/api/v1/queues/tenants')).json()).toMatchObject({ groups: { waiting: 2, running: {} } });
    await api.store.backend.heartbeat({ id: 'w-1', host: 'h', pid: 1, queues: ['tenants'], concurrency: 8, running: [], startedAt: Date.now(), version: '0.1.0' }, 30_000);
    const [claim] = await api.store.backend.claim('w-1', [{ queue: 'tenants', count: 1 }], 60_000);
    expect(claim.tasks.map((t) => t.id)).toEqual(['acme-1']);

    const queue = (await get('/api/v1/queues/tenants')).json<{ groups: unknown }>();
    expect(queue.groups).toEqual({ waiting: 2, running: { acme: 1 } });
    expect((await get('/api/v1/queues')).json<{ queues: { groups: unknown }[] }>().queues[0].groups).toEqual({ waiting: 2, running: { acme: 1 } });

    const waiting = (await get('/api/v1/tasks/acme-2')).json<{ waiting: unknown }>().waiting;
    expect(waiting).toEqual({
      reason: 'group-concurrency-full', message: 'the group acme of the queue tenants runs as many tasks as its group concurrency allows (1)', until: null,
    });
    // Another group's task is not held by it.
    expect((await get('/api/v1/tasks/globex-1')).json<{ waiting: unknown }>().waiting).toBeNull();
  });

  it('a workflow node in the graph form takes a group; its task has it', async () => {
    const created = await post('/api/v1/workflows', { nodes: [{ id: 'a', type: 't', queue: 'tenants', group: 'acme' }, { id: 'b', type: 't', dependsOn: ['a'] }] });
    expect(created.statusCode, created.body).toBe(201);
    const node = created.json<{ nodes: { id: string; task_id: string | null }[] }>().nodes.find((n) => n.id === 'a')!;
    expect((await get(`/api/v1/tasks/${node.task_id}`)).json()).toMatchObject({ queue: 'tenants', group: 'acme' });
    const bad = await post('/api/v1/workflows', { nodes: [{ id: 'a', type: 't', group: 'no spaces' }] });
    expect(bad.statusCode).toBe(422);
    expect(bad.json<{ error: { message: string } }>().error.message).toMatch(/^node "a": invalid group "no spaces": a group is 1–200 characters/);
  });

  it('the OpenAPI document has group on enqueue (body and query), in the task view, in the queue view, and the new waiting reason', async () => {
    type Schema = { properties?: Record<string, Schema>; anyOf?: Schema[]; items?: Schema; enum?: string[]; type?: string; pattern?: string; nullable?: boolean };
    type Op = { parameters: { name: string; schema: Schema }[]; requestBody?: { content: { 'application/json': { schema: Schema } } }; responses: Record<string, { content?: { 'application/json': { schema: Schema } } }> };
    const doc = (await get('/openapi.json')).json<{ paths: Record<string, Record<string, Op>> }>();
    const body = doc.paths['/api/v1/tasks'].post.requestBody!.content['application/json'].schema;
    const [batch, single] = body.anyOf!;
    expect(single.properties!.group).toMatchObject({ type: 'string', pattern: expect.any(String) });
    expect(batch.properties!.tasks.items!.properties!.group).toMatchObject({ type: 'string' });
    expect(doc.paths['/api/v1/tasks/{type}'].post.parameters.find((p) => p.name === 'group')?.schema).toMatchObject({ type: 'string' });
    const view = doc.paths['/api/v1/tasks/{id}'].get.responses['200'].content!['application/json'].schema;
    expect(view.properties!.group).toMatchObject({ type: 'string', nullable: true });
    expect(view.properties!.waiting.properties!.reason.enum).toContain('group-concurrency-full');
    const queue = doc.paths['/api/v1/queues/{queue}'].get.responses['200'].content!['application/json'].schema;
    expect(Object.keys(queue.properties!.groups.properties!)).toEqual(['waiting', 'running']);
  });
});
