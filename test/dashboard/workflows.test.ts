/**
 * The workflow pages on a real task center and SQLite store, in a real browser: the list, the
 * graph with each node's state, the nodes table, the links between a node and its task, and
 * cancel / retry acting on the store (read-only tokens get neither).
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chain, chord, Client, group, task, Worker } from '../../src/index.js';
import { sqliteStore } from '../helpers/sqlite-store.js';
import { axeViolations, HAS_CHROMIUM, launchBrowser, openTab, scrollsSideways, startCenter, type Center, type Tab } from './browser.js';

const ADMIN = 'admin-token-for-workflows';
const READ = 'read-token-for-workflows';
/** Small running workflows seeded to fill more than one page of the list. */
const FILLERS = 52;

describe.skipIf(!HAS_CHROMIUM)('dashboard workflow pages', () => {
  let browser: Browser;
  let center: Center;
  let client: Client;
  let tab: Tab;
  beforeAll(async () => {
    [browser, center] = await Promise.all([launchBrowser(), startCenter(sqliteStore, { apiToken: ADMIN, readToken: READ })]);
    client = new Client(center.store.backend);
    for (let i = 0; i < FILLERS; i++) await client.enqueueWorkflow(task('wf:filler', { i }, { queue: 'wf-idle' }), { id: `filler-${String(i).padStart(2, '0')}` });
    // A diamond: start, then left and right side by side, then join. No worker serves right's queue.
    await client.enqueueWorkflow(
      chain(
        task('wf:start', { rows: 3 }, { node: 'start', queue: 'wf-q' }),
        group(task('wf:left', null, { node: 'left', queue: 'wf-q' }), task('wf:right', null, { node: 'right', queue: 'wf-idle' })),
        task('wf:join', null, { node: 'join', queue: 'wf-q' }),
      ),
      { id: 'diamond', name: 'diamond import' },
    );
    // Fails at its first node (fail fast cancels the second).
    await client.enqueueWorkflow(chain(task('wf:charge', { order: 7 }, { node: 'charge', queue: 'wf-q', maxRetries: 0 }), task('wf:ship', null, { node: 'ship', queue: 'wf-q' })), {
      id: 'failing',
      name: 'checkout',
    });
    await client.enqueueWorkflow(chain(task('wf:a', null, { node: 'a', queue: 'wf-idle' }), task('wf:b', null, { node: 'b', queue: 'wf-idle' })), { id: 'to-cancel' });
    // Too many nodes for a box each: the graph shows its layers counted by state.
    await client.enqueueWorkflow(chord(Array.from({ length: 300 }, (_, i) => task('wf:member', { i }, { node: `m${i}`, queue: 'wf-idle' })), task('wf:total', null, { node: 'total', queue: 'wf-idle' })), { id: 'big' });
    // More layers than boxes: neighbouring layers share one.
    await client.enqueueWorkflow(chain(...Array.from({ length: 450 }, (_, i) => task('wf:step', { i }, { node: `s${i}`, queue: 'wf-idle' }))), { id: 'long' });
    const worker = new Worker(center.store.backend, { queues: ['wf-q'], concurrency: 2, idleWait: 200 });
    worker.handle('wf:start', async () => ({ started: true }));
    worker.handle('wf:left', async () => 'left done');
    worker.handle('wf:charge', async () => {
      throw new Error('card declined');
    });
    await worker.start();
    const deadline = Date.now() + 10_000;
    for (;;) {
      const [diamond, failing] = await Promise.all([client.getWorkflow('diamond'), client.getWorkflow('failing')]);
      if (diamond?.counts.completed === 2 && failing?.state === 'failed') break;
      if (Date.now() > deadline) throw new Error(`not seeded: ${JSON.stringify([diamond?.counts, failing?.state])}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await worker.stop();
  });
  afterAll(async () => {
    await client?.close();
    await browser?.close();
    await center?.close();
  });
  const go = async (path: string, token = ADMIN) => {
    tab = await openTab(browser, { token });
    await tab.page.goto(`${center.url}${path}`);
    return tab.page;
  };
  const done = async () => {
    expect(tab.problems).toEqual([]);
    await tab.context.close();
  };
  const nodeTaskId = async (workflow: string, node: string) => (await client.getWorkflow(workflow))!.nodes.find((x) => x.id === node)!.taskId!;

  it('the list shows each workflow with its state and nodes done, filters by state in the URL, and pages with a cursor', async () => {
    const page = await go('/');
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.keyboard.press('g');
    await page.keyboard.press('l');
    await page.getByRole('heading', { name: 'Workflows' }).waitFor();
    expect(await page.title()).toBe('Workflows · Taskline');
    const diamond = page.getByRole('row', { name: /^diamond/ });
    await diamond.waitFor();
    expect(await diamond.textContent()).toMatch(/diamond import.*running.*2 of 4 done.*completed 2.*queued 1.*pending 1/);
    const failing = page.getByRole('row', { name: /^failing/ });
    expect(await failing.textContent()).toMatch(/checkout.*failed.*0 of 2 done.*dead 1.*cancelled 1/);
    // Newest first, 50 to a page.
    expect(await page.locator('tbody tr').count()).toBe(50);
    await page.getByRole('button', { name: 'Next page' }).click();
    await expect.poll(() => page.url()).toContain('cursor=');
    await expect.poll(() => page.locator('tbody tr').count()).toBe(FILLERS + 5 - 50);
    expect(await page.locator('tbody tr th').last().textContent()).toBe('filler-00');
    await page.getByRole('link', { name: 'failed' }).click();
    await expect.poll(() => page.url()).toMatch(/\/workflows\?state=failed$/);
    await expect.poll(() => page.locator('tbody tr th').allTextContents()).toEqual(['failing']);
    await page.getByRole('link', { name: 'completed' }).click();
    await page.getByText('No completed workflows.').waitFor();
    // Back goes back to the state before, as the URL has it.
    await page.goBack();
    await expect.poll(() => page.locator('tbody tr th').allTextContents()).toEqual(['failing']);
    await done();
  });

  it('the graph lays the nodes out in layers, each with its state; a pending node says what it waits on', async () => {
    const page = await go('/workflows/diamond');
    await page.getByRole('heading', { name: /diamond/ }).waitFor();
    expect(await page.title()).toBe('diamond · Workflows · Taskline');
    const box = (id: string) => page.locator(`.wf-graph [data-node="${id}"]`);
    await box('join').waitFor();
    const texts = async (id: string) => (await box(id).locator('text').allTextContents()).join(' | ');
    expect(await texts('start')).toBe('start | wf:start | completed');
    expect(await texts('left')).toBe('left | wf:left | completed');
    expect(await texts('right')).toBe('right | wf:right | queued');
    expect(await texts('join')).toBe('join | wf:join | pending · waiting on 1 of 2');
    // Coloured as the task badges are.
    expect(await box('start').locator('.wf-node').getAttribute('class')).toBe('wf-node state-completed');
    expect(await box('join').locator('.wf-node').getAttribute('class')).toBe('wf-node state-pending');
    // Layers from left to right: start, then left and right one above the other, then join.
    const at = async (id: string) => (await box(id).locator('.wf-node').getAttribute('transform'))!.match(/translate\(([\d.]+) ([\d.]+)\)/)!.slice(1).map(Number);
    const [start, left, right, join] = await Promise.all(['start', 'left', 'right', 'join'].map(at));
    expect(start[0]).toBeLessThan(left[0]);
    expect(left[0]).toBe(right[0]);
    expect(left[1]).toBeLessThan(right[1]);
    expect(join[0]).toBeGreaterThan(left[0]);
    expect(await page.locator('.wf-edge').count()).toBe(4);
    expect(await page.locator('.wf-edge.done').count()).toBe(3);
    // Started nodes are links to their tasks; a pending one has no task to open.
    expect(await page.locator('.wf-graph a[data-node]').count()).toBe(3);
    expect(await page.locator('.wf-graph a[data-node="join"]').count()).toBe(0);
    // The nodes table, in declared order.
    expect(await page.locator('table.nodes tbody th').allTextContents()).toEqual(['start', 'left', 'right', 'join']);
    const joinRow = page.getByRole('row', { name: /^join/ });
    expect(await joinRow.textContent()).toMatch(/pendingwaiting on 1 of 2.*wf:join.*wf-q.*left, right.*pending$/);
    expect(await page.getByRole('row', { name: /^start/ }).textContent()).toContain('{ "started": true }');
    expect(await page.getByRole('row', { name: /^left/ }).textContent()).toContain('"left done"');
    await done();
  });

  it('clicking a node opens its task; the task page links back to the workflow and names the node', async () => {
    const leftTask = await nodeTaskId('diamond', 'left');
    const page = await go('/workflows/diamond');
    await page.getByRole('link', { name: 'left (wf:left on wf-q): completed' }).click();
    await expect.poll(() => page.url()).toBe(`${center.url}/tasks/${leftTask}`);
    await page.getByRole('heading', { name: leftTask }).waitFor();
    expect(await page.locator('.fields dd', { hasText: 'diamond' }).textContent()).toBe('diamond node left');
    await page.getByRole('link', { name: 'diamond', exact: true }).click();
    await expect.poll(() => page.url()).toBe(`${center.url}/workflows/diamond`);
    await page.locator('.wf-graph').waitFor();
    // The failed node's row links to its task too (the error shows, clipped to its first line).
    await page.goto(`${center.url}/workflows/failing`);
    const charge = page.getByRole('row', { name: /^charge/ });
    expect(await charge.textContent()).toContain('card declined');
    await charge.getByRole('link').click();
    await page.getByLabel('error').waitFor();
    expect(await page.getByLabel('error').textContent()).toContain('card declined');
    await done();
  });

  it('Retry runs a failed workflow again; Cancel cancels a running one (each after a confirmation)', async () => {
    const page = await go('/workflows/failing');
    await page.getByRole('heading', { name: /failing/ }).waitFor();
    expect(await page.getByRole('button', { name: 'Cancel' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Retry' }).isEnabled()).toBe(true);
    const asked: string[] = [];
    page.on('dialog', (dialog) => {
      asked.push(dialog.message());
      void dialog.accept();
    });
    await page.getByRole('button', { name: 'Retry' }).click();
    await expect.poll(async () => (await client.getWorkflow('failing'))?.state).toBe('running');
    await page.locator('h1 .badge', { hasText: 'running' }).waitFor();
    expect(await page.getByRole('button', { name: 'Retry' }).isDisabled()).toBe(true);
    await page.goto(`${center.url}/workflows/to-cancel`);
    await page.getByRole('heading', { name: /to-cancel/ }).waitFor();
    expect(await page.getByRole('button', { name: 'Retry' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(async () => (await client.getWorkflow('to-cancel'))?.state).toBe('cancelled');
    await page.locator('h1 .badge', { hasText: 'cancelled' }).waitFor();
    expect(asked).toEqual([
      'Retry workflow failing? Its dead and cancelled nodes run again; completed results are kept.',
      'Cancel workflow to-cancel? Its waiting nodes are cancelled; running ones are asked to stop.',
    ]);
    await done();
  });

  it('a read-only token sees the workflows and neither Cancel nor Retry', async () => {
    const page = await go('/', READ);
    await page.locator('header.top nav').getByRole('link', { name: 'Workflows' }).click();
    await page.getByRole('row', { name: /^diamond/ }).waitFor();
    expect(await page.locator('main button').allTextContents()).toEqual(['First page', 'Next page']);
    for (const id of ['diamond', 'to-cancel']) {
      await page.goto(`${center.url}/workflows/${id}`);
      await page.locator('.wf-graph').waitFor();
      expect(await page.getByRole('button', { name: /Cancel|Retry/ }).count(), id).toBe(0);
      expect((await page.locator('main button').allTextContents()).filter((b) => !['First page', 'Next page'].includes(b)), id).toEqual([]);
    }
    await done();
  });

  it('an unknown workflow says so', async () => {
    const page = await go('/workflows/no-such-flow');
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toMatch(/^No workflow has this id/);
    expect(await page.getByRole('heading', { name: 'no-such-flow' }).count()).toBe(1);
    await done();
  });

  it('a workflow of over 200 nodes shows a box per layer with counts by state, and pages its nodes table', async () => {
    const page = await go('/workflows/big');
    await page.locator('.wf-layer').first().waitFor();
    const layers = page.locator('.wf-layer');
    expect(await layers.count()).toBe(2);
    expect(await layers.nth(0).locator('text').allTextContents()).toEqual(['layer 1', '300 nodes', 'queued 300']);
    expect(await layers.nth(1).locator('text').allTextContents()).toEqual(['layer 2', '1 node', 'pending 1']);
    expect(await page.locator('.wf-graph [data-node]').count()).toBe(0);
    expect(await page.locator('table.nodes tbody tr').count()).toBe(50);
    await page.getByRole('button', { name: 'Next page' }).click();
    await expect.poll(() => page.url()).toContain('from=50');
    await expect.poll(() => page.locator('table.nodes tbody th').first().textContent()).toBe('m50');
    await page.getByRole('link', { name: /^pending/ }).click();
    await expect.poll(() => page.locator('table.nodes tbody th').allTextContents()).toEqual(['total']);
    expect(page.url()).not.toContain('from=');
    const total = page.getByRole('row', { name: /^total/ });
    expect(await total.textContent()).toMatch(/waiting on 300 of 300.*m0, m1, m2, m3, m4 and 295 more/);
    // 450 layers in 150 boxes of 3.
    await page.goto(`${center.url}/workflows/long`);
    await page.locator('.wf-layer').first().waitFor();
    expect(await layers.count()).toBe(150);
    expect(await layers.nth(0).locator('text').allTextContents()).toEqual(['layers 1–3', '3 nodes', 'queued 1', 'pending 2']);
    expect(await layers.nth(149).locator('text').allTextContents()).toEqual(['layers 448–450', '3 nodes', 'pending 3']);
    expect(await page.locator('.wf-edge').count()).toBe(149);
    await done();
  });

  it('with a box per node or per layer: no serious axe violation in either theme, no sideways scroll at 375 px', async () => {
    for (const [theme, width] of [['light', 1280], ['dark', 1280], ['light', 375]] as const) {
      tab = await openTab(browser, { token: ADMIN, width });
      await tab.page.emulateMedia({ colorScheme: theme });
      for (const path of ['/workflows/diamond', '/workflows/failing', '/workflows/big']) {
        await tab.page.goto(`${center.url}${path}`);
        await tab.page.locator('.wf-graph').waitFor();
        if (width === 375) expect(await scrollsSideways(tab.page), `${path} at 375 px`).toBe(false);
        else expect(await axeViolations(tab.page), `${path} ${theme}`).toEqual([]);
      }
      await done();
    }
  });

  it('updates arrive live: a workflow created elsewhere shows without a reload, and its nodes move', async () => {
    const page = await go('/');
    await page.locator('header.top nav').getByRole('link', { name: 'Workflows' }).click();
    await page.getByRole('link', { name: 'running' }).click();
    await page.getByRole('row', { name: /^diamond/ }).waitFor();
    await page.locator('.live-live').waitFor();
    const res = await center.app.inject({
      method: 'POST', url: '/api/v1/workflows', headers: { authorization: `Bearer ${ADMIN}` },
      payload: { id: 'arrives-live', nodes: [{ id: 'one', type: 'wf:live', queue: 'wf-live' }, { id: 'two', type: 'wf:live', queue: 'wf-live', dependsOn: ['one'] }] },
    });
    expect(res.statusCode).toBe(201);
    await page.getByRole('row', { name: /^arrives-live/ }).waitFor({ timeout: 5_000 });
    await page.getByRole('link', { name: 'arrives-live' }).click();
    const two = page.locator('.wf-graph [data-node="two"] text').last();
    await expect.poll(() => two.textContent()).toBe('pending · waiting on 1 of 1');
    const worker = new Worker(center.store.backend, { queues: ['wf-live'], concurrency: 1, idleWait: 200 });
    worker.handle('wf:live', async () => 'ok');
    await worker.start();
    try {
      await page.locator('h1 .badge', { hasText: 'completed' }).waitFor({ timeout: 10_000 });
      expect(await two.textContent()).toBe('completed');
    } finally {
      await worker.stop();
    }
    await done();
  });
});
