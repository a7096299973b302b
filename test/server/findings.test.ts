/**
 * The fuzz run's findings, each reproduced by hand as it was found, on both stores: the value is
 * refused with a 4xx in the error shape, nothing is stored, and every read still answers 200.
 * (Findings 5 and 6 — HEAD of the event stream and Fastify's own errors — are in sse.test.ts and
 * http-shape.test.ts; finding 4's cursors in cursors.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORES } from '../helpers/stores.js';
import { startApi, type TestApi } from './helpers.js';

describe.each(STORES)('the fuzz findings, by hand, on %s', (_name, open) => {
  let api: TestApi;

  beforeAll(async () => {
    api = await startApi(open);
  });
  afterAll(async () => {
    await api.close();
  });

  async function call(method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) {
    const response = await api.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
    return { status: response.statusCode, body: response.json<{ error?: { code: string; message: string } }>() };
  }

  /** Every listing a bad stored value once broke answers 200. */
  async function readsStillWork(): Promise<void> {
    for (const url of ['/api/v1/queues', '/api/v1/stats', '/api/v1/schedules', '/api/v1/queues/default/tasks?state=scheduled', '/api/v1/queues/default/tasks?state=queued']) {
      const { status, body } = await call('GET', url);
      expect(status, `${url}: ${JSON.stringify(body)}`).toBe(200);
    }
  }

  it.each([
    ['runAt 9007199254740991', { type: 'x', id: 'far', runAt: 9007199254740991 }, /^runAt must be a time \(epoch ms, a Date or an ISO-8601 text\) from \d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d, got 9007199254740991$/],
    ['delay 8640000000000001', { type: 'x', id: 'far', delay: 8640000000000001 }, /delay must be a whole number of milliseconds/],
    ['deadline 1e300', { type: 'x', id: 'far', deadline: 1e300 }, /deadline must be/],
    ['a lone surrogate in the type', { type: 'x\ud800', id: 'far' }, /invalid task type "x\\ud800"/],
    ['a lone surrogate in a header', { type: 'x', id: 'far', headers: { h: '\ud800' } }, /headers.h must be a string/],
    ['a 1 MB type', { type: 'x'.repeat(1_000_000), id: 'far' }, /^body.type must be .*got "x{100}"… \(1000000 characters\)$|^invalid task type "x{100}"… \(1000000 characters\)/],
  ])('1, 3, 7: POST /api/v1/tasks with %s is refused, quoting ≤ 100 characters, and stores nothing', async (_label, body, message) => {
    const { status, body: answer } = await call('POST', '/api/v1/tasks', body);
    expect(status).toBe(400);
    expect(answer.error?.message).toMatch(message);
    expect(answer.error!.message.length).toBeLessThan(400);
    expect((await call('GET', '/api/v1/tasks/far')).status).toBe(404);
    await readsStillWork();
  });

  it('1: a schedule with startAt or endAt 1e300 is refused (POST and PUT); so is pause until 1e300', async () => {
    const schedule = { id: 's', cron: '0 0 * * *', task: { type: 'x' } };
    for (const field of ['startAt', 'endAt']) {
      const created = await call('POST', '/api/v1/schedules', { ...schedule, [field]: 1e300 });
      expect(created.status).toBe(422);
      expect(created.body.error).toMatchObject({ code: 'TL_INVALID_SCHEDULE', message: expect.stringMatching(new RegExp(`^${field} must be a time .*, got 1e\\+300$`)) });
    }
    expect((await call('POST', '/api/v1/schedules', schedule)).status).toBe(201);
    expect((await call('PUT', '/api/v1/schedules/s', { ...schedule, endAt: 1e300 })).status).toBe(422);
    const pause = await call('POST', '/api/v1/schedules/s/pause', { until: 1e300 });
    expect(pause.status).toBe(422);
    expect(pause.body.error?.message).toMatch(/^pause until must be a time/);
    const stored = await call('GET', '/api/v1/schedules/s');
    expect(stored.status).toBe(200);
    expect(stored.body).toMatchObject({ end_at: null, paused: false, paused_until: null });
    await readsStillWork();
  });

  it.each(['constructor', '__proto__', '@every 999999999h', 'toString', 'hasOwnProperty'])('2: the cron text %j is a 422 for preview, create and PUT', async (cron) => {
    expect((await call('POST', '/api/v1/schedules/preview', { cron })).body.error?.code).toBe('TL_INVALID_CRON');
    expect((await call('POST', '/api/v1/schedules', { id: 'c', cron, task: { type: 'x' } })).status).toBe(422);
    expect((await call('PUT', '/api/v1/schedules/c', { cron, task: { type: 'x' } })).status).toBe(422);
    await readsStillWork();
  });

  it("3: a lone surrogate inside a schedule's task is refused, so no fire fails on it", async () => {
    const { status, body } = await call('POST', '/api/v1/schedules', { id: 'u', cron: '* * * * * *', task: { type: 'x', headers: { h: 'a\udc00' } } });
    expect(status).toBe(400);
    expect(body.error?.code).toBe('TL_INVALID_OPTION');
    expect((await call('POST', '/api/v1/schedules', { id: 'u', cron: '* * * * * *', task: { type: 'x', payload: { s: '\ud800' } } })).status).toBe(400);
    expect((await call('GET', '/api/v1/schedules/u')).status).toBe(404);
  });

  it.each(['99999999999999999999', 'zzz', '-1'])('4, 7: the cursor %j is a 400 naming the cursor', async (cursor) => {
    const { status, body } = await call('GET', `/api/v1/queues/default/tasks?state=queued&cursor=${cursor}`);
    expect(status).toBe(400);
    expect(body.error?.message).toMatch(/cursor/);
  });
});
