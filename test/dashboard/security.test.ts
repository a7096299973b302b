/**
 * The dashboard's doors: sign-in with a token, a read-only token that shows no action, stored
 * text rendered as text (never HTML), the Content-Security-Policy, accessibility and phone width.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTask } from '../../src/backend/conformance/harness.js';
import { Worker } from '../../src/worker/worker.js';
import { STORES } from '../helpers/stores.js';
import { axeViolations, HAS_CHROMIUM, launchBrowser, openTab, scrollsSideways, startCenter, type Center } from './browser.js';

const ADMIN = 'admin-token-for-the-browser';
const READ = 'read-token-for-the-browser';
const HOSTILE = '<img src=x onerror="window.__pwned=1"></script><script>window.__pwned=2</script>';

describe.skipIf(!HAS_CHROMIUM).each(STORES)('dashboard security and access on %s', (_name, open) => {
  let browser: Browser;
  let center: Center;
  /** Whether this store keeps workflows (and sec-flow was made). */
  let workflows = false;
  beforeAll(async () => {
    [browser, center] = await Promise.all([launchBrowser(), startCenter(open, { apiToken: ADMIN, readToken: READ })]);
    const backend = center.store.backend;
    await backend.enqueue([newTask('hostile', { note: HOSTILE }, { id: 'hostile-1', queue: 'q-sec', maxRetries: 0 }), newTask('later', {}, { id: 'later-1', queue: 'q-sec', runAt: Date.now() + 3_600_000 })]);
    await center.app.inject({
      method: 'POST', url: '/api/v1/schedules', headers: { authorization: `Bearer ${ADMIN}` },
      payload: { id: 'sec-nightly', cron: '0 3 * * *', timezone: 'Europe/Berlin', task: { type: 'report', payload: { title: HOSTILE } } },
    });
    // A workflow whose name, node id and payload hold HTML (a store without workflows answers 501).
    const flow = await center.app.inject({
      method: 'POST', url: '/api/v1/workflows', headers: { authorization: `Bearer ${ADMIN}` },
      payload: { id: 'sec-flow', name: HOSTILE, nodes: [{ id: 'first', type: 'sec:first', queue: 'q-sec-flow', payload: { note: HOSTILE } }, { id: HOSTILE, type: 'sec:then', queue: 'q-sec-flow', dependsOn: ['first'] }] },
    });
    workflows = flow.statusCode === 201;
    const worker = new Worker(backend, { queues: ['q-sec'], concurrency: 1, idleWait: 200 });
    worker.handle('hostile', async (_payload, ctx) => {
      ctx.log(HOSTILE);
      throw new Error(HOSTILE);
    });
    await worker.start();
    const deadline = Date.now() + 10_000;
    while ((await backend.getTask('hostile-1'))?.state !== 'dead' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await worker.stop();
  });
  afterAll(async () => {
    await browser?.close();
    await center?.close();
  });

  it('asks for a token, refuses a wrong one, and signs in with the admin token', async () => {
    const tab = await openTab(browser);
    const urls: string[] = [];
    tab.page.on('request', (request) => urls.push(request.url()));
    await tab.page.goto(`${center.url}/queues`);
    await tab.page.getByLabel('Token').fill('not-the-token');
    await tab.page.getByRole('button', { name: 'Sign in' }).click();
    await tab.page.getByText('That token was not accepted.').waitFor();
    await tab.page.getByLabel('Token').fill(ADMIN);
    await tab.page.getByRole('button', { name: 'Sign in' }).click();
    await tab.page.getByRole('heading', { name: 'Queues' }).waitFor();
    // Kept for this tab only, never in the URL.
    expect(tab.page.url()).not.toContain(ADMIN);
    expect(await tab.page.evaluate<string | null>("sessionStorage.getItem('taskline.token')")).toBe(ADMIN);
    // The queue list loads after the heading: its buttons come with it.
    await tab.page.getByRole('button', { name: 'Pause' }).first().waitFor();
    // The token travels in a header only: no request the page made carries it in its URL.
    expect(urls.length).toBeGreaterThan(3);
    expect(urls.filter((url) => url.includes(ADMIN) || url.includes('not-the-token'))).toEqual([]);
    await tab.context.close();
  });

  it('a read-only token sees every page and no action', async () => {
    const tab = await openTab(browser, { token: READ });
    const pages: [string, string][] = [['/queues', 'Queues'], ['/queues/q-sec?state=scheduled', 'q-sec'], ['/tasks/later-1', 'later-1'], ['/dead', 'Dead letter'], ['/schedules', 'Schedules'], ['/schedules/sec-nightly', 'sec-nightly'], ['/schedules/new', 'New schedule'], ['/schedules/sec-nightly/edit', 'Edit sec-nightly']];
    if (workflows) pages.push(['/workflows/sec-flow', 'sec-flow']);
    for (const [path, heading] of pages) {
      await tab.page.goto(`${center.url}${path}`);
      await tab.page.getByRole('heading', { name: heading }).first().waitFor();
      await tab.page.locator('table, .fields, .why').first().waitFor();
      const buttons = await tab.page.locator('main button').allTextContents();
      // Paging is reading; nothing else may be offered.
      expect(buttons.filter((b) => !['First page', 'Next page', 'Close'].includes(b)), path).toEqual([]);
      expect(await tab.page.locator('main input[type=checkbox], main form.form').count(), path).toBe(0);
    }
    expect(await tab.page.locator('.badge', { hasText: 'read-only' }).count()).toBe(1);
    await tab.context.close();
  });

  it('payload, error, log lines and a schedule payload holding HTML show as text and run nothing', async () => {
    const tab = await openTab(browser, { token: ADMIN });
    await tab.page.goto(`${center.url}/tasks/hostile-1`);
    await tab.page.getByLabel('log lines').waitFor();
    expect(await tab.page.getByLabel('payload').textContent()).toContain('<img src=x onerror=');
    expect(await tab.page.getByLabel('error').textContent()).toContain('</script><script>');
    expect(await tab.page.getByLabel('log lines').textContent()).toContain('<img src=x');
    await tab.page.goto(`${center.url}/schedules/sec-nightly`);
    await tab.page.getByText('Task payload').waitFor();
    await tab.page.goto(`${center.url}/dead`);
    await tab.page.getByRole('row', { name: /hostile/ }).waitFor();
    if (workflows) {
      await tab.page.goto(`${center.url}/workflows/sec-flow`);
      await tab.page.locator('.wf-graph [data-node="first"]').waitFor();
      expect(await tab.page.locator('.fields dd').first().textContent()).toBe(HOSTILE);
      expect(await tab.page.locator('table.nodes tbody th').last().textContent()).toBe(HOSTILE);
      expect(await tab.page.locator('.wf-graph title').last().textContent()).toContain('<img src=x');
    }
    expect(await tab.page.evaluate<unknown>('window.__pwned')).toBeUndefined();
    expect(await tab.page.locator('main img').count()).toBe(0);
    expect(tab.problems).toEqual([]);
    await tab.context.close();
  });

  it('every page: no serious or critical axe violation, no sideways scroll at 375 px', async () => {
    const paths = ['/', '/queues', '/queues/q-sec?state=dead', '/tasks/hostile-1', '/dead', '/schedules', '/schedules/sec-nightly', '/schedules/sec-nightly/edit', '/schedules/new', '/workflows', '/workflows/sec-flow', '/workers', '/search?q=state:dead', '/audit'];
    for (const width of [1280, 375]) {
      const tab = await openTab(browser, { token: ADMIN, width });
      for (const path of paths) {
        // The server answers /workflows/… with the page but not /workflows itself: open that list
        // from its navigation link, as a reader does.
        if (path === '/workflows') {
          await tab.page.goto(`${center.url}/`);
          await tab.page.locator('header.top nav').getByRole('link', { name: 'Workflows' }).click();
          await tab.page.getByRole('heading', { name: 'Workflows' }).waitFor();
        } else await tab.page.goto(`${center.url}${path}`);
        await tab.page.locator('main h1').first().waitFor();
        // Loaded: nothing says "Loading…" any more (the live stream keeps the network busy).
        await expect.poll(() => tab.page.locator('[aria-busy=true]').count()).toBe(0);
        if (width === 1280) expect(await axeViolations(tab.page), path).toEqual([]);
        else expect(await scrollsSideways(tab.page), `${path} at 375 px`).toBe(false);
      }
      await tab.context.close();
    }
    // 28 page loads, half of them with an axe run: a bound for a busy machine, not a speed check.
  }, 120_000);
});

describe.skipIf(!HAS_CHROMIUM)('the sign-in page', () => {
  it('has no serious accessibility violation either', async () => {
    const [browser, center] = await Promise.all([launchBrowser(), startCenter(STORES[1][1], { apiToken: ADMIN })]);
    try {
      const tab = await openTab(browser);
      await tab.page.goto(center.url);
      await tab.page.getByLabel('Token').waitFor();
      expect(await axeViolations(tab.page)).toEqual([]);
      // The check can fail: a button without a name is a critical violation.
      await tab.page.setContent('<!doctype html><html lang="en"><title>t</title><main><button></button></main></html>');
      expect(await axeViolations(tab.page)).toEqual([expect.stringMatching(/^button-name \(critical\)/)]);
      await tab.context.close();
    } finally {
      await browser.close();
      await center.close();
    }
  });
});
