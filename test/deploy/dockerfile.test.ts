/**
 * The image (deploy/Dockerfile), checked by reading it: no container runtime runs here. What the
 * deployment docs promise of it: built in stages with the toolchain left behind, production
 * dependencies only, the dashboard built in, a non-root user, a health check on /healthz, and one
 * entry point for the task center and workers.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Script } from 'node:vm';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const dockerfile = readFileSync(resolve(ROOT, 'deploy/Dockerfile'), 'utf8');
const dockerignore = readFileSync(resolve(ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim());
/** The instructions, continuation lines joined, comments left out. */
const instructions = dockerfile
  .replace(/\\\n\s*/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l !== '' && !l.startsWith('#'));
const stages = instructions.reduce<string[][]>((list, line) => (line.startsWith('FROM ') ? [...list, [line]] : (list[list.length - 1]?.push(line), list)), []);
const final = stages[stages.length - 1];

describe('deploy/Dockerfile', () => {
  it('builds in one stage and runs from another, on a Node line the package supports', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const image = /ARG NODE_IMAGE=node:(\d+)/.exec(dockerfile)?.[1];
    const engines = (JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
    expect(engines).toContain(`^${image}`);
    // The toolchain is installed in the build stage only.
    expect(stages[0].join('\n')).toMatch(/apt-get install[^\n]*g\+\+/);
    expect(final.join('\n')).not.toMatch(/apt-get|g\+\+|npm (ci|install)/);
  });

  it('builds the package and the dashboard, and keeps production dependencies only', () => {
    const build = stages[0].join('\n');
    expect(build).toMatch(/RUN npm ci/);
    // `npm run build` is tsc, the assets and the dashboard's vite build (package.json).
    expect(build).toMatch(/npm run build && npm prune --omit=dev/);
    const scripts = (JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.build).toContain('vite build --config dashboard/vite.config.mjs');
    for (const copied of ['src', 'dashboard', 'scripts', 'package-lock.json']) expect(build).toContain(copied);
    for (const kept of ['/app/node_modules', '/app/dist']) expect(final.join('\n')).toContain(`COPY --from=build --chown=node:node ${kept}`);
  });

  it('runs as a user that is not root, with a health check on /healthz and the CLI as entry point', () => {
    const users = final.filter((l) => l.startsWith('USER '));
    expect(users).toEqual(['USER node']);
    const health = final.find((l) => l.startsWith('HEALTHCHECK '));
    expect(health).toMatch(/\/healthz/);
    expect(health).toMatch(/PORT\|\|8080/);
    expect(health).toMatch(/METRICS_PORT\|\|9090/);
    expect(final).toContain('ENTRYPOINT ["node", "dist/cli/main.js"]');
    expect(final).toContain('CMD ["server", "--host", "0.0.0.0"]');
    expect(final.find((l) => l.startsWith('EXPOSE '))).toBe('EXPOSE 8080 9090');
  });

  it('the health check command is valid JavaScript', () => {
    const command = /CMD \["node", "-e", "(.*)"\]$/.exec(final.find((l) => l.startsWith('HEALTHCHECK '))!)?.[1];
    expect(command).toBeDefined();
    // Compiled, not run.
    expect(() => new Script(JSON.parse(`"${command!}"`) as string)).not.toThrow();
  });

  it('leaves what the build does not need out of its context', () => {
    for (const left of ['.git', 'node_modules', 'dist', 'test', '*.db']) expect(dockerignore).toContain(left);
    // What the build copies is not ignored.
    for (const needed of ['src', 'dashboard', 'scripts', 'examples', 'package.json', 'package-lock.json']) expect(dockerignore).not.toContain(needed);
  });
});
