import { describe, expect, it } from 'vitest';
import { newTask } from '../../src/backend/conformance/harness.js';
import { useRawRedis } from '../helpers/raw-redis.js';

// Redis-only: the queue's read of its groups' running tasks holds with more leases than one Lua
// call can take at once (the conformance suite's stores would take long to make so many).
describe('Redis groups', () => {
  const raw = useRawRedis();

  it('reads the running tasks per group with 9,000 leases', async () => {
    const { backend } = raw;
    for (let i = 0; i < 9_000; i += 1000) {
      await backend.enqueue(Array.from({ length: 1000 }, (_, j) => newTask('t', {}, { queue: 'big', group: `g${(i + j) % 3}` })));
    }
    for (let i = 0; i < 9; i++) expect((await backend.claim('w', [{ queue: 'big', count: 1000 }], 60_000))[0].tasks).toHaveLength(1000);
    const info = (await backend.getQueue('big'))!;
    expect(info.counts.running).toBe(9_000);
    expect(info.groups.running).toEqual({ g0: 3000, g1: 3000, g2: 3000 });
  });
});
