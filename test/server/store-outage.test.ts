/**
 * A store that cannot be reached is a 503 TL_STORE_UNAVAILABLE in Taskline's words — which
 * store, what failed, that the server retries — never the driver's ("Reached the max retries
 * per request limit … maxRetriesPerRequest"). Against a private redis-server that is killed and
 * restarted, a SQLite file locked by another connection, and real driver errors.
 */
import { connect } from 'node:net';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisBackend } from '../../src/backend/redis/redis-backend.js';
import { TasklineError } from '../../src/core/errors.js';
import { buildServer, type TaskCenterServer } from '../../src/server/app.js';
import { describeHttpError, type HttpErrorContext } from '../../src/server/errors.js';
import { freePort, RedisServer } from '../helpers/redis-server.js';
import { sqliteStore, type SqliteTestStore } from '../helpers/sqlite-store.js';
import { uniquePrefix } from '../helpers/stores.js';

const DRIVER_WORDS = /max retries|maxRetriesPerRequest|ECONNREFUSED|Connection is closed/;

describe('Redis killed under a running task center', () => {
  let redis: RedisServer;
  let backend: RedisBackend;
  let server: TaskCenterServer;
  beforeAll(async () => {
    redis = await RedisServer.start();
    backend = await RedisBackend.connect(redis.url, { prefix: uniquePrefix('outage') });
    server = await buildServer({ backend, storeAddress: `127.0.0.1:${redis.port}` });
    await server.app.ready();
  });
  afterAll(async () => {
    await server.app.close();
    await backend.close();
    await redis.destroy();
  });

  it('answers 503 naming the store and the failure, then serves again once Redis is back', async () => {
    expect((await server.app.inject({ method: 'GET', url: '/api/v1/queues' })).statusCode).toBe(200);
    await redis.stop('SIGKILL');
    const reason = new RegExp(`^the store is unreachable \\(redis 127\\.0\\.0\\.1:${redis.port}\\): (no connection|the connection is closed|connection refused|connection reset); retrying$`);
    const requests = [
      { method: 'GET' as const, url: '/api/v1/queues' },
      { method: 'POST' as const, url: '/api/v1/tasks', payload: { type: 'report' } },
      { method: 'GET' as const, url: '/api/v1/tasks/some-task' },
    ];
    for (const request of requests) {
      const response = await server.app.inject(request);
      expect(response.statusCode, `${request.method} ${request.url}: ${response.body}`).toBe(503);
      const { error } = response.json<{ error: { code: string; message: string } }>();
      expect(error.code).toBe('TL_STORE_UNAVAILABLE');
      expect(error.message).toMatch(reason);
      expect(error.message).not.toMatch(DRIVER_WORDS);
      expect(response.headers['retry-after']).toBe('1');
    }

    await redis.start();
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = (await server.app.inject({ method: 'GET', url: '/api/v1/queues' })).statusCode;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe(200);
  });
});

describe('a SQLite file another connection holds locked', () => {
  let store: SqliteTestStore;
  let server: TaskCenterServer;
  beforeAll(async () => {
    store = await sqliteStore({ busyTimeoutMs: 20 });
    server = await buildServer({ backend: store.backend });
    await server.app.ready();
  });
  afterAll(async () => {
    await server.app.close();
    await store.cleanup();
  });

  it('answers 503: the store is busy, try again; then stores once the lock is gone', async () => {
    const other = new Database(store.file);
    try {
      other.exec('BEGIN EXCLUSIVE');
      const refused = await server.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { type: 'report' } });
      expect(refused.statusCode, refused.body).toBe(503);
      expect(refused.json()).toEqual({ error: { code: 'TL_STORE_UNAVAILABLE', message: 'the store is busy (sqlite): the database is locked by another writer; try again' } });
      other.exec('ROLLBACK');
    } finally {
      other.close();
    }
    expect((await server.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { type: 'report' } })).statusCode).toBe(201);
  });
});

describe('driver errors that reach the server unwrapped', () => {
  const context: HttpErrorContext = { store: 'redis', bodyLimit: 1024, maxParamLength: 500 };

  async function refusedConnection(port: number): Promise<Error> {
    return new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', (error) => resolve(error));
    });
  }

  it("ioredis's MaxRetriesPerRequestError → 503 without its words", async () => {
    const client = new Redis(`redis://127.0.0.1:${await freePort()}`, { maxRetriesPerRequest: 1, retryStrategy: () => 20 });
    client.on('error', () => undefined);
    let error: unknown;
    try {
      await client.get('anything');
    } catch (caught) {
      error = caught;
    } finally {
      client.disconnect();
    }
    expect((error as Error).name).toBe('MaxRetriesPerRequestError');
    expect(describeHttpError(error, null, context)).toEqual({
      status: 503,
      body: { error: { code: 'TL_STORE_UNAVAILABLE', message: 'the store is unreachable (redis): no connection; retrying' } },
      internal: false,
    });
  });

  it('ECONNREFUSED → 503 naming the address it names', async () => {
    const port = await freePort();
    const error = await refusedConnection(port);
    expect((error as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
    const expected = `the store is unreachable (redis 127.0.0.1:${port}): connection refused; retrying`;
    expect(describeHttpError(error, null, context).body.error.message).toBe(expected);
    // Wrapped by a backend as a store error, with the driver's error as its cause.
    const wrapped = new TasklineError('TL_STORE_ERROR', `Redis: ${error.message}`, { cause: error });
    expect(describeHttpError(wrapped, null, context)).toMatchObject({ status: 503, body: { error: { code: 'TL_STORE_UNAVAILABLE', message: expected } } });
  });

  it('other errors keep their own answer', () => {
    const notFound = new TasklineError('TL_TASK_NOT_FOUND', 'no task with id "x"');
    expect(describeHttpError(notFound, null, context)).toMatchObject({ status: 404, body: { error: { code: 'TL_TASK_NOT_FOUND' } } });
    expect(describeHttpError(new Error('boom'), null, context)).toEqual({ status: 500, body: { error: { code: 'TL_INTERNAL', message: 'internal server error' } }, internal: true });
  });
});
