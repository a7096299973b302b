import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { newTask } from '../../src/backend/conformance/harness.js';
import { STORES } from '../helpers/stores.js';
import { startApi, type TestApi } from './helpers.js';

interface Job {
  id: string;
  action: string;
  q: string;
  state: 'running' | 'done' | 'cancelled' | 'failed';
  matched: number;
  done: number;
  failed: number;
  started_at: string;
  finished_at: string | null;
  error: string | null;
}

describe.each(STORES)('bulk actions by filter on %s', (_name, open) => {
  let api: TestApi;
  beforeEach(async () => {
    api = await startApi(open);
  });
  afterEach(async () => {
    await api.close();
  });
  const inject = (method: 'GET' | 'POST', url: string, payload?: unknown, headers: Record<string, string> = {}) =>
    api.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
  const bulk = (payload: unknown) => inject('POST', '/api/v1/bulk', payload);
  const job = async (id: string) => (await inject('GET', `/api/v1/bulk/${id}`)).json<{ job: Job }>().job;
  const searchTotal = async (q: string) => {
    let count = 0;
    let cursor: string | null = '';
    while (cursor !== null) {
      const page: { tasks: unknown[]; next_cursor: string | null } = (await inject('GET', `/api/v1/tasks?q=${encodeURIComponent(q)}&limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)).json();
      count += page.tasks.length;
      cursor = page.next_cursor;
    }
    return count;
  };
  /** Polls a job (each poll lets the job's next batch run) until `until` holds. */
  async function follow(id: string, until: (job: Job) => boolean): Promise<Job> {
    for (let i = 0; i < 10_000; i++) {
      const current = await job(id);
      if (until(current)) return current;
      await new Promise((resolve) => setImmediate(resolve));
    }
    throw new Error(`job ${id} never reached the state awaited`);
  }
  const enqueue = async (count: number, type: string, options: { queue?: string; delay?: number } = {}) => {
    const tasks = Array.from({ length: count }, (_, i) => newTask(type, { i }, options));
    await api.store.backend.enqueue(tasks);
    return tasks.map((t) => t.id);
  };

  it('a dry run counts what a run then changes: matching tasks in the states the action takes', async () => {
    const queued = await enqueue(10, 'report:a');
    await enqueue(5, 'report:a', { delay: 3_600_000 });
    await enqueue(7, 'report:b');
    for (const id of queued.slice(0, 4)) await inject('POST', `/api/v1/tasks/${id}/archive`);
    // archive takes queued and scheduled tasks, not the 4 already dead.
    const dry = await bulk({ action: 'archive', q: 'type:report:a', dryRun: true });
    expect(dry.statusCode, dry.body).toBe(200);
    expect(dry.json()).toEqual({ count: 11 });
    const started = await bulk({ action: 'archive', q: 'type:report:a' });
    expect(started.statusCode, started.body).toBe(202);
    const { job: first } = started.json<{ job: Job }>();
    expect(first).toMatchObject({ action: 'archive', q: 'type:report:a', state: 'running', done: 0, failed: 0, finished_at: null, error: null });
    const finished = await follow(first.id, (j) => j.state !== 'running');
    expect(finished).toMatchObject({ state: 'done', matched: 11, done: 11, failed: 0, finished_at: expect.any(String) });
    expect(await searchTotal('type:report:a state:dead')).toBe(15);
    expect(await searchTotal('type:report:b state:queued')).toBe(7);
    expect((await bulk({ action: 'archive', q: 'type:report:a', dryRun: true })).json()).toEqual({ count: 0 });
    // run takes them back from dead.
    expect((await bulk({ action: 'run', q: 'report', dryRun: true })).json()).toEqual({ count: 15 });
  });

  it('a job cancelled midway stops: fewer done than matched, the rest untouched', async () => {
    for (let i = 0; i < 3; i++) await enqueue(1000, 'cleanup:old');
    const { job: started } = (await bulk({ action: 'delete', q: 'type:cleanup:old' })).json<{ job: Job }>();
    await follow(started.id, (j) => j.done > 0);
    const cancel = await inject('POST', `/api/v1/bulk/${started.id}/cancel`);
    expect(cancel.statusCode).toBe(200);
    expect(cancel.json<{ job: Job }>().job.state).toBe('cancelled');
    const stopped = await follow(started.id, (j) => j.finished_at !== null);
    expect(stopped).toMatchObject({ state: 'cancelled', matched: 3000, failed: 0 });
    expect(stopped.done).toBeLessThan(3000);
    const left = await searchTotal('type:cleanup:old');
    expect(left).toBe(3000 - stopped.done);
    // Nothing moves after the stop.
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(await searchTotal('type:cleanup:old')).toBe(left);
    expect((await job(started.id)).done).toBe(stopped.done);
    // Cancelling a finished job answers it as it is.
    expect((await inject('POST', `/api/v1/bulk/${started.id}/cancel`)).json<{ job: Job }>().job).toEqual(await job(started.id));
  });

  it('a filter matching nothing: a dry run of 0, a job done at once; jobs are listed newest first', async () => {
    await enqueue(3, 't');
    expect((await bulk({ action: 'cancel', q: 'type:nope', dryRun: true })).json()).toEqual({ count: 0 });
    expect((await bulk({ action: 'run', q: 'state:dead', dryRun: true })).json()).toEqual({ count: 0 });
    const { job: a } = (await bulk({ action: 'cancel', q: 'type:nope' })).json<{ job: Job }>();
    expect(await follow(a.id, (j) => j.state !== 'running')).toMatchObject({ state: 'done', matched: 0, done: 0, failed: 0 });
    const { job: b } = (await bulk({ action: 'cancel', q: 'type:t' })).json<{ job: Job }>();
    expect(await follow(b.id, (j) => j.state !== 'running')).toMatchObject({ state: 'done', matched: 3, done: 3 });
    const list = (await inject('GET', '/api/v1/bulk')).json<{ jobs: Job[] }>().jobs;
    expect(list.map((j) => j.id)).toEqual([b.id, a.id]);
    expect(await searchTotal('state:cancelled')).toBe(3);
    const missing = await inject('GET', '/api/v1/bulk/nope');
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ error: { code: 'TL_NOT_FOUND' } });
    expect((await inject('POST', '/api/v1/bulk/nope/cancel')).statusCode).toBe(404);
  });

  it('refuses bad input with a 400 naming the field', async () => {
    const cases: [unknown, RegExp][] = [
      [{ action: 'explode', q: 'state:dead' }, /^body\.action must be one of run, archive, delete, cancel/],
      [{ action: 'run', q: 'state:finished' }, /^body\.q term "state:finished" has no state "finished"/],
      [{ action: 'run' }, /body\.q/],
      [{ action: 'run', q: 'state:dead', dryRun: 'yes' }, /body\.dryRun/],
      [{ action: 'run', q: 'state:dead', dry_run: true }, /dry_run/],
    ];
    for (const [payload, message] of cases) {
      const res = await bulk(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json(), JSON.stringify(payload)).toEqual({ error: { code: 'TL_INVALID_REQUEST', message: expect.stringMatching(message) } });
    }
  });

  it('one queue and one state, nothing else: done by the store\'s call for all of them, the counts right', async () => {
    const drained = await enqueue(1200, 'drain:t', { queue: 'drain' });
    await enqueue(30, 'drain:t', { queue: 'drain', delay: 3_600_000 });
    await enqueue(20, 'drain:t', { queue: 'other' });
    const backend = api.store.backend;
    const perTask = vi.spyOn(backend, 'archiveTask');
    const all = vi.spyOn(backend, 'archiveAll');
    try {
      expect((await bulk({ action: 'archive', q: 'queue:drain state:queued', dryRun: true })).json()).toEqual({ count: 1200 });
      const { job: started } = (await bulk({ action: 'archive', q: 'queue:drain state:queued' })).json<{ job: Job }>();
      expect(await follow(started.id, (j) => j.state !== 'running')).toMatchObject({ state: 'done', matched: 1200, done: 1200, failed: 0 });
      expect(all).toHaveBeenCalledTimes(1);
      expect(all).toHaveBeenCalledWith('drain', 'queued');
      expect(perTask).not.toHaveBeenCalled();
      expect(await searchTotal('queue:drain state:dead')).toBe(1200);
      expect((await backend.getTask(drained[0]))!.state).toBe('dead');
      expect(await searchTotal('queue:drain state:scheduled')).toBe(30);
      expect(await searchTotal('queue:other state:queued')).toBe(20);
      // Another term, or a cancel: one call per task, as before.
      const { job: typed } = (await bulk({ action: 'archive', q: 'queue:drain state:scheduled type:drain:t' })).json<{ job: Job }>();
      expect(await follow(typed.id, (j) => j.state !== 'running')).toMatchObject({ state: 'done', matched: 30, done: 30, failed: 0 });
      expect(all).toHaveBeenCalledTimes(1);
      expect(perTask).toHaveBeenCalledTimes(30);
      const { job: cancelled } = (await bulk({ action: 'cancel', q: 'queue:other state:queued' })).json<{ job: Job }>();
      expect(await follow(cancelled.id, (j) => j.state !== 'running')).toMatchObject({ state: 'done', matched: 20, done: 20, failed: 0 });
      // A state the action does not take: nothing matched, nothing done.
      const { job: none } = (await bulk({ action: 'archive', q: 'queue:drain state:dead' })).json<{ job: Job }>();
      expect(await follow(none.id, (j) => j.state !== 'running')).toMatchObject({ state: 'done', matched: 0, done: 0, failed: 0 });
      expect(await searchTotal('queue:drain state:dead')).toBe(1230);
    } finally {
      perTask.mockRestore();
      all.mockRestore();
    }
  });

  it('refuses a query with no term (it would take every task in the store), a dry run too', async () => {
    await enqueue(3, 't');
    for (const q of ['', '   ']) {
      for (const payload of [{ action: 'delete', q }, { action: 'delete', q, dryRun: true }]) {
        const res = await bulk(payload);
        expect(res.statusCode, JSON.stringify(payload)).toBe(400);
        expect(res.json()).toEqual({ error: { code: 'TL_INVALID_REQUEST', message: expect.stringMatching(/^body\.q has no term.*state:dead.*queue:<name>/) } });
      }
    }
    expect(await searchTotal('type:t')).toBe(3);
    expect((await inject('GET', '/api/v1/bulk')).json<{ jobs: Job[] }>().jobs).toEqual([]);
  });

  it('a read-only token may list and follow jobs, not start or cancel them', async () => {
    const guarded = await startApi(open, { apiToken: 'admin-token', readToken: 'read-token' });
    try {
      const as = (token: string, method: 'GET' | 'POST', url: string, payload?: object) =>
        guarded.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload ? { payload } : {}) });
      for (const payload of [{ action: 'delete', q: 'state:dead' }, { action: 'delete', q: 'state:dead', dryRun: true }]) {
        const res = await as('read-token', 'POST', '/api/v1/bulk', payload);
        expect(res.statusCode).toBe(403);
        expect(res.json()).toMatchObject({ error: { code: 'TL_FORBIDDEN' } });
      }
      const { job: started } = (await as('admin-token', 'POST', '/api/v1/bulk', { action: 'delete', q: 'type:none' })).json<{ job: Job }>();
      expect((await as('read-token', 'GET', '/api/v1/bulk')).statusCode).toBe(200);
      expect((await as('read-token', 'GET', `/api/v1/bulk/${started.id}`)).statusCode).toBe(200);
      expect((await as('read-token', 'POST', `/api/v1/bulk/${started.id}/cancel`)).statusCode).toBe(403);
    } finally {
      await guarded.close();
    }
  });
});
