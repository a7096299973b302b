/** Real stores for tests: a key prefix per test on the shared Redis, a fresh SQLite file per test. */
import { Cluster, Redis } from 'ioredis';
import { RedisBackend } from '../../src/backend/redis/redis-backend.js';
import type { Backend } from '../../src/backend/contract.js';
import { sqliteStore } from './sqlite-store.js';

export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

let counter = 0;

export function uniquePrefix(label = 't'): string {
  counter += 1;
  return `test:${label}:${process.pid}:${Date.now().toString(36)}:${counter}`;
}

/** Deletes every key under a prefix (the prefix's hash-tagged keys included); on a Cluster, on each master. */
export async function deletePrefix(url: string, prefix: string): Promise<void> {
  if (url.startsWith('redis+cluster://')) {
    const nodes = url.slice('redis+cluster://'.length).split('?')[0].split(',').map((entry) => ({ host: entry.split(':')[0], port: Number(entry.split(':')[1]) }));
    const cluster = new Cluster(nodes, { redisOptions: { maxRetriesPerRequest: 1 } });
    cluster.on('error', () => undefined);
    try {
      await cluster.ping();
      for (const node of cluster.nodes('master')) await deleteOn(node, prefix, (keys) => Promise.all(keys.map((k) => cluster.del(k))));
    } finally {
      cluster.disconnect();
    }
    return;
  }
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    await deleteOn(redis, prefix, (keys) => redis.del(...keys));
  } finally {
    redis.disconnect();
  }
}

async function deleteOn(redis: Redis, prefix: string, del: (keys: string[]) => Promise<unknown>): Promise<void> {
  for (const pattern of [`${prefix}:*`, `{${prefix}:*`]) {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await del(keys);
    } while (cursor !== '0');
  }
}

export interface TestStore {
  backend: Backend;
  /** Opens another backend on the same store (as another process would). */
  reopen(options?: { clockOffsetMs?: number }): Promise<Backend>;
  cleanup(): Promise<void>;
}

export async function redisStore(url = REDIS_URL): Promise<TestStore> {
  const prefix = uniquePrefix('redis');
  const opened: Backend[] = [];
  const open = async (options: { clockOffsetMs?: number } = {}) => {
    const backend = await RedisBackend.connect(url, { prefix, ...options });
    opened.push(backend);
    return backend;
  };
  const backend = await open();
  return {
    backend,
    reopen: open,
    cleanup: async () => {
      await Promise.all(opened.map((b) => b.close()));
      await deletePrefix(url, prefix);
    },
  };
}

export { tempDir } from './temp-dir.js';

/** The backends every behaviour test runs on. */
export const STORES: [string, () => Promise<TestStore>][] = [
  ['redis', () => redisStore()],
  ['sqlite', () => sqliteStore()],
];
