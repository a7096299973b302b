import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import type { SqliteTestStore } from '../helpers/sqlite-store.js';
import { REDIS_URL, STORES } from '../helpers/stores.js';
import type { RedisBackend } from '../../src/backend/redis/redis-backend.js';
import { startApi, type TestApi } from './helpers.js';

interface Entry {
  at: string;
  token: string;
  method: string;
  route: string;
  target: string | null;
  status: number;
  code: string | null;
  detail: Record<string, string | number | boolean | null> | null;
}

const ADMIN = 'audit-admin-token';
const READ = 'audit-read-token';

describe.each(STORES)('audit log on %s', (name, open) => {
  let api: TestApi;
  beforeEach(async () => {
    api = await startApi(open, { apiToken: ADMIN, readToken: READ });
  });
  afterEach(async () => {
    await api.close();
  });
  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, token: string | null = ADMIN, payload?: object) =>
    api.app.inject({ method, url, headers: token ? { authorization: `Bearer ${token}` } : {}, ...(payload ? { payload } : {}) });
  const entries = async (query = '') => (await call('GET', `/api/v1/audit${query}`, READ)).json<{ entries: Entry[]; next_cursor: string | null }>();
  /** The entries once `count` are there: each is written after its answer is sent. */
  async function settled(count: number): Promise<Entry[]> {
    for (let i = 0; i < 500; i++) {
      const page = await entries('?limit=1000');
      if (page.entries.length >= count) return page.entries;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error(`fewer than ${count} audit entries`);
  }

  it('records a run, a pause and a schedule create with who, what and how it ended; reads leave none', async () => {
    const before = Date.now();
    const { task_id: id } = (await call('POST', '/api/v1/tasks', ADMIN, { type: 'report', queue: 'mail' })).json<{ task_id: string }>();
    expect((await call('POST', `/api/v1/tasks/${id}/run`)).statusCode).toBe(409); // a queued task: nothing to run
    expect((await call('POST', '/api/v1/queues/mail/pause')).statusCode).toBe(200);
    expect((await call('POST', '/api/v1/schedules', ADMIN, { id: 'nightly', cron: '0 3 * * *', task: { type: 'report' } })).statusCode).toBe(201);
    // Reads, with either token: none is recorded (preview is a POST that changes nothing).
    await call('GET', `/api/v1/tasks/${id}`, READ);
    await call('GET', '/api/v1/queues');
    await call('GET', '/api/v1/tasks?q=report');
    await call('POST', '/api/v1/schedules/preview', READ, { cron: '* * * * *' });
    const recorded = await settled(4);
    expect(recorded).toEqual([
      { at: expect.any(String), token: 'admin', method: 'POST', route: '/api/v1/schedules', target: null, status: 201, code: null, detail: { id: 'nightly' } },
      { at: expect.any(String), token: 'admin', method: 'POST', route: '/api/v1/queues/{queue}/pause', target: 'mail', status: 200, code: null, detail: { queue: 'mail' } },
      { at: expect.any(String), token: 'admin', method: 'POST', route: '/api/v1/tasks/{id}/run', target: id, status: 409, code: 'TL_INVALID_STATE', detail: { id } },
      { at: expect.any(String), token: 'admin', method: 'POST', route: '/api/v1/tasks', target: null, status: 201, code: null, detail: null },
    ]);
    for (const e of recorded) expect(Date.parse(e.at)).toBeGreaterThanOrEqual(before - 5);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await entries()).entries).toHaveLength(4);
  });

  it('records refused calls with the token they carried, but not those that failed authentication', async () => {
    expect((await call('DELETE', '/api/v1/schedules/nope', READ)).statusCode).toBe(403);
    // No token, or one that is not configured: a 401, not recorded (a flood would push the trail out).
    for (let i = 0; i < 20; i++) {
      expect((await call('POST', '/api/v1/queues/mail/resume', null)).statusCode).toBe(401);
      expect((await call('POST', '/api/v1/queues/mail/resume', 'not-a-token')).statusCode).toBe(401);
    }
    expect((await call('POST', '/api/v1/tasks', ADMIN, { type: '' })).statusCode).toBe(400);
    expect(await settled(2)).toMatchObject([
      { token: 'admin', route: '/api/v1/tasks', status: 400, code: 'TL_INVALID_REQUEST' },
      { token: 'read', method: 'DELETE', route: '/api/v1/schedules/{id}', target: 'nope', status: 403, code: 'TL_FORBIDDEN', detail: { id: 'nope' } },
    ]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await entries('?limit=1000')).entries).toHaveLength(2);
  });

  it('says what was done: every path parameter, and the body members that name the target', async () => {
    expect((await call('POST', '/api/v1/queues/mail/tasks/dead/delete-all')).statusCode).toBe(200);
    expect((await call('POST', '/api/v1/bulk', ADMIN, { action: 'delete', q: 'state:dead type:old', dryRun: true })).statusCode).toBe(200);
    expect((await call('POST', '/api/v1/schedules', ADMIN, { id: 'nightly', cron: '0 3 * * *', task: { type: 'report', payload: { secret: 'x' } } })).statusCode).toBe(201);
    const from = '2030-01-01T00:00:00.000Z';
    await call('POST', '/api/v1/schedules/nightly/backfill', ADMIN, { from, to: from });
    const long = `type:${'x'.repeat(1000)}`;
    expect((await call('POST', '/api/v1/bulk', ADMIN, { action: 'archive', q: long })).statusCode).toBe(202);
    const recorded = await settled(5);
    expect(recorded.map((e) => [e.route, e.detail])).toEqual([
      ['/api/v1/bulk', { action: 'archive', q: `${long.slice(0, 500)}…` }],
      ['/api/v1/schedules/{id}/backfill', { id: 'nightly', from, to: from }],
      ['/api/v1/schedules', { id: 'nightly' }],
      ['/api/v1/bulk', { action: 'delete', q: 'state:dead type:old', dryRun: true }],
      ['/api/v1/queues/{queue}/tasks/{state}/delete-all', { queue: 'mail', state: 'dead' }],
    ]);
  });

  it('pages newest first with the cursor; a bad cursor or limit is a 400', async () => {
    for (let i = 0; i < 7; i++) await call('POST', `/api/v1/queues/q${i}/pause`);
    await settled(7);
    const targets: (string | null)[] = [];
    let cursor: string | null = null;
    do {
      const page = await entries(`?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.entries.length).toBeLessThanOrEqual(3);
      targets.push(...page.entries.map((e) => e.target));
      cursor = page.next_cursor;
    } while (cursor !== null);
    expect(targets).toEqual(['q6', 'q5', 'q4', 'q3', 'q2', 'q1', 'q0']);
    for (const query of ['?cursor=junk', '?limit=0', '?limit=1001', '?other=1']) {
      const res = await call('GET', `/api/v1/audit${query}`, READ);
      expect(res.statusCode, query).toBe(400);
    }
    expect((await call('GET', '/api/v1/audit', null)).statusCode).toBe(401);
  });

  it('a failed audit write does not fail the call: it is counted and logged', async () => {
    // Break the store's audit log for real: a key of another type on Redis, no table on SQLite.
    if (name === 'redis') {
      const redis = new Redis(REDIS_URL);
      try {
        await redis.set((api.store.backend as RedisBackend).keys.audit, 'not a stream');
      } finally {
        redis.disconnect();
      }
    } else {
      const db = new Database((api.store as SqliteTestStore).file);
      try {
        db.exec('DROP TABLE audit_log');
      } finally {
        db.close();
      }
    }
    const res = await call('POST', '/api/v1/queues/mail/pause');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true });
    for (let i = 0; i < 200; i++) {
      const metrics = (await call('GET', '/metrics', READ)).body;
      if (/^taskline_audit_write_failures_total 1$/m.test(metrics)) return;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error('the failed audit write was not counted');
  });
});
