import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STORES } from '../helpers/stores.js';
import { startApi, type TestApi } from './helpers.js';

interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

/** Opens an SSE stream and collects parsed events. */
function openStream(port: number, path: string): Promise<{ events: SseEvent[]; response: IncomingMessage; close: () => void; until: (n: (e: SseEvent[]) => boolean) => Promise<void> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { accept: 'text/event-stream' } }, (response) => {
      const events: SseEvent[] = [];
      const waiters: (() => void)[] = [];
      let buffer = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        buffer += chunk;
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event && data) events.push({ event, data: JSON.parse(data) as Record<string, unknown> });
        }
        for (const w of waiters.splice(0)) w();
      });
      response.on('error', () => undefined);
      const until = (predicate: (e: SseEvent[]) => boolean) =>
        new Promise<void>((ok, fail) => {
          const timer = setTimeout(() => fail(new Error(`events so far: ${JSON.stringify(events)}`)), 8000);
          const check = () => {
            if (predicate(events)) {
              clearTimeout(timer);
              ok();
            } else waiters.push(check);
          };
          check();
        });
      resolve({ events, response, close: () => req.destroy(), until });
    });
    req.on('error', reject);
    req.end();
  });
}

describe.each(STORES)('SSE events on %s', (_name, open) => {
  let api: TestApi;
  let port = 0;
  beforeEach(async () => {
    api = await startApi(open, { sse: { heartbeatMs: 60_000 } });
    await api.app.listen({ port: 0, host: '127.0.0.1' });
    port = (api.app.server.address() as AddressInfo).port;
  });
  afterEach(async () => {
    await api.close();
  });

  it('HEAD /api/v1/events answers at once with the headers of the stream and no body', async () => {
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/api/v1/events', method: 'HEAD' }, resolve);
      req.setTimeout(5_000, () => req.destroy(new Error('HEAD /api/v1/events sent no headers within 5 s')));
      req.on('error', reject);
      req.end();
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    const body = await new Promise<string>((resolve) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve(text));
    });
    expect(body).toBe('');
  });

  it('a client receives the events of a task it enqueued, in order, filtered by queue', async () => {
    const stream = await openStream(port, '/api/v1/events?queue=sse');
    expect(stream.response.headers['content-type']).toContain('text/event-stream');
    await api.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { type: 'other', queue: 'elsewhere' } });
    const id = (await api.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { type: 'sse:task', queue: 'sse' } })).json<{ task_id: string }>().task_id;
    const worker = await api.store.reopen();
    const [claim] = await worker.claim('w', [{ queue: 'sse', count: 1 }], 30_000);
    const task = claim.tasks[0];
    const attempt = { attempt: 1, startedAt: task.startedAt, finishedAt: task.startedAt + 1, outcome: 'failed' as const, error: 'boom', stack: null, workerId: 'w' };
    await worker.ack([{ kind: 'retry', id, queue: 'sse', token: task.token, error: 'boom', delay: 0, consumed: true, attempt }]);
    const [again] = await worker.claim('w', [{ queue: 'sse', count: 1 }], 30_000);
    const second = again.tasks[0];
    await worker.ack([{ kind: 'complete', id, queue: 'sse', token: second.token, result: '"ok"', attempt: { ...attempt, attempt: 2, outcome: 'completed', error: null } }]);
    await stream.until((e) => e.some((x) => x.event === 'task.completed'));
    stream.close();
    expect(stream.events.map((e) => e.event)).toEqual(['task.enqueued', 'task.started', 'task.retrying', 'task.started', 'task.completed']);
    expect(stream.events.every((e) => e.data.id === id && e.data.queue === 'sse' && e.data.type === 'sse:task')).toBe(true);
    expect(stream.events[3].data.attempt).toBe(2);
  });

  it('filters by type prefix and carries schedule events of this server', async () => {
    const stream = await openStream(port, '/api/v1/events?type=mail:*');
    await api.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { type: 'report:x' } });
    await api.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { type: 'mail:send' } });
    await stream.until((e) => e.length >= 1);
    expect(stream.events.map((e) => [e.event, e.data.type])).toEqual([['task.enqueued', 'mail:send']]);
    stream.close();
    const schedules = await openStream(port, '/api/v1/events?kinds=schedule.');
    await api.app.inject({ method: 'POST', url: '/api/v1/schedules', payload: { id: 'sse-s', cron: '0 0 * * *', task: { type: 'x' } } });
    await schedules.until((e) => e.length >= 1);
    expect(schedules.events[0]).toMatchObject({ event: 'schedule.created', data: { schedule: 'sse-s' } });
    schedules.close();
  });

  it('drops a client that does not read, instead of buffering without bound', async () => {
    await api.app.close();
    await api.store.cleanup();
    api = await startApi(open, { sse: { maxBufferBytes: 64 * 1024, heartbeatMs: 60_000 } });
    await api.app.listen({ port: 0, host: '127.0.0.1' });
    port = (api.app.server.address() as AddressInfo).port;
    const stream = await openStream(port, '/api/v1/events');
    stream.response.pause(); // a slow consumer: reads nothing
    const ended = new Promise<void>((resolve) => {
      stream.response.once('close', () => resolve());
      stream.response.once('aborted', () => resolve());
    });
    const big = 'x'.repeat(8000);
    for (let i = 0; i < 60; i++) api.hub.publish({ name: 'test.flood', queue: null, type: null, data: { i, big } });
    await ended;
    expect(api.hub.listenerCount).toBeLessThanOrEqual(2); // metrics' listener (and no stream)
    stream.close();
  });
});
