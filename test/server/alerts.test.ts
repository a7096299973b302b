import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AlertManager, alertOptionsFromEnv } from '../../src/server/alerts.js';
import { sqliteStore } from '../helpers/sqlite-store.js';
import { startApi, type TestApi } from './helpers.js';

describe('alert webhooks', () => {
  let api: TestApi;
  let hook: Server;
  let received: { path: string; body: Record<string, unknown> }[];
  let failFirst = 0;
  let base = '';
  beforeEach(async () => {
    api = await startApi(() => sqliteStore());
    received = [];
    failFirst = 0;
    hook = createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        if (failFirst > 0) {
          failFirst -= 1;
          res.writeHead(500).end();
          return;
        }
        received.push({ path: req.url ?? '', body: JSON.parse(text) as Record<string, unknown> });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(hook.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    await api.close();
    hook.closeAllConnections();
    await new Promise((r) => hook.close(r));
  });

  const log = { warn: () => undefined };
  const until = async (predicate: () => boolean) => {
    const deadline = Date.now() + 5000;
    while (!predicate() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  };

  it('sends a dead task to a JSON and a Slack webhook, retrying a failed delivery', async () => {
    failFirst = 1;
    const alerts = new AlertManager({ webhooks: [{ url: `${base}/json`, format: 'json' }, { url: `${base}/slack`, format: 'slack' }] }, { backend: api.store.backend, hub: api.hub, scheduler: null, log });
    alerts.start();
    const id = (await api.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { type: 'mail:send', queue: 'mail' } })).json<{ task_id: string }>().task_id;
    await api.app.inject({ method: 'POST', url: `/api/v1/tasks/${id}/archive` });
    await until(() => received.length >= 2);
    await alerts.stop();
    const json = received.find((r) => r.path === '/json')!;
    const slack = received.find((r) => r.path === '/slack')!;
    expect(json.body).toMatchObject({ kind: 'task_dead', details: { id, queue: 'mail' } });
    expect(String(slack.body.text)).toContain(`task ${id}`);
  });

  it('alerts once when a queue crosses the backlog threshold', async () => {
    const alerts = new AlertManager({ webhooks: [{ url: `${base}/b`, format: 'json' }], backlogThreshold: 2, onDead: false }, { backend: api.store.backend, hub: api.hub, scheduler: null, log });
    for (let i = 0; i < 3; i++) await api.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { type: 't', queue: 'busy' } });
    await alerts.checkBacklog();
    await alerts.checkBacklog();
    await until(() => received.length >= 1);
    await alerts.stop();
    expect(received).toHaveLength(1);
    expect(received[0].body).toMatchObject({ kind: 'queue_backlog', details: { queue: 'busy', depth: 3, threshold: 2 } });
  });

  it('alerts once when a queue\'s maxLength refuses enqueues, and again after a check without refusals', async () => {
    const alerts = new AlertManager({ webhooks: [{ url: `${base}/f`, format: 'json' }], onDead: false }, { backend: api.store.backend, hub: api.hub, scheduler: null, log });
    await api.store.backend.setQueueLimits('small', { maxLength: 1 });
    const enqueue = () => api.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { type: 't', queue: 'small' } });
    expect((await enqueue()).statusCode).toBe(201);
    expect((await enqueue()).statusCode).toBe(429);
    // The first check learns the totals: a refusal from before is not alerted.
    await alerts.checkRefusals();
    expect((await enqueue()).statusCode).toBe(429);
    expect((await enqueue()).statusCode).toBe(429);
    await alerts.checkRefusals();
    expect((await enqueue()).statusCode).toBe(429);
    await alerts.checkRefusals();
    await until(() => received.length >= 1);
    expect(received).toHaveLength(1);
    expect(received[0].body).toMatchObject({ kind: 'queue_full', details: { queue: 'small', refused: 2, max_length: 1, queued: 1 } });
    await alerts.checkRefusals();
    expect((await enqueue()).statusCode).toBe(429);
    await alerts.checkRefusals();
    await until(() => received.length >= 2);
    await alerts.stop();
    expect(received).toHaveLength(2);
  });

  it('reads its settings from the environment', () => {
    expect(alertOptionsFromEnv({})).toBeNull();
    expect(alertOptionsFromEnv({ TASKLINE_ALERT_WEBHOOKS: 'https://a.example/h, slack:https://hooks.slack.com/x', TASKLINE_ALERT_BACKLOG: '1000' })).toEqual({
      webhooks: [{ url: 'https://a.example/h', format: 'json' }, { url: 'https://hooks.slack.com/x', format: 'slack' }],
      onDead: true,
      onQueueFull: true,
      scheduleFailures: undefined,
      backlogThreshold: 1000,
    });
    expect(() => alertOptionsFromEnv({ TASKLINE_ALERT_WEBHOOKS: 'ftp://x' })).toThrow(/not an http/);
  });
});
