/** The task center serves the built dashboard: history routes, assets, headers, and no build. */
import { readdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { dashboardDirectory } from '../../src/server/dashboard.js';
import { sqliteStore } from '../helpers/sqlite-store.js';
import { startApi, type TestApi } from './helpers.js';

describe('the dashboard files', () => {
  let api: TestApi | null = null;
  afterEach(async () => {
    await api?.close();
    api = null;
  });

  it('answers every history route with the page and its Content-Security-Policy', async () => {
    api = await startApi(sqliteStore);
    for (const url of ['/', '/queues', '/queues/mail', '/tasks/abc', '/dead', '/schedules', '/schedules/nightly', '/schedules/a/edit', '/workers', '/search?q=state:dead', '/audit', '/workflows', '/workflows?state=failed', '/workflows/w1']) {
      const res = await api.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.body).toContain('<div id="root"></div>');
      const csp = String(res.headers['content-security-policy']);
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(res.headers['cache-control']).toBe('no-cache');
    }
    // The page has no inline script or style for the policy to refuse.
    const page = (await api.app.inject({ method: 'GET', url: '/' })).body;
    expect(page).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(page).not.toMatch(/<style|style="/);
  });

  it('serves the built assets for good, and a JSON 404 for one that is not there', async () => {
    api = await startApi(sqliteStore);
    const directory = dashboardDirectory();
    expect(directory).not.toBeNull();
    const script = readdirSync(join(directory!, 'assets')).find((f) => f.endsWith('.js'))!;
    const res = await api.app.inject({ method: 'GET', url: `/assets/${script}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const head = await api.app.inject({ method: 'HEAD', url: `/assets/${script}` });
    expect(head.statusCode).toBe(200);
    for (const url of ['/assets/nope.js', '/assets/../package.json', '/assets/%2e%2e/package.json']) {
      const missing = await api.app.inject({ method: 'GET', url });
      expect(missing.statusCode, url).toBe(404);
      expect(missing.json()).toMatchObject({ error: { code: 'TL_NOT_FOUND' } });
    }
    const badEscape = await api.app.inject({ method: 'GET', url: '/assets/%E0%A4%A' });
    expect(badEscape.statusCode).toBe(400);
    expect(badEscape.json()).toMatchObject({ error: { code: expect.stringMatching(/^TL_/) } });
    // Unknown pages outside the app stay the API's 404.
    expect((await api.app.inject({ method: 'GET', url: '/nowhere' })).statusCode).toBe(404);
  });

  it('the page loads at most 200 kB of JavaScript, gzipped', () => {
    const assets = join(dashboardDirectory()!, 'assets');
    const scripts = readdirSync(assets).filter((f) => f.endsWith('.js'));
    const gzipped = scripts.reduce((sum, f) => sum + gzipSync(readFileSync(join(assets, f)), { level: 9 }).length, 0);
    expect(gzipped).toBeGreaterThan(10_000);
    expect(gzipped).toBeLessThanOrEqual(200 * 1024);
  });

  it('without a build, says how to make one (503), and the API still answers', async () => {
    api = await startApi(sqliteStore, { dashboardDirectory: null });
    const res = await api.app.inject({ method: 'GET', url: '/queues' });
    expect(res.statusCode).toBe(503);
    expect(res.body).toContain('npm run build');
    expect((await api.app.inject({ method: 'GET', url: '/api/v1/queues' })).statusCode).toBe(200);
  });
});
