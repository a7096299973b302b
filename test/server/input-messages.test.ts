/**
 * A refused request says which field is wrong and what it accepts — never zod's "Invalid
 * input" — and stays short however large the bad value.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqliteStore } from '../helpers/sqlite-store.js';
import { startApi, type TestApi } from './helpers.js';

const json = (value: unknown) => JSON.stringify(value);
const INSTANT = 'epoch milliseconds (a whole number >= 0) or an ISO-8601 time with a UTC offset, e.g. 2026-03-01T09:00:00Z';
const TASK_FIELDS = 'type, payload, queue, id, maxRetries, timeout, deadline, delay, runAt, uniqueFor, uniqueKey, retention, headers, group';
const TYPE_REQUIRED = 'body.type is required: a task type string of 1–200 characters';

interface Case {
  name: string;
  method: 'GET' | 'POST' | 'PATCH';
  url: string;
  body?: string;
  message: string;
}

const CASES: Case[] = [
  { name: 'no type', method: 'POST', url: '/api/v1/tasks', body: json({ payload: { to: 'a@b.c' } }), message: TYPE_REQUIRED },
  { name: 'an empty object', method: 'POST', url: '/api/v1/tasks', body: '{}', message: TYPE_REQUIRED },
  { name: 'a delay as text', method: 'POST', url: '/api/v1/tasks', body: json({ type: 't', delay: '5m' }), message: 'body.delay must be a whole number of milliseconds >= 0, got "5m"' },
  { name: 'a negative delay', method: 'POST', url: '/api/v1/tasks', body: json({ type: 't', delay: -5 }), message: 'body.delay must be a whole number of milliseconds >= 0, got -5' },
  { name: 'a fractional timeout', method: 'POST', url: '/api/v1/tasks', body: json({ type: 't', timeout: 1.5 }), message: 'body.timeout must be a whole number of milliseconds > 0, got 1.5' },
  { name: 'maxRetries as a word', method: 'POST', url: '/api/v1/tasks', body: json({ type: 't', maxRetries: 'three' }), message: 'body.maxRetries must be a whole number from 0 to 1000, got "three"' },
  { name: 'a runAt that is no time', method: 'POST', url: '/api/v1/tasks', body: json({ type: 't', runAt: 'tomorrow' }), message: `body.runAt must be ${INSTANT}, got "tomorrow"` },
  { name: 'a header that is not a string', method: 'POST', url: '/api/v1/tasks', body: json({ type: 't', headers: { trace: 7 } }), message: 'body.headers.trace must be a string, got 7' },
  { name: 'an unknown field', method: 'POST', url: '/api/v1/tasks', body: json({ type: 't', priority: 9 }), message: `body.priority is not an accepted field; accepted: ${TASK_FIELDS}` },
  {
    name: 'two unknown fields',
    method: 'POST',
    url: '/api/v1/tasks',
    body: json({ type: 't', priority: 9, colour: 'red' }),
    message: `body.priority, body.colour are not accepted fields; accepted: ${TASK_FIELDS}`,
  },
  {
    name: 'several problems: the first three, then a count',
    method: 'POST',
    url: '/api/v1/tasks',
    body: json({ type: 't', delay: 'x', timeout: 'y', maxRetries: 'z', retention: -1 }),
    message:
      'body.maxRetries must be a whole number from 0 to 1000, got "z"; body.timeout must be a whole number of milliseconds > 0, got "y"; ' +
      'body.delay must be a whole number of milliseconds >= 0, got "x"; and 1 more',
  },
  // The batch form is decided by `tasks`: its errors are the batch's, item by item.
  { name: 'an empty batch', method: 'POST', url: '/api/v1/tasks', body: json({ tasks: [] }), message: 'body.tasks must be a list of 1–1000 tasks {type, payload?, queue?, …}, got []' },
  {
    name: 'a batch with a bad item',
    method: 'POST',
    url: '/api/v1/tasks',
    body: json({ tasks: [{ type: 't' }, { type: 't', delay: '5m' }, { payload: 1 }] }),
    message: 'body.tasks[1].delay must be a whole number of milliseconds >= 0, got "5m"; body.tasks[2].type is required: a task type string of 1–200 characters',
  },
  {
    name: 'tasks beside single-task fields',
    method: 'POST',
    url: '/api/v1/tasks',
    body: json({ tasks: [{ type: 't' }], type: 't' }),
    message: 'body.type is not an accepted field; accepted: tasks',
  },
  { name: 'a list instead of an object', method: 'POST', url: '/api/v1/tasks', body: '[1,2]', message: 'body must be a task {type, payload?, queue?, …} or a batch {tasks: [task, …]}, got [1,2]' },
  { name: 'no body', method: 'POST', url: '/api/v1/tasks', body: '', message: 'body is required: a task {type, payload?, queue?, …} or a batch {tasks: [task, …]}' },
  { name: 'a query option of the wrong form', method: 'POST', url: '/api/v1/tasks/t?delay=5m', body: '{}', message: 'query.delay must be a whole number of milliseconds >= 0, got "5m"' },
  {
    name: 'an unknown query option',
    method: 'POST',
    url: '/api/v1/tasks/t?colour=red',
    body: '{}',
    message: 'query.colour is not an accepted parameter; accepted: queue, id, maxRetries, timeout, deadline, delay, runAt, uniqueFor, uniqueKey, retention, group',
  },
  { name: 'a wait that is not a number', method: 'GET', url: '/api/v1/tasks/x?wait=soon', message: 'query.wait must be a number of seconds from 0 to 300, got "soon"' },
  { name: 'no state', method: 'GET', url: '/api/v1/queues/default/tasks', message: 'query.state is required: one of scheduled, queued, running, retrying, completed, dead, cancelled' },
  { name: 'an unknown bulk state', method: 'POST', url: '/api/v1/queues/default/tasks/zombie/run-all', message: 'path.state must be one of scheduled, queued, retrying, completed, dead, cancelled, got "zombie"' },
  { name: 'a bulk run of a state run never takes', method: 'POST', url: '/api/v1/queues/default/tasks/completed/run-all', message: 'path.state must be dead, scheduled, retrying or cancelled for run-all, got "completed"' },
  { name: 'a bulk archive of a finished state', method: 'POST', url: '/api/v1/queues/default/tasks/dead/archive-all', message: 'path.state must be queued, scheduled or retrying for archive-all, got "dead"' },
  {
    name: 'a keep bound that is not whole',
    method: 'PATCH',
    url: '/api/v1/queues/mail/keep',
    body: json({ completed: 1.5 }),
    message: 'body.completed must be a whole number of tasks from 0 to 1000000000, or null for no bound, got 1.5',
  },
  { name: 'a schedule without task', method: 'POST', url: '/api/v1/schedules', body: json({ id: 's1', cron: '* * * * *' }), message: 'body.task is required: an object {type, payload?, queue?, maxRetries?, timeout?, retention?, …}' },
  {
    name: 'an unknown overlap policy',
    method: 'POST',
    url: '/api/v1/schedules',
    body: json({ id: 's1', cron: '* * * * *', overlap: 'sometimes', task: { type: 't' } }),
    message: 'body.overlap must be one of skip, allow, bufferOne, cancelPrevious, got "sometimes"',
  },
  {
    name: 'a jitter of the wrong kind',
    method: 'POST',
    url: '/api/v1/schedules',
    body: json({ id: 's1', cron: '* * * * *', jitter: true, task: { type: 't' } }),
    message: 'body.jitter must be a whole number of milliseconds >= 0 or a duration such as "90s", "5m", "1h30m", got true',
  },
  { name: 'a backfill from no time', method: 'POST', url: '/api/v1/schedules/s1/backfill', body: json({ from: 'yesterday', to: 0 }), message: `body.from must be ${INSTANT}, got "yesterday"` },
  { name: 'a pause note that is a number', method: 'POST', url: '/api/v1/schedules/s1/pause', body: json({ note: 5 }), message: 'body.note must be a string of at most 1000 characters or null, got 5' },
];

describe('validation messages name the field and the accepted form', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi(() => sqliteStore());
  });
  afterAll(async () => {
    await api.close();
  });
  const send = (method: Case['method'], url: string, body?: string) =>
    api.app.inject({ method, url, ...(body === undefined ? {} : { payload: body, headers: { 'content-type': 'application/json' } }) });

  it.each(CASES)('$name', async ({ method, url, body, message }) => {
    const response = await send(method, url, body);
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json()).toEqual({ error: { code: 'TL_INVALID_REQUEST', message } });
  });

  it('a 1 MB bad value is quoted to 100 characters', async () => {
    const response = await send('POST', '/api/v1/tasks', json({ type: 't', delay: 'd'.repeat(1_000_000) }));
    expect(response.statusCode).toBe(400);
    const { message } = response.json<{ error: { message: string } }>().error;
    expect(message).toBe(`body.delay must be a whole number of milliseconds >= 0, got "${'d'.repeat(100)}"… (1000000 characters)`);
  });

  it('a 1 MB object where a string belongs is cut too', async () => {
    const response = await send('POST', '/api/v1/tasks', json({ type: 't', queue: { blob: 'q'.repeat(1_000_000) } }));
    const { message } = response.json<{ error: { message: string } }>().error;
    expect(message).toBe(`body.queue must be a string, got ${`{"blob":"${'q'.repeat(91)}`}…`);
  });

  it('huge and many unknown field names are cut and counted', async () => {
    const fields = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`${'k'.repeat(300)}${i}`, i]));
    const response = await send('POST', '/api/v1/tasks', json({ type: 't', ...fields }));
    const { message } = response.json<{ error: { message: string } }>().error;
    const name = `body.${'k'.repeat(50)}…`;
    expect(message).toBe(`${[name, name, name, name, name].join(', ')} and 2995 more are not accepted fields; accepted: ${TASK_FIELDS}`);
  });

  it('a malformed 1 MB JSON body gives a short message', async () => {
    const response = await send('POST', '/api/v1/tasks', `{"type": "t", "payload": ${'9'.repeat(1_000_000)}x}`);
    expect(response.statusCode).toBe(400);
    const { code, message } = response.json<{ error: { code: string; message: string } }>().error;
    expect(code).toBe('TL_INVALID_REQUEST');
    expect(message).toMatch(/^malformed JSON body: /);
    expect(message.length).toBeLessThanOrEqual(300);
  });
});
