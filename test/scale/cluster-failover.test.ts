/**
 * Redis Cluster failover: three masters with one replica each (two with `replicated`); a
 * producer and a consumer enqueue and complete tasks of queues on every master without pause,
 * while a task center (with its scheduler, firing every second) and a worker process run on the
 * same cluster. The master of the schedules' slot, which also serves some of the queues, is
 * SIGKILLed; its replica is promoted and everything goes on by itself, event subscriptions
 * included, and workflows whose steps were in flight finish. With `durability=replicated` nothing
 * acknowledged is lost; without it, the loss window is measured and reported, not hidden.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { chain, Client, connect, task, type Backend } from '../../src/index.js';
import { newTask } from '../../src/backend/conformance/harness.js';
import { expectFailedOver, loadThroughKill, lostWrites, type LoadReport } from '../helpers/failover-load.js';
import { CliProcess, runCli } from '../cli/helpers.js';
import { freePort } from '../helpers/ports.js';
import { ChildWorker, eventually } from '../helpers/processes.js';
import { RedisCluster } from '../helpers/redis-cluster.js';
import { uniquePrefix } from '../helpers/stores.js';

const WORKER = fileURLToPath(new URL('../fixtures/worker-process.mjs', import.meta.url));
/** Queues the producer and consumer use (spread over the masters), and those of the worker process and the schedule. */
const LOAD_QUEUES = Array.from({ length: 6 }, (_, i) => `load${i}`);
const WORKER_QUEUES = ['w0', 'w1', 'w2', 'w3', 'ticks'];

/** The load report, and the load queues the killed master served. */
type Report = LoadReport & { moved: string[] };

/**
 * The load on six queues through the SIGKILL (at 1.5 s) of the master of the schedules' slot,
 * until 3 s after a queue of that master takes writes again.
 */
async function runThroughFailover(cluster: RedisCluster, url: string, prefix: string): Promise<Report> {
  const victim = await cluster.masterOf(`{${prefix}:schedules}:defs`);
  const moved: string[] = [];
  for (const queue of LOAD_QUEUES) if ((await cluster.masterOf(`{${prefix}:${queue}}:meta`)) === victim) moved.push(queue);
  const report = await loadThroughKill({
    url, prefix, queues: LOAD_QUEUES, watched: moved, claimCount: 5, settleMs: 3000,
    victim: async () => cluster.server(victim),
  });
  return { ...report, moved };
}

