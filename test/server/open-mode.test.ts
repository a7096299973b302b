/**
 * Without a token the task center answers only requests addressed to a loopback name, and takes
 * changes only from its own origin (auth.ts openModeGuard): a page on another site must not read
 * or act through it by DNS rebinding or a cross-origin POST. With a token nothing changes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTaskCenter } from '../../src/server/task-center.js';
import { sqliteStore } from '../helpers/sqlite-store.js';
import { startApi, type TestApi } from './helpers.js';
import { rawExchange, requestText } from './raw-http.js';

describe('open mode (no token): Host and Origin', () => {
  let open: TestApi;
  let guarded: TestApi;
  beforeAll(async () => {
    open = await startApi(() => sqliteStore());
    guarded = await startApi(() => sqliteStore(), { apiToken: 'admin-token' });
  });
  afterAll(async () => {
    await open?.close();
    await guarded?.close();
  });

  const enqueue = (api: TestApi, headers: Record<string, string>) =>
    api.app.inject({ method: 'POST', url: '/api/v1/tasks', headers: { ...headers }, payload: { type: 'report' } });

  it('answers loopback Host names and addresses, with any port', async () => {
    for (const host of ['localhost', 'localhost:80', 'LOCALHOST:8080', '127.0.0.1', '127.0.0.1:7400', '127.1.2.3:1', '[::1]', '[::1]:7400']) {
      const res = await open.app.inject({ method: 'GET', url: '/api/v1/queues', headers: { host } });
      expect(res.statusCode, host).toBe(200);
    }
    expect((await enqueue(open, { host: '127.0.0.1:7400' })).statusCode).toBe(201);
  });

  it('refuses any other Host with a 403 naming it, on reads, writes, the dashboard and health alike', async () => {
    for (const host of ['evil.example', 'evil.example:80', '127.0.0.1.evil.example', '127.evil.example', 'localhost.evil.example', '192.168.1.20:7400', '[::2]:80', '0.0.0.0']) {
      for (const [method, url] of [['GET', '/api/v1/queues'], ['POST', '/api/v1/tasks'], ['GET', '/'], ['GET', '/healthz']] as const) {
        const res = await open.app.inject({ method, url, headers: { host }, ...(method === 'POST' ? { payload: { type: 'report' } } : {}) });
        expect(res.statusCode, `${method} ${url} Host ${host}`).toBe(403);
        expect(res.json()).toEqual({ error: { code: 'TL_FORBIDDEN', message: expect.stringContaining(`Host ${JSON.stringify(host)}`) } });
        expect(res.json<{ error: { message: string } }>().error.message).toMatch(/127\.0\.0\.1.*TASKLINE_API_TOKEN/);
      }
    }
    expect((await open.app.inject({ method: 'GET', url: '/api/v1/tasks?q=type:report', headers: { host: 'localhost' } })).json<{ tasks: unknown[] }>().tasks).toHaveLength(1);
  });

  it('refuses a change whose Origin is not its own; reads from another origin and changes without Origin pass', async () => {
    for (const origin of ['http://evil.example', 'http://localhost:3000', 'https://localhost', 'http://127.0.0.1:80', 'null', 'junk']) {
      const res = await enqueue(open, { host: 'localhost:80', origin });
      expect(res.statusCode, origin).toBe(403);
      expect(res.json()).toEqual({ error: { code: 'TL_FORBIDDEN', message: expect.stringContaining(`Origin ${JSON.stringify(origin)}`) } });
      for (const method of ['PUT', 'DELETE'] as const) {
        expect((await open.app.inject({ method, url: '/api/v1/schedules/x', headers: { host: 'localhost', origin } })).statusCode, `${method} ${origin}`).toBe(403);
      }
      // A read is answered (the Host check already keeps other sites' names out).
      expect((await open.app.inject({ method: 'GET', url: '/api/v1/queues', headers: { host: 'localhost', origin } })).statusCode).toBe(200);
    }
    for (const [host, origin] of [['localhost:80', 'http://localhost'], ['localhost', 'http://localhost:80'], ['127.0.0.1:7400', 'http://127.0.0.1:7400'], ['[::1]:7400', 'http://[::1]:7400']]) {
      expect((await enqueue(open, { host, origin })).statusCode, `${host} ${origin}`).toBe(201);
    }
    expect((await enqueue(open, { host: 'localhost' })).statusCode).toBe(201);
  });

  it('with a token configured, Host and Origin are not looked at', async () => {
    const auth = { authorization: 'Bearer admin-token' };
    expect((await guarded.app.inject({ method: 'GET', url: '/api/v1/queues', headers: { ...auth, host: 'tasks.example.com' } })).statusCode).toBe(200);
    expect((await enqueue(guarded, { ...auth, host: 'tasks.example.com', origin: 'https://elsewhere.example' })).statusCode).toBe(201);
    expect((await guarded.app.inject({ method: 'GET', url: '/api/v1/queues', headers: { host: 'tasks.example.com' } })).statusCode).toBe(401);
  });

  it('accepts the Host names it is told to (--insecure on an address), or every one', async () => {
    const lan = await startApi(() => sqliteStore(), { openHosts: ['192.168.1.20'] });
    const any = await startApi(() => sqliteStore(), { openHosts: 'any' });
    try {
      expect((await lan.app.inject({ method: 'GET', url: '/api/v1/queues', headers: { host: '192.168.1.20:7400' } })).statusCode).toBe(200);
      expect((await lan.app.inject({ method: 'GET', url: '/api/v1/queues', headers: { host: 'evil.example' } })).statusCode).toBe(403);
      expect((await any.app.inject({ method: 'GET', url: '/api/v1/queues', headers: { host: 'tasks.lan' } })).statusCode).toBe(200);
      expect((await enqueue(any, { host: 'tasks.lan', origin: 'http://evil.example' })).statusCode).toBe(403);
      expect((await enqueue(any, { host: 'tasks.lan:7400', origin: 'http://tasks.lan:7400' })).statusCode).toBe(201);
    } finally {
      await lan.close();
      await any.close();
    }
  });

  it('over HTTP: the task center refuses a rebound name; with --insecure on every interface it answers any Host', async () => {
    for (const insecure of [false, true]) {
      const store = await sqliteStore();
      const center = await startTaskCenter({ backend: store.backend, port: 0, ...(insecure ? { host: '0.0.0.0', insecure: true } : {}) });
      try {
        const port = Number(new URL(center.url).port);
        const rebound = await rawExchange(port, requestText('GET', '/api/v1/queues', { headers: { host: `rebind.example:${port}` } }));
        expect(rebound.status, `insecure ${insecure}`).toBe(insecure ? 200 : 403);
        expect((await rawExchange(port, requestText('GET', '/api/v1/queues', { headers: { host: `127.0.0.1:${port}` } }))).status).toBe(200);
      } finally {
        await center.stop();
        await store.cleanup();
      }
    }
  });
});
