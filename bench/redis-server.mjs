// A private, throw-away redis-server for one benchmark run: 127.0.0.1 only, a free port, no
// persistence, its own temporary directory.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export class RedisServer {
  constructor(binary, port, dir, child) {
    this.binary = binary;
    this.port = port;
    this.dir = dir;
    this.child = child;
    this.url = `redis://127.0.0.1:${port}`;
  }

  static async start(binary = 'redis-server') {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'taskline-bench-redis-'));
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--protected-mode', 'yes', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no', '--loglevel', 'warning'];
    const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'inherit'] });
    const server = new RedisServer(binary, port, dir, child);
    const spawned = new Promise((resolve, reject) => {
      child.once('error', (error) => reject(new Error(`cannot start ${binary}: ${error.message} (set REDIS_SERVER to its path)`)));
      child.once('spawn', resolve);
    });
    await spawned;
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`${binary} exited with code ${child.exitCode} at start`);
      const probe = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        if ((await probe.ping()) === 'PONG') return server;
      } catch {
        // not up yet
      } finally {
        probe.disconnect();
      }
      await sleep(50);
    }
    server.killNow();
    throw new Error(`${binary} on port ${port} did not answer within 10 s`);
  }

  /** Synchronous, for exit handlers. */
  killNow() {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }

  async stop() {
    const child = this.child;
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(5_000)]);
    }
    this.killNow();
  }
}

/** Parses an INFO section into { key: value } (numbers where they look like numbers). */
export function parseInfo(text) {
  const out = {};
  for (const line of text.split('\r\n')) {
    if (!line || line.startsWith('#')) continue;
    const colon = line.indexOf(':');
    const key = line.slice(0, colon);
    const value = line.slice(colon + 1);
    out[key] = /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
  }
  return out;
}

/** Calls per command from INFO commandstats (the benchmark's own INFO calls excluded). */
export function parseCommandStats(text) {
  const calls = {};
  for (const line of text.split('\r\n')) {
    const match = /^cmdstat_([^:]+):calls=(\d+)/.exec(line);
    if (match && match[1] !== 'info') calls[match[1]] = Number(match[2]);
  }
  return calls;
}

/** What the parent reads around a measurement: memory, Redis CPU and command counts. */
export async function snapshot(redis) {
  const [memory, cpu, commands] = await Promise.all([redis.info('memory'), redis.info('cpu'), redis.info('commandstats')]);
  const m = parseInfo(memory);
  const c = parseInfo(cpu);
  return {
    usedMemory: m.used_memory,
    cpuSeconds: c.used_cpu_user + c.used_cpu_sys,
    commands: parseCommandStats(commands),
  };
}

export function diffSnapshots(before, after) {
  const commands = {};
  let total = 0;
  for (const [name, calls] of Object.entries(after.commands)) {
    const delta = calls - (before.commands[name] ?? 0);
    if (delta > 0) {
      commands[name] = delta;
      total += delta;
    }
  }
  const scriptCalls = (commands.evalsha ?? 0) + (commands.eval ?? 0) + (commands.fcall ?? 0) + (commands.evalsha_ro ?? 0) + (commands.eval_ro ?? 0);
  return { memoryBytes: after.usedMemory - before.usedMemory, cpuSeconds: after.cpuSeconds - before.cpuSeconds, commands, totalCommands: total, scriptCalls };
}