describe('Redis Cluster: a SIGKILLed master, its replica promoted', () => {
  let cluster: RedisCluster | null = null;
  const processes: { destroy(): Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(processes.splice(0).map((p) => p.destroy()));
    await cluster?.destroy();
    cluster = null;
  });

  /**
   * A task center (scheduler firing `ticks` each second) and a worker process on the cluster, and
   * a subscriber here: the ids of the finished tasks it hears.
   */
  async function startProcesses(url: string, prefix: string): Promise<Set<string>> {
    const backendArgs = ['--backend', url, '--prefix', prefix];
    const server = new CliProcess([...backendArgs, 'server', '--port', String(await freePort())]);
    processes.push({ destroy: async () => (server.signal('SIGKILL'), void (await server.exited)) });
    const worker = ChildWorker.start(WORKER, { BACKEND_URL: url, PREFIX: prefix, QUEUES: WORKER_QUEUES.join(','), CONCURRENCY: '4', TASK_MS: '1', LEASE_MS: '5000', RECOVER_MS: '500' });
    processes.push(worker);
    await server.waitFor(/^ready/m, 30_000);
    await worker.waitForLine((l) => l === 'ready');
    const added = await runCli([...backendArgs, 'schedule', 'add', 'tick', '--cron', '* * * * * *', '--type', 'work', '--queue', 'ticks', '--overlap', 'allow']);
    expect(added.stderr).toBe('');
    const listener = await connect(url, { prefix });
    processes.push({ destroy: () => listener.close() });
    const finished = new Set<string>();
    await listener.subscribe((event) => event.kind === 'finished' && finished.add(event.id));
    return finished;
  }

  /**
   * Workflows in flight through the kill: chains of four steps of 400 ms over the worker's queues
   * (on several masters), started just before the load.
   */
  async function startWorkflows(url: string, prefix: string): Promise<string[]> {
    const backend = await connect(url, { prefix });
    try {
      const client = new Client(backend);
      const ids: string[] = [];
      for (let i = 0; i < 8; i++) {
        const steps = WORKER_QUEUES.slice(0, 4).map((queue) => task('work', { ms: 400 }, { queue }));
        ids.push((await client.enqueueWorkflow(chain(...steps))).id);
      }
      return ids;
    } finally {
      await backend.close();
    }
  }

  /** Every workflow ends completed: a step cut by the kill runs again once its lease expires. */
  async function expectWorkflowsDone(backend: Backend, ids: string[]): Promise<void> {
    await eventually(async () => {
      const states = await Promise.all(ids.map(async (id) => (await backend.getWorkflow(id))?.state));
      return states.every((state) => state === 'completed');
    }, 40_000, 250);
  }

  /**
   * After the failover: the worker process completes new tasks of every queue, the subscriber
   * hears them finish, and the scheduler fires again.
   */
  async function expectProcessesGoOn(backend: Backend, after: number, finished: Set<string>): Promise<void> {
    const tasks = WORKER_QUEUES.slice(0, 4).map((queue) => newTask('work', {}, { queue }));
    expect((await backend.enqueue(tasks)).every((o) => o.ok)).toBe(true);
    await eventually(async () => {
      const states = await Promise.all(tasks.map((t) => backend.getTask(t.id)));
      return states.every((s) => s?.state === 'completed');
    }, 30_000, 200);
    await eventually(async () => tasks.every((t) => finished.has(t.id)), 10_000, 100);
    await eventually(async () => {
      const page = await backend.listTasks('ticks', 'completed', { limit: 100 });
      return page.tasks.filter((t) => t.createdAt > after).length >= 2;
    }, 30_000, 200);
  }

  it('with durability=replicated: workers and the scheduler go on by themselves, and nothing acknowledged is lost', async () => {
    // Two replicas per master: after the failover the promoted one still has a replica to confirm
    // its writes (with one, its slots refuse acknowledged writes until a replica is back).
    cluster = await RedisCluster.start({ replicasEach: 2 });
    const prefix = uniquePrefix('cluster-failover');
    const url = cluster.url('?durability=replicated');
    const finished = await startProcesses(url, prefix);
    const flows = await startWorkflows(url, prefix);
    const report = await runThroughFailover(cluster, url, prefix);
    expect(report.moved.length, 'the killed master served none of the load queues').toBeGreaterThan(0);
    expectFailedOver(report);
    const backend = await connect(url, { prefix });
    try {
      const missing = await lostWrites(backend, report);
      console.log(
        `cluster replicated: ${report.enqueued.length} enqueues and ${report.completed.length} completions acknowledged; ` +
          `the killed master's queues (${report.moved.join(', ')}) took writes again ${report.failoverMs} ms after the kill ` +
          `(${report.errors} failed calls meanwhile); lost: ${missing.enqueues.length} enqueues, ${missing.completions.length} completions`,
      );
      expect(report.completed.length).toBeGreaterThan(20);
      expect(missing).toEqual({ enqueues: [], completions: [] });
      await expectProcessesGoOn(backend, Date.now(), finished);
      await expectWorkflowsDone(backend, flows);
    } finally {
      await backend.close();
    }
  }, 120_000);

  it('without it: goes on too; what the failover lost is reported', async () => {
    cluster = await RedisCluster.start();
    const prefix = uniquePrefix('cluster-failover');
    const url = cluster.url();
    const finished = await startProcesses(url, prefix);
    const flows = await startWorkflows(url, prefix);
    const report = await runThroughFailover(cluster, url, prefix);
    expectFailedOver(report);
    const backend = await connect(url, { prefix });
    try {
      const missing = await lostWrites(backend, report);
      console.log(
        `cluster acknowledged: ${report.enqueued.length} enqueues and ${report.completed.length} completions acknowledged; ` +
          `writes again ${report.failoverMs} ms after the kill; lost (the replication lag at the kill): ${missing.enqueues.length} enqueues, ${missing.completions.length} completions`,
      );
      await expectProcessesGoOn(backend, Date.now(), finished);
      await expectWorkflowsDone(backend, flows);
    } finally {
      await backend.close();
    }
  }, 120_000);
});
