/**
 * Reads never fail on a stored value that cannot be presented (server/present.ts). The values
 * are written straight into the store — validation refuses them at every door now, but a store
 * may hold ones an older version or a hand left — and every read that shows them answers 200:
 * a time outside what Date holds as null, a payload or result that is not JSON as its text, each
 * named in the view's `invalid` list.
 */
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RedisBackend } from '../../src/backend/redis/redis-backend.js';
import { FireView, QueueView, ScheduleView, Stats, TaskStatus } from '../../src/server/schemas.js';
import { sqliteStore } from '../helpers/sqlite-store.js';
import { REDIS_URL, redisStore, type TestStore } from '../helpers/stores.js';
import { startApi, type TestApi } from './helpers.js';

const HUGE = 9_007_199_254_740_991;

/** What a raw write changes, in the contract's terms. */
interface RawStore {
  times(id: string, times: { createdAt?: number; enqueuedAt?: number; nextRunAt?: number }): Promise<void>;
  attemptStartedAt(id: string, ms: number): Promise<void>;
  header(id: string, name: string, value: string): Promise<void>;
  type(id: string, type: string): Promise<void>;
  payloadText(id: string, text: string): Promise<void>;
  resultText(id: string, text: string): Promise<void>;
  /** The task's stored log lines as `text`. */
  logsText(id: string, text: string): Promise<void>;
  scheduleTimes(id: string, startAt: number, endAt: number): Promise<void>;
  scheduleText(id: string, definition: string, state: string): Promise<void>;
  fireNominalAt(fireId: string, ms: number): Promise<void>;
  /** A live worker registry entry whose stored text is `text`. */
  workerText(id: string, text: string): Promise<void>;
  close(): void;
}

function rawRedis(store: TestStore): RawStore {
  const backend = store.backend as RedisBackend;
  const redis = new Redis(REDIS_URL);
  const key = (name: 'meta' | 'payload' | 'result' | 'attempts' | 'logs' | 'fires') => backend.keys.queueKey('default', name);
  const meta = async (id: string, change: (m: Record<string, unknown>) => void) => {
    const m = JSON.parse((await redis.hget(key('meta'), id))!) as Record<string, unknown>;
    change(m);
    // JSON.stringify writes a lone surrogate as the escape \udXXX, which cjson cannot decode.
    await redis.hset(key('meta'), id, JSON.stringify(m));
  };
  const json = async (hash: string, field: string, change: (v: Record<string, unknown>) => void) => {
    const v = JSON.parse((await redis.hget(hash, field))!) as Record<string, unknown>;
    change(v);
    await redis.hset(hash, field, JSON.stringify(v));
  };
  return {
    times: (id, t) =>
      meta(id, (m) => {
        if (t.createdAt !== undefined) m.c = t.createdAt;
        if (t.enqueuedAt !== undefined) m.e = t.enqueuedAt;
        if (t.nextRunAt !== undefined) m.n = t.nextRunAt;
      }),
    attemptStartedAt: async (id, ms) => {
      await redis.hset(key('attempts'), id, JSON.stringify([{ n: 1, s: ms, f: ms, o: 'f', e: 'boom' }]));
    },
    header: (id, name, value) => meta(id, (m) => (m.h = { ...(m.h as object), [name]: value })),
    type: (id, type) => meta(id, (m) => (m.t = type)),
    payloadText: async (id, text) => {
      await redis.hset(key('payload'), id, text);
    },
    resultText: async (id, text) => {
      await redis.hset(key('result'), id, text);
    },
    logsText: async (id, text) => {
      await redis.hset(key('logs'), id, text);
    },
    scheduleTimes: (id, startAt, endAt) => json(backend.keys.schedules[0], id, (d) => Object.assign(d, { startAt, endAt })),
    scheduleText: async (id, definition, state) => {
      await redis.hset(backend.keys.schedules[0], id, definition);
      await redis.hset(backend.keys.schedules[2], id, state);
    },
    fireNominalAt: (fireId, ms) => json(key('fires'), fireId, (f) => (f.n = ms)),
    workerText: async (id, text) => {
      await redis.set(backend.keys.worker(id), text, 'PX', 60_000);
      await redis.zadd(backend.keys.workers, Date.now() + 60_000, id);
    },
    close: () => redis.disconnect(),
  };
}

