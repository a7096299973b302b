/** The dashboard's schedule pages, in a real browser on both stores: every action reaches the store. */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORES } from '../helpers/stores.js';
import { HAS_CHROMIUM, launchBrowser, openTab, startCenter, type Center } from './browser.js';

describe.skipIf(!HAS_CHROMIUM).each(STORES)('dashboard schedules on %s', (_name, open) => {
  let browser: Browser;
  let center: Center;
  beforeAll(async () => {
    [browser, center] = await Promise.all([launchBrowser(), startCenter(open)]);
  });
  afterAll(async () => {
    await browser?.close();
    await center?.close();
  });
  const stored = (id: string) => center.store.backend.getSchedule(id);

  it('creates a schedule with a live preview (DST marked), then edits it keeping what the form does not show', async () => {
    const tab = await openTab(browser);
    const { page } = tab;
    await page.goto(`${center.url}/schedules/new`);
    await page.getByLabel('id').fill('ui-report');
    await page.getByLabel('cron').fill('not a cron');
    await page.getByRole('alert').waitFor();
    // A daily fire across the end of summer time in Berlin (last Sunday of October).
    await page.getByLabel('cron').fill('30 2 * * *');
    await page.getByLabel('time zone').fill('Europe/Berlin');
    await page.getByLabel('task type').fill('report:generate');
    await page.getByLabel('payload (JSON)').fill('{"title": "Daily"}');
    await page.locator('.preview table tbody tr').first().waitFor();
    expect(await page.locator('.preview tbody tr').count()).toBe(5);
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'ui-report' }).waitFor();
    expect(await stored('ui-report')).toMatchObject({ cron: '30 2 * * *', timezone: 'Europe/Berlin', task: { type: 'report:generate', payload: { title: 'Daily' } } });
    // Next fires with the zone's offset: Sundays of March and October at 02:30 in Berlin cross a
    // summer-time change within any 8 fires, and each change is marked.
    await center.app.inject({ method: 'PUT', url: '/api/v1/schedules/ui-report', payload: { cron: '30 2 * 3,10 0', timezone: 'Europe/Berlin', task: { type: 'report:generate', payload: { title: 'Daily' } } } });
    await page.reload();
    await page.locator('.fire-times tbody tr').nth(7).waitFor();
    const locals = await page.locator('.fire-times tbody tr td:first-child').allTextContents();
    expect(locals.length).toBe(8);
    expect(locals.every((l) => /\+0[12]:00/.test(l))).toBe(true);
    const offsets = locals.map((l) => /([+-]\d\d:\d\d)/.exec(l)![1]);
    const changes = offsets.filter((o, i) => i > 0 && o !== offsets[i - 1]).length;
    expect(changes).toBeGreaterThan(0);
    expect(await page.locator('.fire-times .badge', { hasText: 'DST' }).count()).toBe(changes);

    await center.app.inject({ method: 'PUT', url: '/api/v1/schedules/ui-report', payload: { cron: '30 2 * * *', timezone: 'Europe/Berlin', task: { type: 'report:generate', payload: { title: 'Daily' }, maxRetries: 7 }, jitter: 5000 } });
    await page.getByRole('link', { name: 'Edit' }).click();
    await page.getByLabel('cron').fill('0 6 * * 1');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('heading', { name: 'ui-report' }).waitFor();
    await expect.poll(async () => (await stored('ui-report'))?.cron).toBe('0 6 * * 1');
    expect(await stored('ui-report')).toMatchObject({ jitter: 5000, task: { maxRetries: 7 } });
    expect(tab.problems).toEqual([]);
    await tab.context.close();
  });

  it('pause, resume, trigger and backfill act on the store; the fire ledger shows lag and outcome', async () => {
    await center.app.inject({ method: 'POST', url: '/api/v1/schedules', payload: { id: 'ui-ops', cron: '0 * * * *', timezone: 'UTC', task: { type: 'tick', queue: 'q-sched' } } });
    const tab = await openTab(browser);
    const { page } = tab;
    await page.goto(`${center.url}/schedules/ui-ops`);
    await page.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(async () => (await stored('ui-ops'))?.paused).toBe(true);
    await page.getByRole('button', { name: 'Resume' }).click();
    await expect.poll(async () => (await stored('ui-ops'))?.paused).toBe(false);
    await page.getByRole('button', { name: 'Trigger now' }).click();
    await expect.poll(async () => (await center.store.backend.getQueue('q-sched'))?.counts.queued).toBe(1);
    // Backfill the last three hours: three nominal times.
    const hour = 3_600_000;
    const top = Math.floor(Date.now() / hour) * hour;
    const local = (ms: number) => {
      const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
      return d.toISOString().slice(0, 19);
    };
    await page.getByLabel('from').fill(local(top - 3 * hour + 1000));
    await page.getByLabel('to').fill(local(top - 1000));
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Backfill' }).click();
    await expect.poll(async () => (await center.store.backend.getQueue('q-sched'))?.counts.queued).toBe(3);
    const ledger = page.locator('section', { hasText: 'Fire ledger' }).locator('tbody tr');
    await expect.poll(() => ledger.count()).toBe(3);
    const rows = await ledger.allTextContents();
    expect(rows.every((r) => /queued/.test(r))).toBe(true);
    expect(rows.some((r) => /\d+ (ms|s|min|h)/.test(r))).toBe(true);
    await page.goto(`${center.url}/schedules`);
    await page.getByRole('row', { name: /ui-ops/ }).waitFor();
    page.once('dialog', (dialog) => void dialog.accept());
    await page.goto(`${center.url}/schedules/ui-ops`);
    await page.getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => stored('ui-ops')).toBeNull();
    expect(tab.problems).toEqual([]);
    await tab.context.close();
  });
});
