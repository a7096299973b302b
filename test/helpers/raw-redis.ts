/** A Redis store per test with a plain connection beside it, for tests that look at (or write) keys directly. */
import { Redis } from 'ioredis';
import { afterEach, beforeEach } from 'vitest';
import type { RedisBackend } from '../../src/backend/redis/redis-backend.js';
import { REDIS_URL, redisStore, type TestStore } from './stores.js';

export interface RawRedisStore {
  store: TestStore;
  backend: RedisBackend;
  redis: Redis;
}

/** Registers the hooks; the fields are set before each test. */
export function useRawRedis(): RawRedisStore {
  const current = {} as RawRedisStore;
  beforeEach(async () => {
    current.store = await redisStore();
    current.backend = current.store.backend as RedisBackend;
    current.redis = new Redis(REDIS_URL);
  });
  afterEach(async () => {
    current.redis.disconnect();
    await current.store.cleanup();
  });
  return current;
}
