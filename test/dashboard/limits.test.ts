/**
 * A queue's limits in the dashboard, in a real browser on both stores: the form sets them in the
 * store, the queues table shows them, a refused value shows the server's message, an empty field
 * removes a limit, and a read-only token sees the form disabled.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTask } from '../../src/backend/conformance/harness.js';
import { STORES } from '../helpers/stores.js';
import { axeViolations, HAS_CHROMIUM, launchBrowser, openTab, scrollsSideways, startCenter, type Center } from './browser.js';

const ADMIN = 'admin-token-for-the-limits';
const READ = 'read-token-for-the-limits';

describe.skipIf(!HAS_CHROMIUM).each(STORES)('dashboard queue limits on %s', (_name, open) => {
  let browser: Browser;
  let center: Center;
  beforeAll(async () => {
    [browser, center] = await Promise.all([launchBrowser(), startCenter(open, { apiToken: ADMIN, readToken: READ })]);
    await center.store.backend.enqueue([newTask('t', {}, { queue: 'q-limits' }), newTask('t', {}, { queue: 'q-free' })]);
  });
  afterAll(async () => {
    await browser?.close();
    await center?.close();
  });
  const limits = async () => (await center.store.backend.getQueue('q-limits'))?.limits;

  it('sets limits through the form, shows them in the table, shows a refusal, and removes one', async () => {
    const tab = await openTab(browser, { token: ADMIN });
    const { page } = tab;
    await page.goto(`${center.url}/queues/q-limits`);
    const form = page.getByRole('form', { name: 'limits of q-limits' });
    await form.waitFor();
    const field = (label: string) => form.getByLabel(label, { exact: true });
    expect(await field('concurrency').inputValue()).toBe('');
    await field('rate').fill('50');
    await field('tasks per').fill('1');
    await field('interval unit').selectOption('s');
    await field('concurrency').fill('5');
    await field('max length').fill('100,000');
    await form.getByRole('button', { name: 'Save limits' }).click();
    await expect.poll(limits).toEqual({ rate: { limit: 50, intervalMs: 1000 }, concurrency: 5, groupConcurrency: null, maxLength: 100_000 });
    await form.getByRole('status').getByText('Saved: 50/1s · 5 running · max 100,000').waitFor();
    // The form shows what is in force, the interval in its largest whole unit.
    expect(await field('tasks per').inputValue()).toBe('1');
    expect(await field('interval unit').inputValue()).toBe('s');
    expect(await field('max length').inputValue()).toBe('100000');

    // The queues table: each queue's limits in a few words, a dash for none.
    await page.locator('header.top nav').getByRole('link', { name: 'Queues' }).click();
    await page.getByRole('columnheader', { name: 'limits' }).waitFor();
    // The row's cells after its header cell (the queue's name), in the order of the column headers.
    const column = (await page.locator('thead th').allTextContents()).indexOf('limits') - 1;
    const cell = (queue: string) => page.getByRole('row', { name: new RegExp(queue) }).locator('td').nth(column);
    await expect.poll(() => cell('q-limits').textContent()).toBe('50/1s · 5 running · max 100,000');
    expect(await cell('q-free').textContent()).toBe('—');

    // Concurrency 0 is refused by the server, with its message naming the field; the store keeps 5.
    await page.getByRole('row', { name: /q-limits/ }).getByRole('link', { name: 'q-limits' }).click();
    await form.waitFor();
    await field('concurrency').fill('0');
    await field('concurrency').press('Enter');
    const alert = form.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/concurrency.*from 1 to/);
    expect((await limits())?.concurrency).toBe(5);
    expect(await axeViolations(page)).toEqual([]);
    // Text that is not a whole number is caught by the form, before it is sent.
    await field('group concurrency').fill('two');
    expect(await alert.textContent()).toBe('group concurrency: a whole number of tasks, or empty for no limit');
    expect(await form.getByRole('button', { name: 'Save limits' }).isDisabled()).toBe(true);
    await form.getByRole('button', { name: 'Undo changes' }).click();
    expect(await field('concurrency').inputValue()).toBe('5');
    expect(await form.getByRole('alert').count()).toBe(0);

    // An empty field removes its limit; the others stay.
    await field('concurrency').fill('');
    await form.getByRole('button', { name: 'Save limits' }).click();
    await expect.poll(limits).toEqual({ rate: { limit: 50, intervalMs: 1000 }, concurrency: null, groupConcurrency: null, maxLength: 100_000 });
    await page.locator('header.top nav').getByRole('link', { name: 'Queues' }).click();
    await expect.poll(() => cell('q-limits').textContent()).toBe('50/1s · max 100,000');
    expect(tab.problems).toEqual([]);
    await tab.context.close();
  });

  it('a limit set elsewhere shows in the form; only the changed limit is sent', async () => {
    const tab = await openTab(browser, { token: ADMIN, width: 375 });
    const { page } = tab;
    await page.goto(`${center.url}/queues/q-limits`);
    const form = page.getByRole('form', { name: 'limits of q-limits' });
    const field = (label: string) => form.getByLabel(label, { exact: true });
    await form.waitFor();
    expect(await scrollsSideways(page)).toBe(false);
    // A change of limits announces no event: the queue views read again every 15 s, or at once
    // on a task event (an enqueue here).
    await page.locator('.live-live').waitFor();
    await center.app.inject({ method: 'PATCH', url: '/api/v1/queues/q-limits/limits', headers: { authorization: `Bearer ${ADMIN}` }, payload: { groupConcurrency: 2 } });
    await center.store.backend.enqueue([newTask('t', {}, { queue: 'q-limits' })]);
    await expect.poll(() => field('group concurrency').inputValue(), { timeout: 20_000 }).toBe('2');
    // Typing starts a draft; a change made elsewhere meanwhile is kept, not overwritten.
    await field('rate').fill('10');
    await field('tasks per').fill('500');
    await field('interval unit').selectOption('ms');
    await center.app.inject({ method: 'PATCH', url: '/api/v1/queues/q-limits/limits', headers: { authorization: `Bearer ${ADMIN}` }, payload: { maxLength: 7 } });
    await form.getByRole('button', { name: 'Save limits' }).click();
    await form.getByRole('status').getByText('Saved: 10/500ms · 2 per group · max 7').waitFor();
    expect(await limits()).toEqual({ rate: { limit: 10, intervalMs: 500 }, concurrency: null, groupConcurrency: 2, maxLength: 7 });
    expect(await field('max length').inputValue()).toBe('7');
    expect(tab.problems).toEqual([]);
    await tab.context.close();
  }, 60_000);

  it('a read-only token sees the limits in a disabled form, with a note, and no button', async () => {
    const tab = await openTab(browser, { token: READ });
    const { page } = tab;
    await page.goto(`${center.url}/queues/q-limits`);
    const form = page.getByRole('form', { name: 'limits of q-limits' });
    await form.waitFor();
    await expect.poll(() => form.getByLabel('max length', { exact: true }).inputValue()).not.toBe('');
    for (const label of ['rate', 'tasks per', 'interval unit', 'concurrency', 'group concurrency', 'max length']) {
      expect(await form.getByLabel(label, { exact: true }).isDisabled(), label).toBe(true);
    }
    await form.getByText('This token is read-only: the admin token can change the limits.').waitFor();
    expect(await form.getByRole('button').count()).toBe(0);
    expect(tab.problems).toEqual([]);
    await tab.context.close();
  });
});
