import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STORES } from '../helpers/stores.js';
import { startApi, type TestApi } from './helpers.js';

interface SearchBody {
  tasks: { id: string; type: string; queue: string; state: string }[];
  next_cursor: string | null;
  scanned: number;
  total: number;
}

describe.each(STORES)('GET /api/v1/tasks (search) on %s', (_name, open) => {
  let api: TestApi;
  beforeEach(async () => {
    api = await startApi(open);
  });
  afterEach(async () => {
    await api.close();
  });
  const get = (url: string) => api.app.inject({ method: 'GET', url });
  const search = (q: string, extra = '') => get(`/api/v1/tasks?q=${encodeURIComponent(q)}${extra}`);
  const enqueue = async (body: Record<string, unknown>) => (await api.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: body })).json<{ task_id: string }>().task_id;

  it('finds tasks across queues by payload, type and state, in the listing’s item shape', async () => {
    const ada = await enqueue({ type: 'email:deliver', payload: { user_id: 42, to: 'ada@example.com' }, queue: 'mail' });
    await enqueue({ type: 'email:deliver', payload: { user_id: '42' }, queue: 'mail' });
    const report = await enqueue({ type: 'report:build', payload: { user_id: 42 }, queue: 'reports', delay: 60_000 });
    const res = await search('payload.user_id:42');
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<SearchBody>();
    expect(body).toMatchObject({ next_cursor: null, scanned: 3, total: 3 });
    expect(body.tasks.map((t) => t.id).sort()).toEqual([ada, report].sort());
    const listed = (await get('/api/v1/queues/mail/tasks?state=queued')).json<{ tasks: { id: string }[] }>().tasks.find((t) => t.id === ada);
    expect(body.tasks.find((t) => t.id === ada)).toEqual(listed);
    expect((await search('type:report:build state:scheduled')).json<SearchBody>().tasks.map((t) => t.id)).toEqual([report]);
    expect((await search(`id:${ada}`)).json<SearchBody>()).toMatchObject({ tasks: [{ id: ada, queue: 'mail' }], scanned: 1, total: 1 });
    expect((await get('/api/v1/tasks')).json<SearchBody>()).toMatchObject({ total: 3, scanned: 3 });
  });

  it('pages with limit and cursor; POST /api/v1/tasks still enqueues on the same path', async () => {
    for (let i = 0; i < 5; i++) await enqueue({ type: 'page:t', payload: { i } });
    const first = (await search('page', '&limit=2')).json<SearchBody>();
    expect(first.tasks).toHaveLength(2);
    const seen = first.tasks.map((t) => t.id);
    let cursor = first.next_cursor;
    while (cursor !== null) {
      const page = (await search('page', `&limit=2&cursor=${encodeURIComponent(cursor)}`)).json<SearchBody>();
      seen.push(...page.tasks.map((t) => t.id));
      cursor = page.next_cursor;
    }
    expect(new Set(seen).size).toBe(5);
    const head = await api.app.inject({ method: 'HEAD', url: '/api/v1/tasks?q=page' });
    expect(head.statusCode).toBe(200);
    const paths = (await get('/openapi.json')).json<{ paths: Record<string, Record<string, unknown>> }>().paths;
    expect(Object.keys(paths['/api/v1/tasks']).sort()).toEqual(['get', 'post']);
  });

  it('refuses a bad term with a 400 naming the term and the accepted form, and a bad limit or cursor', async () => {
    const cases: [string, RegExp][] = [
      ['state:done', /query\.q term "state:done" has no state "done"; the accepted form is state:<state>, one of scheduled, queued/],
      ['after:yesterday', /term "after:yesterday" is not an ISO-8601 time; the accepted form is after:<ISO-8601 time>, e.g. after:2026-03-01/],
      ['type:', /term "type:" needs a value; the accepted form is type:<task type>/],
      ['queue:a queue:b', /term "queue:b" repeats queue: with another value/],
      ['payload..x:1', /term "payload\.\.x:1" has an empty key/],
      ['err:"unclosed', /query\.q has a double quote at character 5 that is not closed/],
    ];
    for (const [q, message] of cases) {
      const res = await search(q);
      expect(res.statusCode, q).toBe(400);
      expect(res.json(), q).toEqual({ error: { code: 'TL_INVALID_REQUEST', message: expect.stringMatching(message) } });
    }
    for (const extra of ['&limit=0', '&limit=1001', '&limit=x', '&cursor=junk', '&other=1']) {
      const res = await search('', extra);
      expect(res.statusCode, extra).toBe(400);
      expect(res.json<{ error: { code: string } }>().error.code, extra).toMatch(/^TL_INVALID_(REQUEST|ARGUMENT)$/);
    }
    const long = await search('x'.repeat(2001));
    expect(long.statusCode).toBe(400);
  });

  it('a read-only token may search', async () => {
    const guarded = await startApi(open, { apiToken: 'admin-token', readToken: 'read-token' });
    try {
      const res = await guarded.app.inject({ method: 'GET', url: '/api/v1/tasks?q=x', headers: { authorization: 'Bearer read-token' } });
      expect(res.statusCode).toBe(200);
      expect((await guarded.app.inject({ method: 'GET', url: '/api/v1/tasks?q=x' })).statusCode).toBe(401);
    } finally {
      await guarded.close();
    }
  });
});
