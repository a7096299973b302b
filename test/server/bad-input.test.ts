/** Every route answers bad input with a 4xx and a stable code — never a 500. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORES } from '../helpers/stores.js';
import { startApi, type TestApi } from './helpers.js';

interface Case {
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  body?: string;
  contentType?: string;
  status: number;
  code: string;
}

const big = JSON.stringify({ type: 't', payload: { blob: 'x'.repeat(1_200_000) } });
const json = (value: unknown) => JSON.stringify(value);

const CASES: Case[] = [
  { name: 'malformed JSON', method: 'POST', url: '/api/v1/tasks', body: '{"type": "t",', status: 400, code: 'TL_INVALID_REQUEST' },
  { name: 'JSON that is not an object', method: 'POST', url: '/api/v1/tasks', body: '[1,2]', status: 400, code: 'TL_INVALID_REQUEST' },
  { name: 'missing type', method: 'POST', url: '/api/v1/tasks', body: json({ payload: {} }), status: 400, code: 'TL_INVALID_REQUEST' },
  { name: 'missing body', method: 'POST', url: '/api/v1/tasks', body: '', status: 400, code: 'TL_INVALID_REQUEST' },
  { name: 'wrong type of maxRetries', method: 'POST', url: '/api/v1/tasks', body: json({ type: 't', maxRetries: 'three' }), status: 400, code: 'TL_INVALID_REQUEST' },
  { name: 'negative delay', method: 'POST', url: '/api/v1/tasks', body: json({ type: 't', delay: -5 }), status: 400, code: 'TL_INVALID_REQUEST' },
  { name: 'unknown option', method: 'POST', url: '/api/v1/tasks', body: json({ type: 't', priority: 9 }), status: 400, code: 'TL_INVALID_REQUEST' },
  { name: 'invalid queue name', method: 'POST', url: '/api/v1/tasks', body: json({ type: 't', queue: 'no spaces' }), status: 400, code: 'TL_INVALID_ARGUMENT' },
  { name: 'id with odd characters', method: 'POST', url: '/api/v1/tasks', body: json({ type: 't', id: 'a b<c>' }), status: 400, code: 'TL_INVALID_ARGUMENT' },
  { name: 'type with a control character', method: 'POST', url: '/api/v1/tasks', body: json({ type: 'a\u0001b' }), status: 400, code: 'TL_INVALID_ARGUMENT' },
  { name: 'oversized body', method: 'POST', url: '/api/v1/tasks', body: big, status: 413, code: 'TL_PAYLOAD_TOO_LARGE' },
  { name: 'empty batch', method: 'POST', url: '/api/v1/tasks', body: json({ tasks: [] }), status: 400, code: 'TL_INVALID_REQUEST' },
  { name: 'text body', method: 'POST', url: '/api/v1/tasks', body: 'type=t', contentType: 'text/plain', status: 400, code: 'TL_INVALID_REQUEST' },
  { name: 'query option of a wrong type', method: 'POST', url: '/api/v1/tasks/t?maxRetries=many', body: '{}', status: 400, code: 'TL_INVALID_REQUEST' },
  { name: 'unknown query option', method: 'POST', url: '/api/v1/tasks/t?colour=red', body: '{}', status: 400, code: 'TL_INVALID_REQUEST' },
  { name: 'task id with odd characters', method: 'GET', url: '/api/v1/tasks/%3Cscript%3E', status: 400, code: 'TL_INVALID_ARGUMENT' },
  { name: 'unicode task id', method: 'GET', url: `/api/v1/tasks/${encodeURIComponent('tâche-😀')}`, status: 400, code: 'TL_INVALID_ARGUMENT' },
  { name: 'unknown task', method: 'GET', url: '/api/v1/tasks/no-such-task', status: 404, code: 'TL_TASK_NOT_FOUND' },
  { name: 'wait that is not a number', method: 'GET', url: '/api/v1/tasks/x?wait=soon', status: 400, code: 'TL_INVALID_REQUEST' },
  { name: 'wait too long', method: 'GET', url: '/api/v1/tasks/x?wait=100000', status: 400, code: 'TL_INVALID_REQUEST' },
  { name: 'run an unknown task', method: 'POST', url: '/api/v1/tasks/nope/run', status: 404, code: 'TL_TASK_NOT_FOUND' },
  { name: 'cancel an unknown task', method: 'POST', url: '/api/v1/tasks/nope/cancel', status: 404, code: 'TL_TASK_NOT_FOUND' },
  { name: 'delete an unknown task', method: 'DELETE', url: '/api/v1/tasks/nope', status: 404, code: 'TL_TASK_NOT_FOUND' },
  { name: 'unknown state', method: 'GET', url: '/api/v1/queues/default/tasks?state=sleeping', status: 400, code: 'TL_INVALID_REQUEST' },
  { name: 'missing state', method: 'GET', url: '/api/v1/queues/default/tasks', status: 400, code: 'TL_INVALID_REQUEST' },
  { name: 'limit out of range', method: 'GET', url: '/api/v1/queues/default/tasks?state=queued&limit=0', status: 400, code: 'TL_INVALID_REQUEST' },
  { name: 'invalid queue in path', method: 'POST', url: '/api/v1/queues/bad%20queue/pause', status: 400, code: 'TL_INVALID_ARGUMENT' },
  { name: 'unknown bulk state', method: 'POST', url: '/api/v1/queues/default/tasks/zombie/run-all', status: 400, code: 'TL_INVALID_REQUEST' },
  { name: 'bulk on running', method: 'POST', url: '/api/v1/queues/default/tasks/running/delete-all', status: 400, code: 'TL_INVALID_REQUEST' },
  { name: 'invalid cron', method: 'POST', url: '/api/v1/schedules', body: json({ id: 's1', cron: 'every tuesday', task: { type: 't' } }), status: 422, code: 'TL_INVALID_CRON' },
  { name: 'invalid time zone', method: 'POST', url: '/api/v1/schedules', body: json({ id: 's1', cron: '* * * * *', timezone: 'Mars/Olympus', task: { type: 't' } }), status: 422, code: 'TL_INVALID_TIMEZONE' },
  { name: 'schedule without task', method: 'POST', url: '/api/v1/schedules', body: json({ id: 's1', cron: '* * * * *' }), status: 400, code: 'TL_INVALID_REQUEST' },
  { name: 'schedule id with odd characters', method: 'POST', url: '/api/v1/schedules', body: json({ id: 'a/b c', cron: '* * * * *', task: { type: 't' } }), status: 422, code: 'TL_INVALID_SCHEDULE' },
  { name: 'unicode schedule id', method: 'GET', url: `/api/v1/schedules/${encodeURIComponent('rapport-été')}`, status: 422, code: 'TL_INVALID_SCHEDULE' },
  { name: 'unknown overlap policy', method: 'POST', url: '/api/v1/schedules', body: json({ id: 's1', cron: '* * * * *', overlap: 'sometimes', task: { type: 't' } }), status: 400, code: 'TL_INVALID_REQUEST' },
  { name: 'unknown schedule', method: 'GET', url: '/api/v1/schedules/nope', status: 404, code: 'TL_SCHEDULE_NOT_FOUND' },
  { name: 'trigger an unknown schedule', method: 'POST', url: '/api/v1/schedules/nope/trigger', status: 404, code: 'TL_SCHEDULE_NOT_FOUND' },
  { name: 'preview with invalid cron', method: 'POST', url: '/api/v1/schedules/preview', body: json({ cron: '61 * * * *' }), status: 422, code: 'TL_INVALID_CRON' },
  { name: 'preview with invalid time zone', method: 'POST', url: '/api/v1/schedules/preview', body: json({ cron: '* * * * *', timezone: 'Nowhere/Town' }), status: 422, code: 'TL_INVALID_TIMEZONE' },
  { name: 'preview count too large', method: 'POST', url: '/api/v1/schedules/preview', body: json({ cron: '* * * * *', count: 5000 }), status: 400, code: 'TL_INVALID_REQUEST' },
  { name: 'backfill with bad times', method: 'POST', url: '/api/v1/schedules/nope/backfill', body: json({ from: 'yesterday', to: 'today' }), status: 400, code: 'TL_INVALID_REQUEST' },
  { name: 'fires limit out of range', method: 'GET', url: '/api/v1/schedules/nope/fires?limit=99999', status: 400, code: 'TL_INVALID_REQUEST' },
  { name: 'events with an unknown filter', method: 'GET', url: '/api/v1/events?colour=red', status: 400, code: 'TL_INVALID_REQUEST' },
  { name: 'unknown route', method: 'GET', url: '/api/v1/nothing', status: 404, code: 'TL_NOT_FOUND' },
];

describe.each(STORES)('bad input on %s', (_name, open) => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi(open);
  });
  afterAll(async () => {
    await api.close();
  });

  it.each(CASES)('$name → $status $code', async ({ method, url, body, contentType, status, code }) => {
    const res = await api.app.inject({
      method,
      url,
      ...(body === undefined ? {} : { payload: body, headers: { 'content-type': contentType ?? 'application/json' } }),
    });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(status);
    const parsed = res.json<{ error: { code: string; message: string } }>();
    expect(parsed.error.code).toBe(code);
    expect(parsed.error.message.length).toBeGreaterThan(0);
  });
});
