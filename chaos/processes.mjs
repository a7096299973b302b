// The chaos suite's processes: a private redis-server with AOF, worker and task-center children,
// free ports, and the cleanup that kills every one of them when the run ends, fails or is
// interrupted.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'dist/cli/main.js');
const WORKER = join(ROOT, 'chaos/worker.mjs');

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const live = new Set();
const dirs = new Set();

export function cleanupNow() {
  for (const child of live) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  live.clear();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs.clear();
}

export function installCleanup() {
  process.on('exit', cleanupNow);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      console.error(`\n${signal}: stopping the chaos run and its processes`);
      cleanupNow();
      process.exit(130);
    });
  }
}

/** A temporary directory removed at cleanup. */
export function tempDir(name) {
  const dir = mkdtempSync(join(tmpdir(), `taskline-chaos-${name}-`));
  dirs.add(dir);
  return dir;
}

export async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Settings a parent's environment could pass on to a child by mistake. */
function childEnv(extra) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^(TASKLINE_|SCHEDULER_|REDIS_URL$|BROKER_URL$|RESULT_BACKEND$|METRICS_PORT$|PORT$|LOCK_TTL$)/.test(key)) env[key] = value;
  }
  return { ...env, ...extra };
}

/** A child process whose stdout lines can be awaited. */
class Child {
  constructor(command, args, env, cwd) {
    this.output = '';
    this.process = spawn(command, args, { env: childEnv(env), cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    live.add(this.process);
    this.process.stdout.setEncoding('utf8').on('data', (chunk) => (this.output += chunk));
    this.process.stderr.setEncoding('utf8').on('data', (chunk) => (this.output += chunk));
    this.exited = new Promise((resolve) => this.process.once('exit', (code, signal) => {
      live.delete(this.process);
      resolve({ code, signal });
    }));
  }

  get pid() {
    return this.process.pid;
  }

  get running() {
    return this.process.exitCode === null && this.process.signalCode === null;
  }

  /** Resolves with the match once `pattern` appears in the output; rejects on exit or after `timeoutMs`. */
  async waitFor(pattern, timeoutMs, what) {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const match = this.output.match(pattern);
      if (match) return match;
      if (!this.running) throw new Error(`${what} exited before it was ready:\n${this.output.slice(-2000)}`);
      if (Date.now() > until) throw new Error(`${what} was not ready within ${timeoutMs / 1000} s:\n${this.output.slice(-2000)}`);
      await sleep(20);
    }
  }

  signal(name) {
    if (this.running) this.process.kill(name);
  }

  /** SIGTERM, then SIGKILL if it is still running after `graceMs`. */
  async stop(graceMs = 8000) {
    if (!this.running) return;
    this.process.kill('SIGCONT');
    this.process.kill('SIGTERM');
    const timer = setTimeout(() => this.signal('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}

/** A worker of chaos/worker.mjs; resolves once it claims tasks. */
export async function startWorker(store, log) {
  const child = new Child(process.execPath, [WORKER], { STORE: store.url, PREFIX: store.prefix ?? '', LOG: log, LEASE_MS: '1500', CONCURRENCY: '10' }, ROOT);
  await child.waitFor(/^ready$/m, 30_000, 'a worker');
  return child;
}

/** `taskline server` on a free loopback port, with its scheduler; resolves with its scheduler id once it is ready. */
export async function startServer(store, cwd) {
  const port = await freePort();
  const args = [CLI, '--backend', store.url, ...(store.prefix ? ['--prefix', store.prefix] : []), 'server', '--port', String(port)];
  const child = new Child(process.execPath, args, {}, cwd);
  const [, id] = await child.waitFor(/scheduler {3}running \((scheduler-[^;]+);[^\n]*\n[\s\S]*^ready/m, 30_000, 'a task center');
  return Object.assign(child, { id, url: `http://127.0.0.1:${port}` });
}

function ping(port) {
  return new Promise((resolve) => {
    const socket = createConnection(port, '127.0.0.1');
    let reply = '';
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk;
      if (reply.includes('\r\n')) {
        socket.destroy();
        resolve(reply.startsWith('+PONG'));
      }
    });
    socket.on('error', () => resolve(false));
    socket.setTimeout(1000, () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/**
 * A private redis-server with its append-only file (`appendfsync everysec`, the production
 * setting), killed with SIGKILL and started again on the same port and directory, where it reloads
 * what the file holds.
 */
export class RedisServer {
  static async start() {
    const server = new RedisServer(await freePort(), tempDir('redis'));
    await server.restart();
    return server;
  }

  constructor(port, dir) {
    this.port = port;
    this.dir = dir;
    this.url = `redis://127.0.0.1:${port}`;
    this.child = null;
  }

  async restart() {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'everysec', '--daemonize', 'no'];
    this.child = new Child('redis-server', args, {}, this.dir);
    const until = Date.now() + 20_000;
    // A server that is loading its file answers -LOADING until it is done.
    while (!(await ping(this.port))) {
      if (!this.child.running) throw new Error(`redis-server did not start:\n${this.child.output.slice(-2000)}`);
      if (Date.now() > until) throw new Error('redis-server did not answer PING within 20 s');
      await sleep(20);
    }
  }

  async kill() {
    this.child.signal('SIGKILL');
    await this.child.exited;
  }

  async stop() {
    await this.child?.stop(3000);
  }
}
