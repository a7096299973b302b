/** GET /api/v1/schedulers and scheduler_leader{instance} on a real store, with two in-process schedulers. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Scheduler } from '../../src/index.js';
import { eventually } from '../helpers/processes.js';
import { STORES } from '../helpers/stores.js';
import { startApi, type TestApi } from './helpers.js';

interface Reply {
  schedulers: { id: string; host: string; pid: number; leader: boolean; epoch: number | null; started_at: string; last_tick_at: string; last_seen_at: string; fires_last_minute: number; version: string }[];
  leader: { id: string; epoch: number; expires_at: string; fired_through: string | null } | null;
}

describe.each(STORES)('scheduler instances over HTTP on %s', (_name, open) => {
  let api: TestApi;
  const running: Scheduler[] = [];
  beforeEach(async () => {
    api = await startApi(open);
  });
  afterEach(async () => {
    for (const s of running.splice(0)) await s.stop();
    await api.close();
  });
  const schedulers = async () => (await api.app.inject({ method: 'GET', url: '/api/v1/schedulers' })).json<Reply>();
  const leaderMetric = async () => [...(await api.app.inject({ method: 'GET', url: '/metrics' })).body.matchAll(/^scheduler_leader\{instance="([^"]+)"\} (\d)$/gm)].map((m) => [m[1], Number(m[2])]);

  it('lists none, then each instance with the leader marked; the metric agrees; a stopped leader is replaced', async () => {
    expect(await schedulers()).toEqual({ schedulers: [], leader: null });
    expect(await leaderMetric()).toEqual([]);
    const first = new Scheduler(api.store.backend, { id: 'first', leaseMs: 900 });
    first.start();
    running.push(first);
    await first.ready();
    const second = new Scheduler(api.store.backend, { id: 'second', leaseMs: 900 });
    second.start();
    running.push(second);
    await second.ready();
    const reply = await schedulers();
    expect(reply.leader).toMatchObject({ id: 'first', epoch: 1 });
    expect(reply.schedulers.map((s) => [s.id, s.leader, s.epoch, s.pid])).toEqual([['first', true, 1, process.pid], ['second', false, null, process.pid]]);
    expect(Date.parse(reply.schedulers[0].last_seen_at)).toBeGreaterThan(0);
    expect(await leaderMetric()).toEqual([['first', 1], ['second', 0]]);
    await first.stop();
    running.shift();
    await eventually(async () => (await schedulers()).leader?.id === 'second', 5_000);
    expect((await schedulers()).schedulers.map((s) => s.id)).toEqual(['second']);
    expect(await leaderMetric()).toEqual([['second', 1]]);
    expect(second.view).toMatchObject({ isLeader: true, leader: 'second', epoch: 2 });
  });

  it('the OpenAPI document describes the route', async () => {
    const doc = (await api.app.inject({ method: 'GET', url: '/openapi.json' })).json<{ paths: Record<string, unknown> }>();
    expect(doc.paths['/api/v1/schedulers']).toBeDefined();
  });
});
