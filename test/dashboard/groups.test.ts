/**
 * Task groups in the dashboard, in a real browser on both stores: the task page shows a task's
 * group and why a grouped task waits (its group is full); the queue page shows the groups waiting
 * and the running tasks per group against the queue's group concurrency.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTask } from '../../src/backend/conformance/harness.js';
import { STORES } from '../helpers/stores.js';
import { axeViolations, HAS_CHROMIUM, launchBrowser, openTab, scrollsSideways, startCenter, type Center } from './browser.js';

describe.skipIf(!HAS_CHROMIUM).each(STORES)('dashboard task groups on %s', (_name, open) => {
  let browser: Browser;
  let center: Center;
  beforeAll(async () => {
    [browser, center] = await Promise.all([launchBrowser(), startCenter(open)]);
    const { backend } = center.store;
    await backend.setQueueLimits('q-groups', { groupConcurrency: 1 });
    await backend.enqueue([
      newTask('t', {}, { queue: 'q-groups', group: 'acme', id: 'acme-1' }),
      newTask('t', {}, { queue: 'q-groups', group: 'acme', id: 'acme-2' }),
      newTask('t', {}, { queue: 'q-groups', group: 'globex', id: 'globex-1' }),
      newTask('t', {}, { queue: 'q-plain', id: 'plain-1' }),
    ]);
    const [claim] = await backend.claim('w-dashboard', [{ queue: 'q-groups', count: 1 }], 120_000);
    expect(claim.tasks.map((t) => t.id)).toEqual(['acme-1']);
  });
  afterAll(async () => {
    await browser?.close();
    await center?.close();
  });

  it('the task page shows the group, and that the group runs as many as its group concurrency allows', async () => {
    const tab = await openTab(browser);
    const { page } = tab;
    await page.goto(`${center.url}/tasks/acme-2`);
    const fields = page.locator('dl.fields');
    await fields.waitFor();
    expect(await fields.locator('dt', { hasText: /^group$/ }).count()).toBe(1);
    expect(await fields.locator('dt:text-is("group") + dd').textContent()).toBe('acme');
    expect(await page.locator('p.why').first().textContent()).toBe('Not running yet: the group acme of the queue q-groups runs as many tasks as its group concurrency allows (1)');
    // A task without a group shows no group line.
    await page.goto(`${center.url}/tasks/plain-1`);
    await fields.waitFor();
    await page.getByRole('heading', { name: /plain-1/ }).waitFor();
    expect(await fields.locator('dt', { hasText: /^group$/ }).count()).toBe(0);
    expect(tab.problems).toEqual([]);
    await tab.context.close();
  });

  it('the queue page lists the groups waiting and the running tasks per group; the queued list says which are held', async () => {
    const tab = await openTab(browser, { width: 375 });
    const { page } = tab;
    await page.goto(`${center.url}/queues/q-groups?state=queued`);
    const section = page.locator('section.card', { has: page.getByRole('heading', { name: 'Groups' }) });
    await section.waitFor();
    expect(await section.locator('.card-head .muted').textContent()).toBe('2 groups waiting · 1 group running · 1 at the group concurrency (1)');
    const table = section.getByRole('table', { name: 'running tasks per group of q-groups' });
    expect(await table.locator('tbody tr').allTextContents()).toEqual(['acme1 of 1 full']);
    await expect.poll(() => page.locator('table.tasks tbody tr').count()).toBe(2);
    const reasons = await page.locator('table.tasks .why-inline').allTextContents();
    expect(reasons).toContain('the group acme of the queue q-groups runs as many tasks as its group concurrency allows (1)');
    expect(await scrollsSideways(page)).toBe(false);
    expect(await axeViolations(page)).toEqual([]);
    // A queue without groups or a group concurrency has no Groups section.
    await page.goto(`${center.url}/queues/q-plain`);
    await page.getByRole('heading', { name: 'Limits' }).waitFor();
    expect(await page.getByRole('heading', { name: 'Groups' }).count()).toBe(0);
    expect(tab.problems).toEqual([]);
    await tab.context.close();
  });
});
