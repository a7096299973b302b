import { describe, expect, it } from 'vitest';
import { RedisBackend } from '../../src/backend/redis/redis-backend.js';
import { REDIS_URL } from '../helpers/stores.js';

// The file's leak check (test/setup/leaks.ts) fails it if a connection is left open.
describe('Redis backend after close', () => {
  it('a wait for work returns at once and opens no connection', async () => {
    const backend = await RedisBackend.connect(REDIS_URL, { prefix: `tl-close-${process.pid}` });
    const waiting = backend.waitForWork(['q'], 60_000, new AbortController().signal);
    await backend.close();
    await waiting;
    // Not the 60 s it asks for: the test's timeout would end it first.
    await backend.waitForWork(['q'], 60_000, new AbortController().signal);
    await expect(backend.now()).rejects.toMatchObject({ code: 'TL_CLOSED' });
  });
});
