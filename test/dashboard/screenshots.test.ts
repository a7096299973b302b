/**
 * A screenshot of every dashboard page, on a store with some life in it: queues with tasks in
 * each state, dead tasks of two kinds, schedules with fires, a workflow part done, a live worker. With
 * TASKLINE_SCREENSHOTS=1 they are written to docs/dashboard/ (the pictures in docs/dashboard.md);
 * otherwise to a temporary directory, so the suite shows they can still be made.
 */
import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTask } from '../../src/backend/conformance/harness.js';
import { chain, chord, Client, task } from '../../src/index.js';
import { Worker } from '../../src/worker/worker.js';
import { tempDir } from '../helpers/temp-dir.js';
import { sqliteStore } from '../helpers/sqlite-store.js';
import { HAS_CHROMIUM, launchBrowser, openTab, startCenter, type Center } from './browser.js';

const PAGES: [string, string][] = [
  ['overview', '/'],
  ['queues', '/queues'],
  ['queue', '/queues/email?state=queued'],
  ['task', '/tasks/charge-7'],
  ['dead-letter', '/dead'],
  ['schedules', '/schedules'],
  ['schedule', '/schedules/sync-crm'],
  ['schedule-edit', '/schedules/nightly-report/edit'],
  ['workflow', '/workflows/image-import-42'],
  ['workers', '/workers'],
  ['search', '/search?q=state:dead%20err:declined'],
  ['audit', '/audit'],
];

describe.skipIf(!HAS_CHROMIUM)('dashboard screenshots', () => {
  const out = process.env.TASKLINE_SCREENSHOTS === '1' ? { path: resolve(import.meta.dirname, '../../docs/dashboard'), remove: () => undefined } : tempDir('screens');
  let browser: Browser;
  let center: Center;
  let worker: Worker;
  let client: Client;
  beforeAll(async () => {
    [browser, center] = await Promise.all([launchBrowser(), startCenter(sqliteStore)]);
    const backend = center.store.backend;
    const call = (method: 'POST' | 'PUT', url: string, payload: object) => center.app.inject({ method, url, payload });
    await call('POST', '/api/v1/schedules', { id: 'nightly-report', cron: '0 2 * * *', timezone: 'Europe/Berlin', task: { type: 'report:generate', queue: 'reports', payload: { title: 'Nightly' } } });
    await call('POST', '/api/v1/schedules', { id: 'sync-crm', cron: '*/15 * * * *', timezone: 'UTC', task: { type: 'crm:sync', queue: 'sync' }, overlap: 'skip' });
    const hour = 3_600_000;
    const top = Math.floor(Date.now() / hour) * hour;
    await call('POST', '/api/v1/schedules/sync-crm/backfill', { from: new Date(top - 2 * hour).toISOString(), to: new Date(top).toISOString() });
    await backend.enqueue(Array.from({ length: 24 }, (_, i) => newTask('email:send', { to: `user${i}@example.com`, template: 'welcome' }, { queue: 'email' })));
    await backend.enqueue(Array.from({ length: 6 }, (_, i) => newTask('report:generate', { title: `Q${i}` }, { queue: 'reports', runAt: Date.now() + (i + 1) * hour })));
    await backend.enqueue(Array.from({ length: 12 }, (_, i) => newTask('payment:charge', { order: i, cents: 1000 + i }, { id: `charge-${i}`, queue: 'payments', maxRetries: 1 })));
    // Fetched and two of three sizes made; the large one waits in a queue no worker serves.
    client = new Client(backend);
    await client.enqueueWorkflow(
      chain(
        task('media:fetch', { url: 'https://example.com/cat.jpg' }, { node: 'fetch', queue: 'media' }),
        chord(
          ['small', 'medium', 'large'].map((size) => task('media:resize', { size }, { node: `resize-${size}`, queue: size === 'large' ? 'media-gpu' : 'media' })),
          task('media:zip', null, { node: 'zip', queue: 'media' }),
        ),
        task('media:notify', { to: 'ada@example.com' }, { node: 'notify', queue: 'media' }),
      ),
      { id: 'image-import-42', name: 'image import' },
    );
    worker = new Worker(backend, { queues: ['payments', 'sync', 'media'], concurrency: 4, idleWait: 200 });
    worker.handle('payment:charge', async (payload, ctx) => {
      const { order } = payload as { order: number };
      ctx.log('charging order', order);
      if (order % 3 === 1) throw new Error(`card declined for order ${order}`);
      if (order % 3 === 2) throw new Error('gateway timeout after 3000 ms');
      return { charged: true };
    });
    worker.handle('crm:sync', async () => ({ synced: 42 }));
    worker.handle('media:fetch', async () => ({ bytes: 48_213 }));
    worker.handle('media:resize', async (payload) => ({ file: `cat-${(payload as { size: string }).size}.jpg` }));
    await worker.start();
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      const q = await backend.getQueue('payments');
      const wf = await client.getWorkflow('image-import-42');
      if (q && (q.counts.dead ?? 0) === 8 && (q.counts.completed ?? 0) === 4 && wf?.counts.completed === 3) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await call('POST', '/api/v1/queues/reports/pause', {});
  });
  afterAll(async () => {
    await worker?.stop();
    await client?.close();
    await browser?.close();
    await center?.close();
    out.remove();
  });

  it('makes one of every page, in the light and the dark theme and at phone width', async () => {
    for (const [theme, width] of [['light', 1280], ['dark', 1280], ['light', 390]] as const) {
      const tab = await openTab(browser, { width });
      await tab.page.emulateMedia({ colorScheme: theme });
      for (const [name, path] of PAGES) {
        if (width < 1000 && !['overview', 'task', 'schedule'].includes(name)) continue;
        if (theme === 'dark' && !['overview', 'task'].includes(name)) continue;
        await tab.page.goto(`${center.url}${path}`);
        await tab.page.locator('main h1').first().waitFor();
        await expect.poll(() => tab.page.locator('[aria-busy=true]').count()).toBe(0);
        const file = join(out.path, `${name}${theme === 'dark' ? '-dark' : ''}${width < 1000 ? '-phone' : ''}.png`);
        await tab.page.screenshot({ path: file, fullPage: width >= 1000 });
        expect(statSync(file).size).toBeGreaterThan(10_000);
      }
      expect(tab.problems).toEqual([]);
      await tab.context.close();
    }
  }, 60_000);
});