function rawSqlite(file: string): RawStore {
  const db = new Database(file);
  const run = async (sql: string, ...params: unknown[]) => {
    db.prepare(sql).run(...params);
  };
  return {
    times: async (id, t) => {
      if (t.createdAt !== undefined) await run('UPDATE tasks SET created_at = ? WHERE id = ?', t.createdAt, id);
      if (t.enqueuedAt !== undefined) await run('UPDATE tasks SET enqueued_at = ? WHERE id = ?', t.enqueuedAt, id);
      if (t.nextRunAt !== undefined) await run('UPDATE tasks SET next_run_at = ? WHERE id = ?', t.nextRunAt, id);
    },
    attemptStartedAt: (id, ms) =>
      run('UPDATE tasks SET attempts = ? WHERE id = ?', JSON.stringify([{ attempt: 1, startedAt: ms, finishedAt: ms, outcome: 'failed', error: 'boom' }]), id),
    // As JSON text with the \udXXX escape, as JSON.stringify writes it.
    header: (id, name, value) => run('UPDATE tasks SET headers = ? WHERE id = ?', JSON.stringify({ [name]: value }), id),
    // A lone surrogate as the bytes a WTF-8 writer would leave (ED A0 80): not UTF-8.
    type: (id) => run("UPDATE tasks SET type = CAST(X'626164EDA080' AS TEXT) WHERE id = ?", id),
    payloadText: (id, text) => run('UPDATE payloads SET body = ? WHERE id = ?', text, id),
    resultText: (id, text) => run('UPDATE tasks SET result = ? WHERE id = ?', text, id),
    logsText: (id, text) => run('UPDATE tasks SET logs = ? WHERE id = ?', text, id),
    scheduleTimes: (id, startAt, endAt) =>
      run("UPDATE schedules SET definition = json_set(definition, '$.startAt', ?, '$.endAt', ?) WHERE id = ?", startAt, endAt, id),
    scheduleText: (id, definition, state) => run('UPDATE schedules SET definition = ?, state = ? WHERE id = ?', definition, state, id),
    fireNominalAt: (fireId, ms) => run('UPDATE schedule_fires SET nominal_at = ? WHERE fire_id = ?', ms, fireId),
    workerText: (id, text) => run('INSERT INTO workers (id, info, expires_at) VALUES (?, ?, ?)', id, text, Date.now() + 60_000),
    close: () => db.close(),
  };
}

// The documented response schemas hold what presenting an unreadable value needs: times are
// nullable and a view may list `invalid` fields.
const Task = TaskStatus;
const Schedule = ScheduleView;
const Fire = FireView;
const Queue = QueueView;

const STORES: [string, () => Promise<{ store: TestStore; raw: RawStore }>][] = [
  ['redis', async () => {
    const store = await redisStore();
    return { store, raw: rawRedis(store) };
  }],
  ['sqlite', async () => {
    const store = await sqliteStore();
    return { store, raw: rawSqlite(store.file) };
  }],
];

