/** Task list cursors over HTTP: a cursor no previous page returned is a 400 naming it — never a 500, never page one again. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORES } from '../helpers/stores.js';
import { startApi, type TestApi } from './helpers.js';

interface Page {
  tasks: { id: string }[];
  next_cursor: string | null;
}

describe.each(STORES)('task list cursors on %s', (_name, open) => {
  let api: TestApi;
  let cursor: string;
  const list = (query: string) => api.app.inject({ method: 'GET', url: `/api/v1/queues/mail/tasks?${query}` });

  beforeAll(async () => {
    api = await startApi(open);
    for (let i = 0; i < 3; i++) {
      const res = await api.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { type: 'send', queue: 'mail', payload: { i } } });
      expect(res.statusCode).toBe(201);
    }
    await api.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { type: 'send', queue: 'other' } });
    cursor = (await list('state=queued&limit=1')).json<Page>().next_cursor!;
    expect(cursor).toEqual(expect.any(String));
  });

  afterAll(async () => {
    await api.close();
  });

  it.each([
    ['a number past any offset', '99999999999999999999'],
    ['letters', 'zzz'],
    ['a negative number', '-1'],
    ['a fraction', '1.5'],
    ['an offset', '1'],
    ['an empty string', ''],
    ['500 characters', 'x'.repeat(500)],
  ])('%s → 400 TL_INVALID_ARGUMENT naming the cursor', async (_case, value) => {
    const res = await list(`state=queued&limit=1&cursor=${encodeURIComponent(value)}`);
    expect(res.statusCode).toBe(400);
    const { error } = res.json<{ error: { code: string; message: string } }>();
    expect(error.code).toBe('TL_INVALID_ARGUMENT');
    expect(error.message).toMatch(/cursor must be a value returned as next_cursor/);
  });

  it('a cursor of another state or another queue → 400', async () => {
    expect((await list(`state=scheduled&limit=1&cursor=${encodeURIComponent(cursor)}`)).statusCode).toBe(400);
    const other = await api.app.inject({ method: 'GET', url: `/api/v1/queues/other/tasks?state=queued&limit=1&cursor=${encodeURIComponent(cursor)}` });
    expect(other.statusCode).toBe(400);
    expect(other.json<{ error: { code: string } }>().error.code).toBe('TL_INVALID_ARGUMENT');
  });

  it('a cursor longer than the API takes → 400 TL_INVALID_REQUEST', async () => {
    const res = await list(`state=queued&cursor=${'x'.repeat(501)}`);
    expect(res.statusCode).toBe(400);
    expect(res.json<{ error: { code: string } }>().error.code).toBe('TL_INVALID_REQUEST');
  });

  it('the cursors it returns page through every task once', async () => {
    const ids: string[] = [];
    let next: string | null = null;
    do {
      const query: string = `state=queued&limit=1${next === null ? '' : `&cursor=${encodeURIComponent(next)}`}`;
      const res = await list(query);
      expect(res.statusCode).toBe(200);
      const page = res.json<Page>();
      ids.push(...page.tasks.map((t) => t.id));
      next = page.next_cursor;
    } while (next !== null && ids.length < 10);
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(3);
  });
});
