/** A worker's metrics endpoint answers every request in the API's shape, HEAD included. */
import { connect } from 'node:net';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveMetrics, type MetricsEndpoint } from '../../src/observability/metrics-endpoint.js';

describe('the worker metrics endpoint', () => {
  let endpoint: MetricsEndpoint;
  let base: string;
  beforeAll(async () => {
    endpoint = await serveMetrics(new Registry(), 0, '127.0.0.1');
    base = `http://127.0.0.1:${endpoint.port}`;
  });
  afterAll(async () => {
    await endpoint.close();
  });

  it('GET and HEAD /metrics and /healthz', async () => {
    expect((await fetch(`${base}/metrics`)).status).toBe(200);
    const head = await fetch(`${base}/metrics`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'healthy' });
  });

  it('another method is a 405 with Allow, another path a 404, both in the error shape', async () => {
    const post = await fetch(`${base}/metrics`, { method: 'POST' });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    expect(await post.json()).toEqual({ error: { code: 'TL_METHOD_NOT_ALLOWED', message: '/metrics answers GET and HEAD' } });
    const other = await fetch(`${base}/nope`);
    expect(other.status).toBe(404);
    expect(await other.json()).toEqual({ error: { code: 'TL_NOT_FOUND', message: 'only /metrics and /healthz here' } });
  });

  it('a request the HTTP parser refuses gets a JSON error and Connection: close', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(endpoint.port, '127.0.0.1', () => socket.write('NOT HTTP\r\n\r\n'));
      let text = '';
      socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
    expect(JSON.parse(answer.split('\r\n\r\n')[1])).toEqual({ error: { code: 'TL_INVALID_REQUEST', message: 'the request is not valid HTTP/1.1' } });
  });
});
