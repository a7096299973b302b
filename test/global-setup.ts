import { Redis } from 'ioredis';

/** Fails early and clearly when the shared Redis the suite expects is not running. */
export default async function setup(): Promise<void> {
  const url = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    throw new Error(`the tests need Redis at ${url} (start it, or set TEST_REDIS_URL): ${(error as Error).message}`);
  } finally {
    redis.disconnect();
  }
}
