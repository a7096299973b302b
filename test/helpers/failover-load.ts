/**
 * A continuous load through a Redis failover, for the Sentinel and Cluster tests: a producer
 * enqueues one task per call and a consumer claims and completes them, without pause, while a
 * master is SIGKILLed; then which of the acknowledged writes the store no longer holds.
 */
import { expect } from 'vitest';
import { connect, isTasklineError, type Backend } from '../../src/index.js';
import { completeAck, newTask } from '../../src/backend/conformance/harness.js';
import type { RedisServer } from './redis-server.js';

export interface LoadReport {
  enqueued: string[];
  completed: string[];
  /** ms from the kill to the end of the first write after it acknowledged by a queue of `watched`; -1: none. */
  failoverMs: number;
  /** Calls that failed meanwhile (TL_ errors). */
  errors: number;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs the load on `queues` (tasks spread over them in turn), SIGKILLs the server `victim` names
 * after 1.5 s, and stops `settleMs` after the first enqueue to a queue of `watched` (default: all)
 * that started after the kill was acknowledged, or 40 s after the kill.
 */
export async function loadThroughKill(options: {
  url: string;
  prefix: string;
  queues: string[];
  watched?: string[];
  claimCount: number;
  settleMs: number;
  victim: () => Promise<RedisServer>;
}): Promise<LoadReport> {
  const { url, prefix, queues, claimCount, settleMs, victim } = options;
  const watched = options.watched ?? queues;
  const producer = await connect(url, { prefix, commandTimeout: 3000 });
  const consumer = await connect(url, { prefix, commandTimeout: 3000 });
  const report: LoadReport = { enqueued: [], completed: [], failoverMs: -1, errors: 0 };
  let killedAt = 0;
  let backAt = 0;
  let stop = false;
  const failed = async (error: unknown) => {
    if (!isTasklineError(error)) throw error;
    report.errors += 1;
    await pause(50);
  };
  const produce = async () => {
    for (let n = 0; !stop; n++) {
      const task = newTask('t', { n }, { queue: queues[n % queues.length] });
      const startedAt = Date.now();
      try {
        const [outcome] = await producer.enqueue([task]);
        if (!outcome.ok) continue;
        report.enqueued.push(task.id);
        // A write that started after the kill and was acknowledged: the new master answers.
        if (killedAt > 0 && startedAt > killedAt && backAt === 0 && watched.includes(task.queue)) backAt = Date.now();
      } catch (error) {
        await failed(error);
      }
    }
  };
  const consume = async () => {
    while (!stop) {
      try {
        const claims = await consumer.claim('failover-consumer', queues.map((queue) => ({ queue, count: claimCount })), 30_000);
        const acks = claims.flatMap((claim) => claim.tasks.map((t) => completeAck(t)));
        if (acks.length === 0) {
          await pause(5);
          continue;
        }
        const results = await consumer.ack(acks);
        results.forEach((r, i) => r === 'ok' && report.completed.push(acks[i].id));
      } catch (error) {
        await failed(error);
      }
    }
  };
  const running = Promise.all([produce(), consume()]);
  try {
    await pause(1500);
    const server = await victim();
    killedAt = Date.now();
    await server.stop('SIGKILL');
    const deadline = Date.now() + 40_000;
    while (Date.now() < deadline && (backAt === 0 || Date.now() < backAt + settleMs)) await pause(100);
  } finally {
    stop = true;
    await running;
    await producer.close();
    await consumer.close();
  }
  report.failoverMs = backAt === 0 ? -1 : backAt - killedAt;
  return report;
}

/** Which of the acknowledged writes the store (its masters now) does not hold. */
export async function lostWrites(backend: Backend, report: LoadReport): Promise<{ enqueues: string[]; completions: string[] }> {
  const enqueues: string[] = [];
  const completions: string[] = [];
  for (const id of report.enqueued) if ((await backend.getTask(id)) === null) enqueues.push(id);
  for (const id of report.completed) if ((await backend.getTask(id))?.state !== 'completed') completions.push(id);
  return { enqueues, completions };
}

/** Asserts that writes were acknowledged again after the kill, and that the load did real work. */
export function expectFailedOver(report: LoadReport): void {
  expect(report.failoverMs, 'no write was acknowledged after the kill').toBeGreaterThan(0);
  expect(report.enqueued.length).toBeGreaterThan(20);
}
