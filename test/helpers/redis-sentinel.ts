/**
 * A private Redis Sentinel setup on free ports: one master, its replicas and three Sentinels
 * watching it as `taskline`, for tests of failover (a SIGKILLed master, a replica promoted).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './ports.js';
import { RedisServer } from './redis-server.js';
import { tempDir } from './stores.js';

export const MASTER_NAME = 'taskline';

export class RedisSentinels {
  private readonly dir = tempDir('taskline-sentinel');
  private readonly sentinels: ChildProcess[] = [];
  readonly sentinelPorts: number[] = [];

  private constructor(readonly servers: RedisServer[]) {}

  /** Starts a master, `replicas` replicas of it and 3 Sentinels (a failover after 1 s down), and waits until the Sentinels see them all. */
  static async start(replicas = 2): Promise<RedisSentinels> {
    // A full sync starts at once (Redis waits 5 s for more replicas by default), on any node
    // that becomes a master.
    const sync = ['--repl-diskless-sync-delay', '0'];
    const master = await RedisServer.start({ args: sync });
    const servers = [master];
    for (let i = 0; i < replicas; i++) servers.push(await RedisServer.start({ args: [...sync, '--replicaof', '127.0.0.1', String(master.port)] }));
    const setup = new RedisSentinels(servers);
    try {
      await setup.waitForReplicas(servers.slice(1));
      for (let i = 0; i < 3; i++) await setup.startSentinel(master.port, i);
      await setup.waitFor(async (sentinel) => {
        const seen = (await sentinel.call('SENTINEL', 'REPLICAS', MASTER_NAME)) as string[][];
        const others = (await sentinel.call('SENTINEL', 'SENTINELS', MASTER_NAME)) as string[][];
        return seen.filter((r) => !flags(r).includes('down')).length === replicas && others.length === 2;
      });
    } catch (error) {
      await setup.destroy();
      throw error;
    }
    return setup;
  }

  /** Waits until each replica's link to its master is up (its first sync done). */
  async waitForReplicas(replicas: RedisServer[], timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (const replica of replicas) {
      const redis = new Redis(replica.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
      try {
        while (!/master_link_status:up/.test(await redis.info('replication'))) {
          if (Date.now() > deadline) throw new Error(`the replica on port ${replica.port} did not sync`);
          await new Promise((r) => setTimeout(r, 50));
        }
      } finally {
        redis.disconnect();
      }
    }
  }

  /** The backend URL of the watched master, with URL options (e.g. `?durability=replicated`). */
  url(query = ''): string {
    return `redis+sentinel://${this.sentinelPorts.map((p) => `127.0.0.1:${p}`).join(',')}/${MASTER_NAME}${query}`;
  }

  /** The port of the master the Sentinels name now. */
  async masterPort(): Promise<number> {
    const sentinel = new Redis(this.sentinelPorts[0], '127.0.0.1', { maxRetriesPerRequest: 1 });
    try {
      const [, port] = (await sentinel.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', MASTER_NAME)) as [string, string];
      return Number(port);
    } finally {
      sentinel.disconnect();
    }
  }

  /** The data node on a port. */
  server(port: number): RedisServer {
    const found = this.servers.find((s) => s.port === port);
    if (!found) throw new Error(`no data node on port ${port}`);
    return found;
  }

  private async startSentinel(masterPort: number, index: number): Promise<void> {
    const port = await freePort();
    const file = join(this.dir.path, `sentinel-${index}.conf`);
    writeFileSync(
      file,
      [
        `port ${port}`, 'bind 127.0.0.1', `dir ${this.dir.path}`,
        `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${masterPort} 2`,
        `sentinel down-after-milliseconds ${MASTER_NAME} 1000`,
        `sentinel failover-timeout ${MASTER_NAME} 5000`,
        `sentinel parallel-syncs ${MASTER_NAME} 2`,
      ].join('\n') + '\n',
    );
    this.sentinels.push(spawn('redis-server', [file, '--sentinel'], { stdio: 'ignore' }));
    this.sentinelPorts.push(port);
  }

  /** Waits (up to 20 s) until every Sentinel answers `check` with true. */
  async waitFor(check: (sentinel: Redis) => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      let all = true;
      for (const port of this.sentinelPorts) {
        const sentinel = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
        sentinel.on('error', () => undefined);
        try {
          await sentinel.connect();
          if (!(await check(sentinel))) all = false;
        } catch {
          all = false;
        } finally {
          sentinel.disconnect();
        }
        if (!all) break;
      }
      if (all) return;
      if (Date.now() > deadline) throw new Error('the Sentinels did not settle');
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async destroy(): Promise<void> {
    for (const sentinel of this.sentinels) if (sentinel.exitCode === null) sentinel.kill('SIGKILL');
    await Promise.all(this.servers.map((s) => s.destroy()));
    this.dir.remove();
  }
}

/** The flags of a Sentinel's entry (a flat list of names and values). */
function flags(entry: string[]): string {
  const at = entry.indexOf('flags');
  return at >= 0 ? entry[at + 1] : '';
}
