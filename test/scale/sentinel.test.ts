/**
 * Redis Sentinel: a backend on `redis+sentinel://…/<master name>` follows a failover by itself.
 * One master, two replicas and three Sentinels on free ports; a producer enqueues and a consumer
 * claims and completes tasks without pause while the master is SIGKILLed and a replica is
 * promoted. With `durability=replicated`, every enqueue and completion that was acknowledged is
 * on the new master; without it the loss window is measured and reported, not hidden.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { connect } from '../../src/index.js';
import { newTask } from '../../src/backend/conformance/harness.js';
import { expectFailedOver, loadThroughKill, lostWrites, type LoadReport } from '../helpers/failover-load.js';
import { RedisSentinels } from '../helpers/redis-sentinel.js';
import { uniquePrefix } from '../helpers/stores.js';

/** The load through the master's SIGKILL (at 1.5 s), until 4 s after writes are acknowledged again. */
async function runThroughFailover(setup: RedisSentinels, url: string, prefix: string): Promise<LoadReport> {
  return loadThroughKill({
    url, prefix, queues: ['default'], claimCount: 20, settleMs: 4000,
    victim: async () => setup.server(await setup.masterPort()),
  });
}

describe('Redis Sentinel: a SIGKILLed master, a replica promoted', () => {
  let setup: RedisSentinels | null = null;
  afterEach(async () => {
    await setup?.destroy();
    setup = null;
  });

  it('with durability=replicated: follows the new master within seconds, and loses nothing acknowledged', async () => {
    setup = await RedisSentinels.start(2);
    const prefix = uniquePrefix('sentinel');
    const url = setup.url('?durability=replicated');
    const report = await runThroughFailover(setup, url, prefix);
    expectFailedOver(report);
    expect(report.failoverMs).toBeLessThan(30_000);
    const after = await connect(url, { prefix });
    try {
      const missing = await lostWrites(after, report);
      console.log(
        `sentinel replicated: ${report.enqueued.length} enqueues and ${report.completed.length} completions acknowledged, ` +
          `writes again ${report.failoverMs} ms after the kill (${report.errors} failed calls meanwhile); lost: ${missing.enqueues.length} enqueues, ${missing.completions.length} completions`,
      );
      expect(report.completed.length).toBeGreaterThan(20);
      expect(missing).toEqual({ enqueues: [], completions: [] });
      // The store goes on: a task enqueued now is there.
      const [fresh] = await after.enqueue([newTask('after-failover')]);
      expect(fresh.ok).toBe(true);
    } finally {
      await after.close();
    }
  }, 90_000);

  it('without it: follows the new master too; what a failover may lose is reported', async () => {
    setup = await RedisSentinels.start(2);
    const prefix = uniquePrefix('sentinel');
    const url = setup.url();
    const report = await runThroughFailover(setup, url, prefix);
    expectFailedOver(report);
    const after = await connect(url, { prefix });
    try {
      const missing = await lostWrites(after, report);
      console.log(
        `sentinel acknowledged: ${report.enqueued.length} enqueues and ${report.completed.length} completions acknowledged, ` +
          `writes again ${report.failoverMs} ms after the kill; lost (the replication lag at the kill): ${missing.enqueues.length} enqueues, ${missing.completions.length} completions`,
      );
    } finally {
      await after.close();
    }
  }, 90_000);
});
