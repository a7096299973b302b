import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Auth, bindAddress } from '../../src/server/auth.js';
import { STORES } from '../helpers/stores.js';
import { startApi, type TestApi } from './helpers.js';

const ADMIN = 'admin-secret-token';
const READ = 'read-only-token';

// `ok`: what the route answers when the token allows it (a missing schedule is the route's own 404).
const READ_ROUTES = [
  { method: 'GET', url: '/api/v1/queues', ok: 200 },
  { method: 'GET', url: '/api/v1/stats', ok: 200 },
  { method: 'GET', url: '/metrics', ok: 200 },
  { method: 'POST', url: '/api/v1/schedules/preview', payload: { cron: '* * * * *' }, ok: 200 },
] as const;
const WRITE_ROUTES = [
  { method: 'POST', url: '/api/v1/tasks', payload: { type: 't' }, ok: 201 },
  { method: 'POST', url: '/api/v1/queues/default/pause', ok: 200 },
  { method: 'DELETE', url: '/api/v1/schedules/nope', ok: 404 },
] as const;
const TOKENS = [
  ['no token', undefined],
  ['a wrong token', 'Bearer nope'],
  ['a token of another length', `Bearer ${ADMIN}x`],
  ['not a bearer', `Basic ${Buffer.from('a:b').toString('base64')}`],
  ['the read token', `Bearer ${READ}`],
  ['the admin token', `Bearer ${ADMIN}`],
] as const;

function expected(token: string | undefined, write: boolean): number {
  if (token === `Bearer ${ADMIN}`) return -1; // allowed: whatever the route answers
  if (token === `Bearer ${READ}`) return write ? 403 : -1;
  return 401;
}

describe.each(STORES)('auth matrix on %s', (_name, open) => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi(open, { apiToken: ADMIN, readToken: READ });
  });
  afterAll(async () => {
    await api.close();
  });

  for (const [label, header] of TOKENS) {
    for (const [kind, routes] of [['read', READ_ROUTES], ['write', WRITE_ROUTES]] as const) {
      it(`${label} × ${kind} routes`, async () => {
        for (const route of routes) {
          const res = await api.app.inject({ method: route.method, url: route.url, ...('payload' in route ? { payload: route.payload } : {}), headers: header ? { authorization: header } : {} });
          const want = expected(header, kind === 'write');
          if (want === -1) {
            expect(res.statusCode, `${route.method} ${route.url}: ${res.body}`).toBe(route.ok);
            if (route.ok === 404) expect(res.json()).toMatchObject({ error: { code: 'TL_SCHEDULE_NOT_FOUND' } });
          } else {
            expect(res.statusCode, `${route.method} ${route.url}`).toBe(want);
            expect(res.json()).toMatchObject({ error: { code: want === 401 ? 'TL_UNAUTHORIZED' : 'TL_FORBIDDEN' } });
          }
        }
      });
    }
  }

  it('GET /api/v1 tells the caller what its token may do (the dashboard hides actions for read)', async () => {
    const as = async (token: string) => (await api.app.inject({ method: 'GET', url: '/api/v1', headers: { authorization: `Bearer ${token}` } })).json<{ access: string; auth: boolean }>();
    expect(await as(ADMIN)).toMatchObject({ access: 'admin', auth: true });
    expect(await as(READ)).toMatchObject({ access: 'read', auth: true });
    expect((await api.app.inject({ method: 'GET', url: '/api/v1' })).statusCode).toBe(401);
  });

  it('health and the OpenAPI document need no token', async () => {
    expect((await api.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect((await api.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    expect((await api.app.inject({ method: 'GET', url: '/openapi.json' })).statusCode).toBe(200);
  });
});

describe('binding', () => {
  const none = new Auth({});
  const withToken = new Auth({ apiToken: ADMIN });

  it('without a token binds loopback only and says so', () => {
    expect(bindAddress({ auth: none, insecure: false })).toEqual({ host: '127.0.0.1', note: expect.stringContaining('127.0.0.1 only') });
    expect(bindAddress({ auth: none, host: '::1', insecure: false }).host).toBe('::1');
  });

  it('refuses a public address without a token unless --insecure', () => {
    expect(() => bindAddress({ auth: none, host: '0.0.0.0', insecure: false })).toThrow(/refusing to listen on 0.0.0.0/);
    expect(bindAddress({ auth: none, host: '0.0.0.0', insecure: true })).toEqual({ host: '0.0.0.0', note: expect.stringContaining('WITHOUT authentication') });
  });

  it('with a token binds every interface by default', () => {
    expect(bindAddress({ auth: withToken, insecure: false })).toEqual({ host: '0.0.0.0', note: null });
    expect(bindAddress({ auth: withToken, host: '10.0.0.5', insecure: false }).host).toBe('10.0.0.5');
  });
});
