/**
 * The dashboard's browser tests: Debian's chromium driven by playwright-core, against a real task
 * center (buildServer, listening on a free loopback port) on a real store.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { buildServer, type ServerOptions, type TaskCenterServer } from '../../src/server/app.js';
import type { TestStore } from '../helpers/stores.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const HAS_CHROMIUM = existsSync(CHROMIUM);
if (!HAS_CHROMIUM) console.warn(`skipping the browser tests: no chromium at ${CHROMIUM} (apt-get install chromium; .ci/run installs it)`);

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'];

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true });
}

export interface Center extends TaskCenterServer {
  url: string;
  store: TestStore;
  close(): Promise<void>;
}

/** A task center on `store`, listening on 127.0.0.1 at a free port. */
export async function startCenter(open: () => Promise<TestStore>, options: Omit<ServerOptions, 'backend'> = {}): Promise<Center> {
  const store = await open();
  const server = await buildServer({ backend: store.backend, ...options });
  const address = await server.app.listen({ port: 0, host: '127.0.0.1' });
  return {
    ...server,
    url: address,
    store,
    close: async () => {
      await server.app.close();
      await store.cleanup();
    },
  };
}

export interface Tab {
  context: BrowserContext;
  page: Page;
  /** Errors the page threw or logged, and requests it could not make. */
  problems: string[];
}

/** A fresh browser context (own session storage) with one page, at `width` × 900. */
export async function openTab(browser: Browser, options: { width?: number; token?: string; origin?: string } = {}): Promise<Tab> {
  const context = await browser.newContext({ viewport: { width: options.width ?? 1280, height: 900 } });
  if (options.token) {
    await context.addInitScript(`sessionStorage.setItem('taskline.token', ${JSON.stringify(options.token)})`);
  }
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of 4\d\d/.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  return { context, page, problems };
}

const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page as it is now. */
export async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern.
  await page.evaluate(AXE);
  // (Strings, not functions: the test project has no DOM types.)
  const result = await page.evaluate<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }>("axe.run(document, { resultTypes: ['violations'] })");
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
}

/** Whether the page scrolls sideways (it must not, at any width). */
export function scrollsSideways(page: Page): Promise<boolean> {
  return page.evaluate<boolean>('document.documentElement.scrollWidth > document.documentElement.clientWidth + 1');
}
