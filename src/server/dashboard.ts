/**
 * The dashboard: the built single-page app (dashboard/, built by `npm run build` into
 * dist/dashboard/) served at `/`, with its history routes answering the same page so a deep link
 * or a reload opens the view it names. The files are read once, at start. Every page carries a
 * Content-Security-Policy that allows only this server's own scripts, styles and API.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** The client-side routes: each answers index.html, and the app shows the view. */
export const DASHBOARD_ROUTES = ['/', '/queues', '/queues/*', '/tasks/*', '/dead', '/schedules', '/schedules/*', '/workflows', '/workflows/*', '/workers', '/search', '/audit'];

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

interface File {
  body: Buffer;
  type: string;
}

/** Where the built dashboard is: next to the compiled server (dist/), or dist/ seen from src/. */
export function dashboardDirectory(): string | null {
  const here = fileURLToPath(new URL('.', import.meta.url));
  for (const candidate of [join(here, '../dashboard'), join(here, '../../dist/dashboard')]) {
    if (existsSync(join(candidate, 'index.html'))) return candidate;
  }
  return null;
}

function readTree(root: string, prefix = ''): Map<string, File> {
  const files = new Map<string, File>();
  for (const name of readdirSync(join(root, prefix))) {
    const path = prefix === '' ? name : `${prefix}/${name}`;
    if (statSync(join(root, path)).isDirectory()) {
      for (const [key, file] of readTree(root, path)) files.set(key, file);
    } else {
      files.set(`/${path}`, { body: readFileSync(join(root, path)), type: TYPES[extname(name)] ?? 'application/octet-stream' });
    }
  }
  return files;
}

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Taskline</title></head><body>
<h1>The dashboard is not built</h1><p>Run <code>npm run build</code> in the Taskline checkout; the API is at <a href="/api/v1">/api/v1</a>.</p></body></html>`;

function secure(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', CONTENT_SECURITY_POLICY)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY');
}

/**
 * Serves the dashboard. The page itself needs no token (it holds no data: every figure comes
 * from the API, which asks for one); `directory` null serves a page saying how to build it.
 */
export function registerDashboard(app: FastifyInstance, directory: string | null = dashboardDirectory()): void {
  const files = directory === null ? new Map<string, File>() : readTree(directory);
  const index = files.get('/index.html');
  const page = async (_request: unknown, reply: FastifyReply) => {
    secure(reply).header('cache-control', 'no-cache');
    if (!index) return reply.status(503).type('text/html; charset=utf-8').send(NOT_BUILT);
    return reply.type(index.type).send(index.body);
  };
  for (const route of DASHBOARD_ROUTES) app.get(route, page);
  app.get('/assets/*', async (request, reply) => {
    const path = request.url.split('?')[0];
    let file: File | undefined;
    try {
      file = files.get(decodeURIComponent(path));
    } catch {
      file = undefined;
    }
    if (!file) return reply.status(404).send({ error: { code: 'TL_NOT_FOUND', message: `no dashboard file ${path}` } });
    // Built file names carry a hash of their content: a browser may keep them for good.
    return secure(reply).header('cache-control', 'public, max-age=31536000, immutable').type(file.type).send(file.body);
  });
}
