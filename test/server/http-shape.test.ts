/**
 * Every door holds: whatever a client sends, on a real listening server, the answer is
 * `{"error":{"code":"TL_…","message":"…"}}` with a fitting status — Fastify's own errors (a bad
 * %-escape, a parameter too long, a body too large or not JSON), no route (404) or a wrong
 * method (405 with Allow), and what Node's HTTP parser refuses before Fastify (unknown method,
 * headers too large, a broken request line), written to the socket and closed. HEAD answers
 * on every GET route.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORES } from '../helpers/stores.js';
import { sqliteStore } from '../helpers/sqlite-store.js';
import { startApi, type TestApi } from './helpers.js';
import { rawExchange, requestText, type RawResponse } from './raw-http.js';

/** Checks the answer is the error shape with this status and code; returns the message. */
function expectError(response: RawResponse, status: number, code: string): string {
  expect(response.status, response.body.slice(0, 300)).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  expect(Number(response.headers['content-length'])).toBe(Buffer.byteLength(response.body));
  const parsed = JSON.parse(response.body) as { error: { code: string; message: string } };
  expect(Object.keys(parsed)).toEqual(['error']);
  expect(Object.keys(parsed.error).sort()).toEqual(['code', 'message']);
  expect(parsed.error.code).toBe(code);
  expect(parsed.error.message.length).toBeGreaterThan(0);
  expect(parsed.error.message.length).toBeLessThanOrEqual(300);
  return parsed.error.message;
}

