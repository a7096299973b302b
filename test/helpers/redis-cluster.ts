/**
 * A private Redis Cluster on free ports: three masters with one replica each, made by
 * `redis-cli --cluster create`, for the conformance suite, the e2e and failover tests on a Cluster.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Cluster, Redis } from 'ioredis';
import { RedisServer } from './redis-server.js';

const run = promisify(execFile);

export class RedisCluster {
  private constructor(readonly servers: RedisServer[]) {}

  /**
   * Starts `masters` masters and `replicasEach` replicas of each, joins them into one cluster with
   * the slots spread evenly over the masters, and waits until every node says the cluster is ok.
   * `nodeTimeoutMs`: how long a master may be silent before its replica is promoted.
   */
  static async start(options: { masters?: number; replicasEach?: number; nodeTimeoutMs?: number } = {}): Promise<RedisCluster> {
    const masters = options.masters ?? 3;
    const replicasEach = options.replicasEach ?? 1;
    const args = [
      '--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf',
      '--cluster-node-timeout', String(options.nodeTimeoutMs ?? 1000),
      // A full sync starts at once (Redis waits 5 s for more replicas by default).
      '--repl-diskless-sync-delay', '0',
    ];
    const servers: RedisServer[] = [];
    try {
      for (let i = 0; i < masters * (1 + replicasEach); i++) servers.push(await RedisServer.start({ args }));
      const cluster = new RedisCluster(servers);
      await run('redis-cli', [
        '--cluster', 'create', ...servers.map((s) => `127.0.0.1:${s.port}`), '--cluster-replicas', String(replicasEach), '--cluster-yes',
      ]);
      await cluster.waitUntilOk();
      return cluster;
    } catch (error) {
      await Promise.all(servers.map((s) => s.destroy()));
      throw error;
    }
  }

  /** The backend URL, naming every node (any one would do). */
  url(query = ''): string {
    return `redis+cluster://${this.servers.map((s) => `127.0.0.1:${s.port}`).join(',')}${query}`;
  }

  /** Waits until each running node reports `cluster_state:ok` and sees the same slots assigned in full. */
  async waitUntilOk(timeoutMs = 30_000, skip: number[] = []): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (const server of this.servers) {
      if (skip.includes(server.port)) continue;
      const redis = new Redis(server.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
      try {
        for (;;) {
          const info = String(await redis.call('CLUSTER', 'INFO').catch(() => ''));
          if (/cluster_state:ok/.test(info) && /cluster_slots_ok:16384/.test(info)) break;
          if (Date.now() > deadline) throw new Error(`the cluster node on port ${server.port} is not ok: ${info.split('\r\n').slice(0, 3).join(', ')}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      } finally {
        redis.disconnect();
      }
    }
  }

  /** The ports of the masters that serve slots now, and of the replicas. */
  async roles(): Promise<{ masters: number[]; replicas: number[] }> {
    const masters: number[] = [];
    const replicas: number[] = [];
    for (const server of this.servers) {
      const redis = new Redis(server.port, '127.0.0.1', { maxRetriesPerRequest: 0, lazyConnect: true, retryStrategy: () => null });
      redis.on('error', () => undefined);
      try {
        await redis.connect();
        const role = (await redis.call('ROLE')) as [string];
        (role[0] === 'master' ? masters : replicas).push(server.port);
      } catch {
        // a stopped node
      } finally {
        redis.disconnect();
      }
    }
    return { masters, replicas };
  }

  /** The port of the master that serves `key`'s slot now. */
  async masterOf(key: string): Promise<number> {
    const client = this.client();
    try {
      await client.ping();
      const slot = Number(await client.call('CLUSTER', 'KEYSLOT', key));
      const shards = (await client.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
      const owner = shards.find(([from, to]) => slot >= from && slot <= to);
      if (!owner) throw new Error(`no master serves slot ${slot}`);
      return Number(owner[2][1]);
    } finally {
      client.disconnect();
    }
  }

  /** A plain ioredis Cluster client, for tests that look at the keys. */
  client(): Cluster {
    const client = new Cluster(this.servers.map((s) => ({ host: '127.0.0.1', port: s.port })), { redisOptions: { maxRetriesPerRequest: 2 } });
    client.on('error', () => undefined);
    return client;
  }

  server(port: number): RedisServer {
    const found = this.servers.find((s) => s.port === port);
    if (!found) throw new Error(`no cluster node on port ${port}`);
    return found;
  }

  async destroy(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.destroy()));
  }
}
