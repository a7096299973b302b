/**
 * Every dashboard page on a real task center and store, in a real browser: it shows the store's
 * data, and each action changes the store as it says.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTask } from '../../src/backend/conformance/harness.js';
import { Worker } from '../../src/worker/worker.js';
import { STORES } from '../helpers/stores.js';
import { HAS_CHROMIUM, launchBrowser, openTab, startCenter, type Center, type Tab } from './browser.js';

describe.skipIf(!HAS_CHROMIUM).each(STORES)('dashboard pages on %s', (_name, open) => {
  let browser: Browser;
  let center: Center;
  let tab: Tab;
  beforeAll(async () => {
    [browser, center] = await Promise.all([launchBrowser(), startCenter(open)]);
  });
  afterAll(async () => {
    await browser?.close();
    await center?.close();
  });
  const backend = () => center.store.backend;
  const go = async (path: string) => {
    tab = await openTab(browser);
    await tab.page.goto(`${center.url}${path}`);
    return tab.page;
  };
  const done = async () => {
    expect(tab.problems).toEqual([]);
    await tab.context.close();
  };

  it('the overview shows each queue with its counts, the charts and the oldest queued age', async () => {
    await backend().enqueue([newTask('mail:send', { to: 'a' }, { queue: 'ov-mail' }), newTask('mail:send', { to: 'b' }, { queue: 'ov-mail' }), newTask('report', {}, { queue: 'ov-reports', runAt: Date.now() + 3_600_000 })]);
    const page = await go('/');
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    // The queue table's cells, in the order of its header: queued first, then scheduled.
    const cells = (name: string) => page.getByRole('row', { name: new RegExp(name) }).locator('td');
    await expect.poll(async () => (await cells('ov-mail').allTextContents()).slice(0, 2)).toEqual(['2', '0']);
    await expect.poll(async () => (await cells('ov-reports').allTextContents()).slice(0, 2)).toEqual(['0', '1']);
    expect(await page.locator('.chart').count()).toBe(2);
    expect(await page.locator('.tile', { hasText: 'oldest queued' }).locator('.tile-value').textContent()).toMatch(/^\d+ (ms|s)$/);
    await done();
  });

  it('queues: pause and resume change the store; a deep link opens a queue on a state', async () => {
    await backend().enqueue([newTask('t', {}, { queue: 'q-pause' })]);
    const page = await go('/queues');
    const row = page.getByRole('row', { name: /q-pause/ });
    await row.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(async () => (await backend().getQueue('q-pause'))?.paused).toBe(true);
    await row.getByRole('button', { name: 'Resume' }).click();
    await expect.poll(async () => (await backend().getQueue('q-pause'))?.paused).toBe(false);
    await page.goto(`${center.url}/queues/q-pause?state=queued`);
    await page.getByRole('link', { name: /^queued/ }).and(page.locator('[aria-current="page"]')).waitFor();
    // The page goes on through its calls after the first shows: a busy box takes its time.
    await expect.poll(() => page.locator('table.tasks tbody tr').count(), { timeout: 15_000 }).toBe(1);
    // Each waiting task says why it has not started (no worker serves this queue here).
    expect(await page.locator('table.tasks .why-inline').textContent()).toBe('no live worker serves the queue q-pause');
    await done();
  });

  it('a queue page pages with a cursor in the URL, and run-all moves every scheduled task', async () => {
    const tasks = Array.from({ length: 60 }, (_, i) => newTask('later', { i }, { queue: 'q-page', runAt: Date.now() + 3_600_000 + i }));
    await backend().enqueue(tasks);
    const page = await go('/queues/q-page?state=scheduled');
    await page.locator('table.tasks tbody tr').first().waitFor();
    expect(await page.locator('table.tasks tbody tr').count()).toBe(50);
    await page.getByRole('button', { name: 'Next page' }).click();
    await expect.poll(() => page.url()).toContain('cursor=');
    await expect.poll(() => page.locator('table.tasks tbody tr').count()).toBe(10);
    // The URL restores the view: a reload shows the same second page.
    await page.reload();
    await expect.poll(() => page.locator('table.tasks tbody tr').count()).toBe(10);
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Run all' }).click();
    await expect.poll(async () => (await backend().getQueue('q-page'))?.counts.queued).toBe(60);
    await done();
  });

  it('a task page shows payload, error, attempts and logs; run, archive, cancel and delete act on the store', async () => {
    await backend().enqueue([newTask('flaky', { order: 7 }, { id: 'task-page-1', queue: 'q-task', maxRetries: 0 })]);
    const worker = new Worker(backend(), { queues: ['q-task'], concurrency: 1, idleWait: 200 });
    worker.handle('flaky', async (_payload, ctx) => {
      ctx.log('charging card', 7);
      throw new Error('card declined');
    });
    await worker.start();
    await expect.poll(async () => (await backend().getTask('task-page-1'))?.state, { timeout: 10_000 }).toBe('dead');
    await worker.stop();
    const page = await go('/tasks/task-page-1');
    await page.getByRole('heading', { name: /task-page-1/ }).waitFor();
    expect(await page.getByLabel('payload').textContent()).toContain('"order": 7');
    expect(await page.getByLabel('error').textContent()).toContain('card declined');
    expect(await page.getByLabel('log lines').textContent()).toContain('charging card 7');
    expect(await page.getByRole('row', { name: /failed|dead/ }).count()).toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Run now' }).click();
    await expect.poll(async () => (await backend().getTask('task-page-1'))?.state).toBe('queued');
    await page.getByRole('button', { name: 'Archive' }).click();
    await expect.poll(async () => (await backend().getTask('task-page-1'))?.state).toBe('dead');
    await backend().runTask('task-page-1');
    await page.reload();
    await page.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(async () => (await backend().getTask('task-page-1'))?.state).toBe('cancelled');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete' }).click();
    await expect.poll(async () => await backend().getTask('task-page-1')).toBeNull();
    await expect.poll(() => page.url()).toContain('/queues/q-task');
    await done();
  });

  it('selected tasks are acted on together', async () => {
    await backend().enqueue([0, 1, 2].map((i) => newTask('pick', { i }, { id: `pick-${i}`, queue: 'q-pick', runAt: Date.now() + 3_600_000 })));
    const page = await go('/queues/q-pick?state=scheduled');
    await page.getByLabel('select pick-0').check();
    await page.getByLabel('select pick-2').check();
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Archive 2' }).click();
    const states = async () => Promise.all(['pick-0', 'pick-1', 'pick-2'].map(async (id) => (await backend().getTask(id))?.state));
    await expect.poll(states).toEqual(['dead', 'scheduled', 'dead']);
    await done();
  });

  it('the dead letter groups dead tasks by type and error and requeues a group', async () => {
    const ids = ['dl-1', 'dl-2', 'dl-3'];
    await backend().enqueue([...ids.map((id) => newTask('dl:charge', {}, { id, queue: 'q-dead' })), newTask('dl:other', {}, { id: 'dl-4', queue: 'q-dead' })]);
    for (const id of [...ids, 'dl-4']) await backend().archiveTask(id);
    const page = await go('/dead');
    const group = page.getByRole('row', { name: /dl:charge/ });
    await group.waitFor();
    expect(await group.textContent()).toContain('3');
    page.once('dialog', (dialog) => void dialog.accept());
    await group.getByRole('button', { name: 'Requeue 3' }).click();
    await expect.poll(async () => Promise.all(ids.map(async (id) => (await backend().getTask(id))?.state))).toEqual(['queued', 'queued', 'queued']);
    expect((await backend().getTask('dl-4'))?.state).toBe('dead');
    await done();
  });

  it('search finds tasks across queues; a bulk action by its query counts first, then acts on every match', async () => {
    await backend().enqueue([
      ...Array.from({ length: 120 }, (_, i) => newTask('bulk:charge', { user: i % 2 }, { id: `bulk-${i}`, queue: i % 2 ? 'q-bulk-a' : 'q-bulk-b', runAt: Date.now() + 3_600_000 })),
      newTask('bulk:other', { user: 1 }, { id: 'bulk-other', queue: 'q-bulk-a', runAt: Date.now() + 3_600_000 }),
    ]);
    const page = await go('/search?q=type:bulk:charge%20payload.user:1');
    await page.getByText(/scanned/).waitFor();
    expect(await page.locator('table.tasks tbody tr').count()).toBe(50);
    await page.getByRole('button', { name: 'Archive all…' }).click();
    await page.getByText('Archive 60 task(s)?').waitFor();
    // A dry run changes nothing.
    expect((await backend().getQueue('q-bulk-a'))?.counts.dead ?? 0).toBe(0);
    await page.getByRole('button', { name: 'Archive 60' }).click();
    await expect.poll(async () => (await backend().getQueue('q-bulk-a'))?.counts.dead, { timeout: 15_000 }).toBe(60);
    await page.getByText(/Archive: 60 of 60 done — done/).waitFor({ timeout: 10_000 });
    expect((await backend().getQueue('q-bulk-b'))?.counts.dead ?? 0).toBe(0);
    expect((await backend().getTask('bulk-other'))?.state).toBe('scheduled');
    // Nothing left to archive: the dry run says so.
    await page.getByRole('button', { name: 'Archive all…' }).click();
    await page.getByText(/No matching task is in a state archive takes/).waitFor();
    await done();
  });

  it('the audit log lists the calls that changed something, newest first', async () => {
    await backend().enqueue([newTask('audited', {}, { id: 'audit-1', queue: 'q-audit', runAt: Date.now() + 3_600_000 })]);
    const page = await go('/tasks/audit-1');
    await page.getByRole('button', { name: 'Archive' }).click();
    await expect.poll(async () => (await backend().getTask('audit-1'))?.state).toBe('dead');
    await page.keyboard.press('g');
    await page.keyboard.press('a');
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    const first = page.locator('tbody tr').first();
    await expect.poll(() => first.textContent()).toMatch(/POST \/api\/v1\/tasks\/\{id\}\/archive.*audit-1.*200/);
    await done();
  });

  it('a sparse search follows the cursor past pages without a match', async () => {
    const tasks = Array.from({ length: 12_000 }, (_, i) => newTask('sparse', { n: i }, { queue: 'q-sparse', runAt: Date.now() + 3_600_000 }));
    for (let i = 0; i < tasks.length; i += 1000) await backend().enqueue(tasks.slice(i, i + 1000));
    const page = await go('/search?q=queue:q-sparse%20payload.n:11999');
    await page.getByText(/scanned/).waitFor({ timeout: 10_000 });
    // Each call examines at most 5,000 tasks; the page made three and found the one match.
    await expect.poll(() => page.locator('table.tasks tbody tr').count()).toBe(1);
    expect(await page.getByRole('status').textContent()).toMatch(/^1 shown; scanned 12,000 of 12,000 task\(s\) — all of them$/);
    await done();
  });

  it('workers: a live worker shows its host, queues, concurrency and heartbeat', async () => {
    const worker = new Worker(backend(), { queues: ['q-workers'], concurrency: 3, idleWait: 200 });
    await worker.start();
    try {
      const page = await go('/workers');
      const row = page.getByRole('row', { name: /q-workers/ });
      await row.waitFor();
      expect(await row.textContent()).toContain(String(process.pid));
      expect(await row.textContent()).toMatch(/ago|now/);
      await done();
    } finally {
      await worker.stop();
    }
  });

  it('keys: / searches, g q and g s go to pages, j / k and Enter open a row, ? lists the keys', async () => {
    await backend().enqueue([newTask('keys', { n: 1 }, { id: 'key-1', queue: 'q-keys' }), newTask('keys', { n: 2 }, { id: 'key-2', queue: 'q-keys' })]);
    const page = await go('/');
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.keyboard.press('g');
    await page.keyboard.press('q');
    await page.getByRole('heading', { name: 'Queues' }).waitFor();
    await page.keyboard.press('g');
    await page.keyboard.press('s');
    await page.getByRole('heading', { name: 'Schedules' }).waitFor();
    await page.keyboard.press('/');
    expect(await page.evaluate<string | undefined>('document.activeElement?.id')).toBe('search-box');
    await page.keyboard.type('type:keys');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Search' }).waitFor();
    expect(page.url()).toContain('/search?q=type%3Akeys');
    await page.locator('table.tasks tbody tr').nth(1).waitFor();
    await page.locator('body').click({ position: { x: 5, y: 300 } });
    await page.keyboard.press('j');
    await page.keyboard.press('j');
    await page.keyboard.press('k');
    const first = await page.evaluate<string | undefined>("document.activeElement?.querySelector('a')?.textContent");
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: first! }).waitFor();
    expect(page.url()).toContain(`/tasks/${first}`);
    await page.keyboard.press('?');
    await page.getByRole('dialog', { name: 'Keys' }).waitFor();
    await page.keyboard.press('?');
    expect(await page.getByRole('dialog').count()).toBe(0);
    // Back returns to the search, as the URL has it.
    await page.goBack();
    await page.getByRole('heading', { name: 'Search' }).waitFor();
    await done();
  });

  it('updates arrive live: a task enqueued elsewhere shows without a reload', async () => {
    await backend().enqueue([newTask('live', {}, { queue: 'q-live' })]);
    const page = await go('/queues/q-live?state=queued');
    await expect.poll(() => page.locator('table.tasks tbody tr').count()).toBe(1);
    await page.locator('.live-live').waitFor();
    await center.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { type: 'live', queue: 'q-live' } });
    await expect.poll(() => page.locator('table.tasks tbody tr').count(), { timeout: 5_000 }).toBe(2);
    await done();
  });
});