describe('every door answers in the error shape (real socket)', () => {
  let api: TestApi;
  let port = 0;
  beforeAll(async () => {
    api = await startApi(() => sqliteStore());
    await api.app.listen({ port: 0, host: '127.0.0.1' });
    port = (api.app.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await api.close();
  });
  const send = (method: string, path: string, options?: Parameters<typeof requestText>[2]) => rawExchange(port, requestText(method, path, options));

  describe("Fastify's own errors", () => {
    it('a malformed %-escape in the path → 400 naming the path', async () => {
      const message = expectError(await send('GET', '/api/v1/tasks/%zz'), 400, 'TL_INVALID_REQUEST');
      expect(message).toBe('the URL path /api/v1/tasks/%zz has a malformed %-escape: write % as %25 and other bytes as %XX');
    });

    it('a malformed %-escape in a long path → the path is cut in the message', async () => {
      const message = expectError(await send('GET', `/api/v1/nope/%zz${'x'.repeat(8000)}`), 400, 'TL_INVALID_REQUEST');
      expect(message).toContain('/api/v1/nope/%zzxxx');
      expect(message).toContain('…');
    });

    it('a path parameter over the router limit → 414', async () => {
      const message = expectError(await send('GET', `/api/v1/tasks/${'a'.repeat(501)}`), 414, 'TL_URI_TOO_LONG');
      expect(message).toBe('a segment of the URL path is longer than 500 characters, the longest this server takes');
      expectError(await send('GET', `/api/v1/queues/${'q'.repeat(600)}/tasks?state=queued`), 414, 'TL_URI_TOO_LONG');
    });

    it('a body over the limit → 413, refused on its Content-Length before it is read', async () => {
      const response = await rawExchange(port, requestText('POST', '/api/v1/tasks', { headers: { 'content-type': 'application/json', 'content-length': '5000000' } }));
      expect(expectError(response, 413, 'TL_PAYLOAD_TOO_LARGE')).toBe(`the request body is larger than ${1024 * 1024 + 64 * 1024} bytes, the limit of this server`);
    });

    it("a body over a route's own limit → 413 naming that route's limit, not the server's", async () => {
      const headers = { 'content-type': 'application/json', 'content-length': String(21 * 1024 * 1024) };
      const workflows = await rawExchange(port, requestText('POST', '/api/v1/workflows', { headers }));
      expect(expectError(workflows, 413, 'TL_PAYLOAD_TOO_LARGE')).toBe(`the request body is larger than ${20 * 1024 * 1024} bytes, the limit of POST /api/v1/workflows`);
      // Over the server's limit but under the route's: read, and refused for what it holds (a node's payload over 1 MiB).
      const body = JSON.stringify({ nodes: [{ id: 'a', type: 'x', payload: 'p'.repeat(2 * 1024 * 1024) }] });
      const read = await rawExchange(port, requestText('POST', '/api/v1/workflows', { headers: { 'content-type': 'application/json' }, body }));
      expect(expectError(read, 422, 'TL_INVALID_WORKFLOW')).toMatch(/^node "a": payload is/);
      const other = await rawExchange(port, requestText('POST', '/api/v1/tasks/t', { headers }));
      expect(expectError(other, 413, 'TL_PAYLOAD_TOO_LARGE')).toBe(`the request body is larger than ${1024 * 1024 + 64 * 1024} bytes, the limit of this server`);
    });

    it('a body that is not JSON → 400 saying to send application/json', async () => {
      const message = expectError(await send('POST', '/api/v1/tasks', { headers: { 'content-type': 'text/plain' }, body: 'type=t' }), 400, 'TL_INVALID_REQUEST');
      expect(message).toBe('unsupported content type "text/plain": send the body as JSON with Content-Type: application/json');
      const other = expectError(await send('POST', '/api/v1/tasks/t', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1' }), 400, 'TL_INVALID_REQUEST');
      expect(other).toContain('application/json');
      const untyped = expectError(await send('POST', '/api/v1/tasks', { body: '{"type":"t"}' }), 400, 'TL_INVALID_REQUEST');
      expect(untyped).toBe('the body has no content type: send the body as JSON with Content-Type: application/json');
    });
  });

  describe('no route, or a method the route does not take', () => {
    // `/` and the dashboard's own paths answer its page (test/server/dashboard.test.ts).
    it.each(['/api/v1/nope', '/api/v1/queues/default/nope', '/favicon.ico', '/nowhere'])('GET %s → 404', async (path) => {
      expect(expectError(await send('GET', path), 404, 'TL_NOT_FOUND')).toBe(`no route GET ${path}`);
    });

    it('a 404 for a long path keeps its message short', async () => {
      const message = expectError(await send('GET', `/${'n'.repeat(10_000)}`), 404, 'TL_NOT_FOUND');
      expect(message).toBe(`no route GET /${'n'.repeat(99)}…`);
    });

    it.each([
      ['DELETE', '/api/v1/queues', 'GET, HEAD'],
      // /api/v1/tasks/{id} and POST /api/v1/tasks/{type} share the path.
      ['PUT', '/api/v1/tasks/abc', 'DELETE, GET, HEAD, POST'],
      // GET searches, POST enqueues.
      ['DELETE', '/api/v1/tasks', 'GET, HEAD, POST'],
      ['PATCH', '/api/v1/schedules/weekly', 'DELETE, GET, HEAD, PUT'],
      ['PROPFIND', '/api/v1/tasks', 'GET, HEAD, POST'],
      ['OPTIONS', '/healthz', 'GET, HEAD'],
    ])('%s %s → 405 with Allow: %s', async (method, path, allow) => {
      const response = await send(method, path);
      expect(expectError(response, 405, 'TL_METHOD_NOT_ALLOWED')).toBe(`${method} is not allowed on ${path}; allowed: ${allow}`);
      expect(response.headers.allow).toBe(allow);
    });
  });

  describe("what Node's HTTP parser refuses: a complete answer, then the socket closes", () => {
    function expectClosingAnswer(response: RawResponse, status: number, code: string): string {
      const message = expectError(response, status, code);
      expect(response.headers.connection).toBe('close');
      return message;
    }

    it('an unknown method on a route → 405 with the route’s Allow', async () => {
      const response = await send('FOO', '/api/v1/tasks');
      expect(expectClosingAnswer(response, 405, 'TL_METHOD_NOT_ALLOWED')).toBe('FOO is not allowed on /api/v1/tasks; allowed: GET, HEAD, POST');
      expect(response.headers.allow).toBe('GET, HEAD, POST');
    });

    it('an unknown method on no route → 404', async () => {
      const response = await send('BREW', '/coffee?sugar=2');
      expect(expectClosingAnswer(response, 404, 'TL_NOT_FOUND')).toBe('no route BREW /coffee');
      expect(response.headers.allow).toBeUndefined();
    });

    it('headers larger than the limit → 431', async () => {
      const response = await send('GET', '/api/v1/queues', { headers: { 'x-big': 'b'.repeat(20_000) } });
      expect(expectClosingAnswer(response, 431, 'TL_HEADERS_TOO_LARGE')).toBe('the request headers are larger than 16384 bytes, the limit of this server');
    });

    it('headers far larger than the limit (several reads) → one 431', async () => {
      const response = await send('GET', '/api/v1/queues', { headers: { 'x-big': 'b'.repeat(200_000) } });
      expectClosingAnswer(response, 431, 'TL_HEADERS_TOO_LARGE');
    });

    it('a URL longer than the header limit → 414', async () => {
      const response = await send('GET', `/api/v1/tasks/${'u'.repeat(20_000)}`);
      expect(expectClosingAnswer(response, 414, 'TL_URI_TOO_LONG')).toBe('the request URL is too long: the request line and headers may have at most 16384 bytes');
    });

    it.each([
      ['a line that is not a request', 'GARBAGE\r\n\r\n'],
      ['an unknown HTTP version', 'GET / HTTP/9.9\r\nHost: x\r\n\r\n'],
      ['a Content-Length that is not a number', 'POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n'],
      ['a control character in the method', 'G\u0000T / HTTP/1.1\r\nHost: x\r\n\r\n'],
    ])('%s → 400', async (_name, bytes) => {
      const message = expectClosingAnswer(await rawExchange(port, bytes), 400, 'TL_INVALID_REQUEST');
      expect(message).toMatch(/^malformed HTTP request: /);
    });

    it('the server still answers afterwards', async () => {
      const response = await send('GET', '/healthz');
      expect(response.status).toBe(200);
      expect(JSON.parse(response.body)).toEqual({ status: 'healthy' });
    });
  });
});

interface OpenApiDocument {
  paths: Record<string, Record<string, { parameters: { name: string; in: string; required: boolean; schema: { enum?: string[] } }[] }>>;
}

/** A URL for each GET operation of the document: path parameters filled, required query parameters set. */
function getUrls(document: OpenApiDocument): string[] {
  const urls: string[] = [];
  for (const [path, operations] of Object.entries(document.paths)) {
    const get = operations.get;
    if (!get) continue;
    let url = path.replace(/\{queue\}/g, 'default').replace(/\{[^}]+\}/g, 'nope');
    const query = get.parameters.filter((p) => p.in === 'query' && p.required).map((p) => `${p.name}=${p.schema.enum?.[0] ?? '1'}`);
    if (query.length > 0) url += `?${query.join('&')}`;
    urls.push(url);
  }
  return urls;
}

/** Bodies that change between two requests (counters, clocks): their lengths are not compared. */
const VARYING = new Set(['/metrics', '/api/v1/stats']);

describe.each(STORES)('HEAD on every GET route on %s', (_name, open) => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi(open);
  });
  afterAll(async () => {
    await api.close();
  });

  it('the OpenAPI document’s GET routes, /metrics and /openapi.json answer HEAD as GET, without a body', async () => {
    const document = (await api.app.inject({ method: 'GET', url: '/openapi.json' })).json<OpenApiDocument>();
    const urls = [...getUrls(document), '/metrics', '/openapi.json'];
    expect(urls.length).toBeGreaterThanOrEqual(14);
    for (const url of urls) {
      const head = await api.app.inject({ method: 'HEAD', url });
      expect(head.body, `HEAD ${url}`).toBe('');
      if (url.startsWith('/api/v1/events')) {
        expect(head.statusCode).toBe(200);
        expect(head.headers['content-type']).toBe('text/event-stream; charset=utf-8');
        continue;
      }
      const get = await api.app.inject({ method: 'GET', url });
      expect(head.statusCode, `HEAD ${url}`).toBe(get.statusCode);
      expect(head.headers['content-type'], `HEAD ${url}`).toBe(get.headers['content-type']);
      if (!VARYING.has(url)) expect(Number(head.headers['content-length']), `HEAD ${url}`).toBe(Buffer.byteLength(get.body));
    }
  });
});