describe.each(STORES)('reads of unpresentable stored values on %s', (_name, open) => {
  let api: TestApi;
  let raw: RawStore;
  const ids: Record<'huge' | 'surrogate' | 'corrupt', string> = { huge: '', surrogate: '', corrupt: '' };
  let fireId: string;

  const get = async (url: string) => {
    const res = await api.app.inject({ method: 'GET', url });
    expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
    return res.json<Record<string, unknown>>();
  };

  beforeAll(async () => {
    let opened: { store: TestStore; raw: RawStore } | undefined;
    api = await startApi(async () => {
      opened = await open();
      return opened.store;
    });
    raw = opened!.raw;
    const enqueue = async (body: Record<string, unknown>) => {
      const res = await api.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: body });
      expect(res.statusCode, res.body).toBe(201);
      return res.json<{ task_id: string }>().task_id;
    };
    // The oldest queued task is the one whose record the queue's counts read (for latency).
    ids.surrogate = await enqueue({ type: 'mail', payload: { n: 1 }, headers: { note: 'fine' } });
    ids.corrupt = await enqueue({ type: 'mail', payload: { n: 2 } });
    ids.huge = await enqueue({ type: 'mail', payload: { n: 3 }, delay: 3_600_000 });
    const created = await api.app.inject({ method: 'POST', url: '/api/v1/schedules', payload: { id: 'nightly', cron: '0 3 * * *', task: { type: 'report' } } });
    expect(created.statusCode, created.body).toBe(201);
    const fired = await api.app.inject({ method: 'POST', url: '/api/v1/schedules/nightly/trigger' });
    expect(fired.statusCode, fired.body).toBe(200);
    fireId = fired.json<{ fires: { fire_id: string }[] }>().fires[0].fire_id;
    const broken = await api.app.inject({ method: 'POST', url: '/api/v1/schedules', payload: { id: 'broken', cron: '0 4 * * *', task: { type: 'report' } } });
    expect(broken.statusCode, broken.body).toBe(201);

    await raw.times(ids.huge, { createdAt: HUGE, enqueuedAt: HUGE, nextRunAt: HUGE });
    await raw.attemptStartedAt(ids.huge, 1e300);
    await raw.header(ids.surrogate, 'note', '\ud800');
    await raw.type(ids.surrogate, 'bad\ud800');
    await raw.payloadText(ids.corrupt, '{"half":');
    await raw.resultText(ids.corrupt, 'not json');
    await raw.logsText(fireId, '[null, "plain", 7, {"at": 1700000000000, "message": "fine"}, {"at": "soon", "message": 3}]');
    await raw.scheduleTimes('nightly', 1e300, 1e300);
    await raw.fireNominalAt(fireId, 1e300);
    await raw.scheduleText('broken', '{"cron": "0 4', '[]');
  });

  afterAll(async () => {
    raw.close();
    await api.close();
  });

  it('GET /api/v1/tasks/{id}: out-of-range times are null and named in `invalid`', async () => {
    const task = Task.parse(await get(`/api/v1/tasks/${ids.huge}`));
    expect(task).toMatchObject({ id: ids.huge, state: 'scheduled', created_at: null, enqueued_at: null, next_run_at: null });
    expect(task.invalid).toEqual(['created_at', 'enqueued_at', 'next_run_at', 'attempts[0].started_at', 'attempts[0].finished_at']);
    expect(task.attempts[0]).toMatchObject({ started_at: null, finished_at: null, error: 'boom' });
  });

  it('GET /api/v1/tasks/{id}: a payload and result that are not JSON are their text, named in `invalid`', async () => {
    const task = Task.parse(await get(`/api/v1/tasks/${ids.corrupt}`));
    expect(task).toMatchObject({ payload: '{"half":', result: 'not json', invalid: ['payload', 'result'] });
  });

  it('GET /api/v1/tasks/{id}: log entries that are not line objects show with no time, named in `invalid`', async () => {
    const task = Task.parse(await get(`/api/v1/tasks/${fireId}`));
    expect(task.logs).toEqual([
      { at: null, message: 'null' },
      { at: null, message: 'plain' },
      { at: null, message: '7' },
      { at: '2023-11-14T22:13:20.000Z', message: 'fine' },
      { at: null, message: '3' },
    ]);
    expect(task.invalid).toEqual(['logs[0]', 'logs[1]', 'logs[2]', 'logs[4].at']);
    const { tasks } = z.object({ tasks: z.array(Task) }).parse(await get('/api/v1/tasks?q=state:queued'));
    expect(tasks.map((t) => t.id)).toContain(fireId);
  });

  it('GET /api/v1/tasks/{id}: a task whose type and header hold a lone surrogate', async () => {
    const task = Task.parse(await get(`/api/v1/tasks/${ids.surrogate}`));
    // Redis keeps the lone half (JSON escapes it losslessly); SQLite reads the bytes a WTF-8
    // writer left as U+FFFD.
    expect(task.type).toMatch(/^bad(\ud800|\ufffd+)$/);
    expect(task.invalid).toBeUndefined();
  });

  it('the queue task listings answer with every task', async () => {
    const scheduled = await get('/api/v1/queues/default/tasks?state=scheduled');
    const queued = await get('/api/v1/queues/default/tasks?state=queued');
    const tasks = [...(scheduled.tasks as unknown[]), ...(queued.tasks as unknown[])].map((t) => Task.parse(t));
    expect(tasks.map((t) => t.id).sort()).toEqual([ids.huge, ids.surrogate, ids.corrupt, fireId].sort());
    expect(tasks.find((t) => t.id === ids.huge)!.next_run_at).toBeNull();
  });

  it('GET /api/v1/queues and /api/v1/stats answer, one task with a lone surrogate or a huge time notwithstanding', async () => {
    const { queues } = z.object({ queues: z.array(Queue) }).parse(await get('/api/v1/queues'));
    expect(queues.map((q) => q.name)).toEqual(['default']);
    expect(queues[0].counts).toMatchObject({ queued: 3, scheduled: 1 });
    expect(queues[0].latency_ms).toBeGreaterThanOrEqual(0);
    const stats = Stats.parse(await get('/api/v1/stats'));
    expect(stats.totals.queued).toBe(3);
  });

  it('GET /api/v1/schedules (and one schedule): start and end times out of range are null and named', async () => {
    const { schedules } = z.object({ schedules: z.array(Schedule) }).parse(await get('/api/v1/schedules'));
    expect(schedules.map((s) => s.id)).toEqual(['broken', 'nightly']);
    expect(schedules[1]).toMatchObject({ id: 'nightly', start_at: null, end_at: null, invalid: ['start_at', 'end_at'] });
    expect(Schedule.parse(await get('/api/v1/schedules/nightly'))).toMatchObject({ start_at: null, invalid: ['start_at', 'end_at'] });
  });

  it('GET /api/v1/schedules (and one schedule): a definition that is not JSON shows with an empty cron, named', async () => {
    const { schedules } = z.object({ schedules: z.array(Schedule) }).parse(await get('/api/v1/schedules'));
    expect(schedules[0]).toMatchObject({ id: 'broken', cron: '', invalid: ['definition', 'state'] });
    expect(Schedule.parse(await get('/api/v1/schedules/broken'))).toMatchObject({ id: 'broken', cron: '', invalid: ['definition', 'state'] });
    expect((await get('/api/v1/schedules/broken/fires')).fires).toEqual([]);
    // It can still be deleted.
    expect((await api.app.inject({ method: 'DELETE', url: '/api/v1/schedules/broken' })).statusCode).toBe(200);
  });

  it('GET /api/v1/workers, /types and /stats answer, an unreadable worker entry left out', async () => {
    await api.store.backend.heartbeat({ id: 'w-good', host: 'h', pid: 1, queues: ['default'], concurrency: 1, running: [], startedAt: Date.now(), version: '1', types: ['t'] }, 60_000);
    await raw.workerText('w-bad', '{"id": "w-bad", not json');
    await raw.workerText('w-odd', '[1, 2]');
    const workers = (await get('/api/v1/workers')) as { workers: { id: string }[] };
    expect(workers.workers.map((w) => w.id)).toEqual(['w-good']);
    const types = (await get('/api/v1/types')) as { types: { type: string; workers: { id: string }[] }[] };
    expect(types.types.map((t) => [t.type, t.workers.map((w) => w.id)])).toEqual([['t', ['w-good']]]);
    await get('/api/v1/stats');
  });

  it('GET /api/v1/schedules/{id}/fires: a fire time out of range is null and named', async () => {
    const { fires } = z.object({ fires: z.array(Fire) }).parse(await get('/api/v1/schedules/nightly/fires'));
    expect(fires).toHaveLength(1);
    expect(fires[0]).toMatchObject({ fire_id: fireId, nominal_at: null, invalid: ['nominal_at'], task_id: fireId });
  });
});
