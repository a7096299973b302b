/**
 * Redis Sentinel: a backend on `redis+sentinel://…/<master name>` follows a failover by itself.
 * One master, two replicas and three Sentinels on free ports; a producer enqueues and a consumer
 * claims and completes tasks without pause while the master is SIGKILLed and a replica is
 * promoted. With `durability=replicated`, every enqueue and completion that was acknowledged is
 * on the new master; without it the loss window is measured and reported, not hidden.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { connect, isTasklineError, type Backend } from '../../src/index.js';
import { newTask } from '../../src/backend/conformance/harness.js';
import { RedisSentinels } from '../helpers/redis-sentinel.js';
import { uniquePrefix } from '../helpers/stores.js';

interface RunReport {
  enqueued: string[];
  completed: string[];
  /** ms from the kill to the end of the first write made after it and acknowledged (by the new master). */
  failoverMs: number;
  errors: number;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Enqueues and completes tasks on `url` until 4 s after the first write acknowledged following the master's SIGKILL (at 1.5 s). */
async function runThroughFailover(setup: RedisSentinels, url: string, prefix: string): Promise<RunReport> {
  const producer = await connect(url, { prefix, commandTimeout: 3000 });
  const consumer = await connect(url, { prefix, commandTimeout: 3000 });
  const report: RunReport = { enqueued: [], completed: [], failoverMs: -1, errors: 0 };
  let killedAt = 0;
  let backAt = 0;
  let stop = false;
  // A write that started after the kill and was acknowledged: the new master answers.
  const acknowledged = (startedAt: number) => {
    if (killedAt > 0 && startedAt > killedAt && backAt === 0) backAt = Date.now();
  };
  const produce = async () => {
    while (!stop) {
      const task = newTask('t', { n: report.enqueued.length });
      const startedAt = Date.now();
      try {
        const [outcome] = await producer.enqueue([task]);
        if (outcome.ok) {
          report.enqueued.push(task.id);
          acknowledged(startedAt);
        }
      } catch (error) {
        if (!isTasklineError(error)) throw error;
        report.errors += 1;
        await pause(50);
      }
    }
  };
  const consume = async () => {
    while (!stop) {
      try {
        const [claim] = await consumer.claim('sentinel-worker', [{ queue: 'default', count: 20 }], 30_000);
        if (claim.tasks.length === 0) {
          await pause(5);
          continue;
        }
        const acks = claim.tasks.map((t) => ({
          kind: 'complete' as const, id: t.id, queue: t.queue, token: t.token, result: '',
          attempt: { attempt: t.attempt, startedAt: t.startedAt, finishedAt: Date.now(), outcome: 'completed' as const, error: null, stack: null, workerId: 'sentinel-worker' },
        }));
        const results = await consumer.ack(acks);
        results.forEach((r, i) => r === 'ok' && report.completed.push(acks[i].id));
      } catch (error) {
        if (!isTasklineError(error)) throw error;
        report.errors += 1;
        await pause(50);
      }
    }
  };
  const running = Promise.all([produce(), consume()]);
  try {
    await pause(1500);
    const master = await setup.masterPort();
    killedAt = Date.now();
    await setup.server(master).stop('SIGKILL');
    const deadline = Date.now() + 40_000;
    while (Date.now() < deadline && (backAt === 0 || Date.now() < backAt + 4000)) await pause(100);
  } finally {
    stop = true;
    await running;
    await producer.close();
    await consumer.close();
  }
  report.failoverMs = backAt === 0 ? -1 : backAt - killedAt;
  return report;
}

/** Which of the acknowledged writes the store (its master now) does not hold. */
async function lost(backend: Backend, report: RunReport): Promise<{ enqueues: string[]; completions: string[] }> {
  const enqueues: string[] = [];
  const completions: string[] = [];
  for (const id of report.enqueued) if ((await backend.getTask(id)) === null) enqueues.push(id);
  for (const id of report.completed) if ((await backend.getTask(id))?.state !== 'completed') completions.push(id);
  return { enqueues, completions };
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
    expect(report.failoverMs, 'no write was acknowledged after the kill').toBeGreaterThan(0);
    expect(report.failoverMs).toBeLessThan(30_000);
    const after = await connect(url, { prefix });
    try {
      const missing = await lost(after, report);
      console.log(
        `sentinel replicated: ${report.enqueued.length} enqueues and ${report.completed.length} completions acknowledged, ` +
          `writes again ${report.failoverMs} ms after the kill (${report.errors} failed calls meanwhile); lost: ${missing.enqueues.length} enqueues, ${missing.completions.length} completions`,
      );
      expect(report.enqueued.length).toBeGreaterThan(20);
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
    expect(report.failoverMs, 'no write was acknowledged after the kill').toBeGreaterThan(0);
    const after = await connect(url, { prefix });
    try {
      const missing = await lost(after, report);
      console.log(
        `sentinel acknowledged: ${report.enqueued.length} enqueues and ${report.completed.length} completions acknowledged, ` +
          `writes again ${report.failoverMs} ms after the kill; lost (the replication lag at the kill): ${missing.enqueues.length} enqueues, ${missing.completions.length} completions`,
      );
      expect(report.enqueued.length).toBeGreaterThan(20);
    } finally {
      await after.close();
    }
  }, 90_000);
});
