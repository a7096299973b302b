/** The workflow routes on each store: create from the graph form, read, list, cancel, retry; bad input; SSE event names. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Worker } from '../../src/index.js';
import { STORES } from '../helpers/stores.js';
import { startApi, type TestApi } from './helpers.js';

const ADMIN = 'wf-admin';
const READ = 'wf-read';

describe.each(STORES)('workflow routes on %s', (_name, open) => {
  let api: TestApi;
  let worker: Worker | null = null;
  beforeEach(async () => {
    api = await startApi(open, { apiToken: ADMIN, readToken: READ });
  });
  afterEach(async () => {
    await worker?.stop({ timeout: 1000 });
    worker = null;
    await api.close();
  });
  const call = (method: 'GET' | 'POST', url: string, payload?: unknown, token = ADMIN) =>
    api.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload === undefined ? {} : { payload: payload as object }) });

  it('creates a workflow from the graph form, runs it, and shows every node; lists by state', async () => {
    const created = await call('POST', '/api/v1/workflows', {
      id: 'wf-1', name: 'demo',
      nodes: [{ id: '1', type: 'fetch' }, { id: '0', type: 'double', dependsOn: ['1'], queue: 'default', maxRetries: 1 }],
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ id: 'wf-1', name: 'demo', state: 'running', fail_fast: true, nodes: [{ id: '1', state: 'queued', depends_on: [], waiting_on: [] }, { id: '0', state: 'pending', depends_on: ['1'], waiting_on: ['1'] }] });
    worker = new Worker(api.store.backend, { idleWait: 500 });
    worker.handle('fetch', async () => 21);
    worker.handle('double', async (_p, ctx) => (ctx.parent as number) * 2);
    void worker.start();
    await expect.poll(async () => (await call('GET', '/api/v1/workflows/wf-1', undefined, READ)).json().state, { timeout: 10_000 }).toBe('completed');
    const done = (await call('GET', '/api/v1/workflows/wf-1', undefined, READ)).json();
    expect(done.nodes.map((n: { id: string; result: unknown }) => [n.id, n.result])).toEqual([['1', 21], ['0', 42]]);
    expect(done.finished_at).toMatch(/Z$/);
    const task = (await call('GET', `/api/v1/tasks/${done.nodes[1].task_id}`, undefined, READ)).json();
    expect(task.links).toMatchObject({ workflow_id: 'wf-1' });
    const list = (await call('GET', '/api/v1/workflows?state=completed', undefined, READ)).json();
    expect(list.workflows.map((w: { id: string }) => w.id)).toEqual(['wf-1']);
    expect(list.workflows[0].nodes).toBeUndefined();
    expect((await call('GET', '/api/v1/workflows?state=running', undefined, READ)).json().workflows).toEqual([]);
    const metrics = await api.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${READ}` } });
    expect(metrics.body).toMatch(/scheduler_workflows_total\{state="completed"\} 1/);
  });

  it('cancel and retry; 404, 409 and the read-only token', async () => {
    await call('POST', '/api/v1/workflows', { id: 'wf-2', nodes: [{ id: 'a', type: 'never-run' }, { id: 'b', type: 'x', dependsOn: ['a'] }] });
    expect((await call('POST', '/api/v1/workflows/wf-2/cancel', undefined, READ)).statusCode).toBe(403);
    const cancelled = await call('POST', '/api/v1/workflows/wf-2/cancel');
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json()).toMatchObject({ state: 'cancelled', counts: { cancelled: 2 } });
    expect((await call('POST', '/api/v1/workflows/wf-2/cancel')).json().error.code).toBe('TL_INVALID_STATE');
    const retried = await call('POST', '/api/v1/workflows/wf-2/retry');
    expect(retried.json()).toMatchObject({ state: 'running', nodes: [{ id: 'a', state: 'queued' }, { id: 'b', state: 'pending' }] });
    expect((await call('POST', '/api/v1/workflows/wf-2/retry')).statusCode).toBe(409);
    const missing = await call('GET', '/api/v1/workflows/nope', undefined, READ);
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe('TL_WORKFLOW_NOT_FOUND');
    expect((await call('POST', '/api/v1/workflows/nope/retry')).statusCode).toBe(404);
    expect((await call('POST', '/api/v1/workflows', { id: 'wf-2', nodes: [{ id: 'a', type: 'x' }] })).statusCode).toBe(409);
  });

  it('bad graphs are 422 naming the node, bad shapes 400 naming the field; nothing is stored', async () => {
    const cases: Array<[unknown, number, string]> = [
      [{ nodes: [{ id: 'a', type: 'x', dependsOn: ['ghost'] }] }, 422, 'node "a" depends on "ghost"'],
      [{ nodes: [{ id: 'a', type: 'x', dependsOn: ['b'] }, { id: 'b', type: 'x', dependsOn: ['a'] }] }, 422, 'cycle'],
      [{ nodes: [{ id: 'a', type: 'x' }, { id: 'a', type: 'y' }] }, 422, 'node id "a" is used twice'],
      [{ nodes: [{ id: 'q', type: 'x', queue: 'no spaces' }] }, 422, 'node "q": invalid queue'],
      [{ nodes: [{ id: 'a', type: 'x', timeout: -1 }] }, 422, 'node "a"'],
      [{ nodes: Array.from({ length: 10_001 }, (_, i) => ({ id: `n${i}`, type: 'x' })) }, 422, 'at most 10,000 nodes'],
      [{ nodes: [] }, 400, 'nodes'],
      [{ nodes: [{ id: 'a' }] }, 400, 'type'],
      [{ nodes: [{ id: 'a', type: 'x', color: 'red' }] }, 400, 'color'],
      [{ nodes: [{ id: 'a', type: 'x' }], onFinish: { type: 'y', dependsOn: ['a'] } }, 400, 'dependsOn'],
      [{ nodes: [{ id: 'a', type: 'x' }], onFinish: { type: 'y', payload: { a: 1 } } }, 400, 'payload'],
      [{ nodes: [{ id: '\ud800', type: 'x' }] }, 422, 'no lone surrogate'],
      ['not an object', 400, 'body'],
    ];
    for (const [body, status, message] of cases) {
      const response = await call('POST', '/api/v1/workflows', body);
      expect(response.statusCode, `${JSON.stringify(body).slice(0, 80)} → ${response.body}`).toBe(status);
      expect(response.json().error.message).toContain(message);
    }
    expect((await call('GET', '/api/v1/workflows', undefined, READ)).json().workflows).toEqual([]);
    expect((await call('GET', '/api/v1/workflows?state=nope', undefined, READ)).statusCode).toBe(400);
    expect((await call('GET', '/api/v1/workflows?cursor=junk', undefined, READ)).statusCode).toBe(400);
  });

  it('a cursor that no page of the workflow list returned → 400 speaking of the workflow list', async () => {
    const junk = await call('GET', '/api/v1/workflows?cursor=xyz', undefined, READ);
    expect(junk.statusCode).toBe(400);
    expect(junk.json().error).toEqual({
      code: 'TL_INVALID_ARGUMENT',
      message: 'invalid cursor "xyz": cursor must be a value returned as next_cursor (nextCursor) by a previous page of the workflow list (all states); leave it out for the first page',
    });
    // A real cursor of one state's list is not one of another's.
    for (const id of ['wf-c1', 'wf-c2']) await call('POST', '/api/v1/workflows', { id, nodes: [{ id: 'a', type: 'never-run' }] });
    const page = (await call('GET', '/api/v1/workflows?state=running&limit=1', undefined, READ)).json();
    expect(page.next_cursor).toEqual(expect.any(String));
    expect((await call('GET', `/api/v1/workflows?state=running&limit=1&cursor=${encodeURIComponent(page.next_cursor)}`, undefined, READ)).statusCode).toBe(200);
    const other = await call('GET', `/api/v1/workflows?state=failed&cursor=${encodeURIComponent(page.next_cursor)}`, undefined, READ);
    expect(other.statusCode).toBe(400);
    expect(other.json().error.message).toContain('by a previous page of the workflow list in state failed;');
    expect(other.json().error.message).not.toMatch(/queue|tasks/);
  });

  it('describes the routes in the OpenAPI document', async () => {
    const doc = (await api.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    for (const path of ['/api/v1/workflows', '/api/v1/workflows/{id}', '/api/v1/workflows/{id}/cancel', '/api/v1/workflows/{id}/retry']) expect(doc.paths[path]).toBeDefined();
  });
});
