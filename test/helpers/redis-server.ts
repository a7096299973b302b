/** A private redis-server on a free port, for tests that stop, restart or kill Redis. */
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from './ports.js';
import { Redis } from 'ioredis';
import { tempDir } from './stores.js';

export { freePort };

export class RedisServer {
  private process: ChildProcess | null = null;
  private readonly dir = tempDir('taskline-redis');

  private constructor(readonly port: number, private readonly appendOnly: boolean, private readonly extraArgs: string[]) {}

  /** `args`: more redis-server arguments (e.g. `--replicaof 127.0.0.1 6380`); with `--cluster-enabled`, its bus port (+10,000) is free too. */
  static async start(options: { appendOnly?: boolean; args?: string[] } = {}): Promise<RedisServer> {
    const port = await freePort({ bus: options.args?.includes('--cluster-enabled') ?? false });
    const server = new RedisServer(port, options.appendOnly ?? false, options.args ?? []);
    await server.start();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--dir', this.dir.path, '--daemonize', 'no'];
    if (this.appendOnly) args.push('--appendonly', 'yes', '--appendfsync', 'always');
    else args.push('--appendonly', 'no');
    args.push(...this.extraArgs);
    this.process = spawn('redis-server', args, { stdio: 'ignore' });
    await this.waitUntilReady();
  }

  private async waitUntilReady(): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const redis = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      redis.on('error', () => undefined);
      try {
        await redis.connect();
        if ((await redis.ping()) === 'PONG') return;
      } catch {
        // not up yet
      } finally {
        redis.disconnect();
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`redis-server on port ${this.port} did not start`);
  }

  /** Stops the server (SIGTERM: with AOF on, everything acknowledged is on disk). */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.process;
    this.process = null;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill(signal);
    });
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async destroy(): Promise<void> {
    await this.stop('SIGKILL');
    this.dir.remove();
  }
}
