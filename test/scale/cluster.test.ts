/**
 * A Redis Cluster store (`redis+cluster://`): three masters with one replica each, started on free
 * ports for this file. Queues spread over the masters; a task center (its scheduler) and a worker
 * process run on it as on one server, workflows over queues of every master included, and a
 * workflow step a stopped client left half done is finished by the next.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis, type Cluster } from 'ioredis';
import { fileURLToPath } from 'node:url';
import { chain, Client, connect, group, isTasklineError, task, type Backend } from '../../src/index.js';
import { DEFAULT_RETENTION, type ClaimedTask } from '../../src/backend/contract.js';
import { completeAck, newTask } from '../../src/backend/conformance/harness.js';
import { newWorkflow } from '../../src/backend/conformance/workflow-harness.js';
import { RedisKeys } from '../../src/backend/redis/keys.js';
import { scriptKeyNames, scriptSource } from '../../src/backend/redis/scripts.js';
import { prepareWorkflow } from '../../src/backend/redis/workflows.js';
import { CliProcess, runCli } from '../cli/helpers.js';
import { freePort } from '../helpers/ports.js';
import { ChildWorker, eventually } from '../helpers/processes.js';
import { RedisCluster } from '../helpers/redis-cluster.js';
import { deletePrefix, uniquePrefix } from '../helpers/stores.js';

const WORKER = fileURLToPath(new URL('../fixtures/worker-process.mjs', import.meta.url));
const QUEUES = Array.from({ length: 9 }, (_, i) => `q${i}`);

let cluster: RedisCluster;

beforeAll(async () => {
  cluster = await RedisCluster.start();
}, 60_000);

afterAll(async () => {
  await cluster?.destroy();
});

/**
 * One ack as ack.lua takes it (`data`: the result or error; `last`: a completion's finish time or
 * the attempt record), run by hand: without the relay a backend's ack makes after it, as if the
 * client stopped there.
 */
async function ackWithoutRelay(raw: Cluster, keys: RedisKeys, task: ClaimedTask, kind: 'complete' | 'dead', data: string, last: string): Promise<void> {
  const names = scriptKeyNames('ack');
  await raw.eval(scriptSource('ack'), names.length, ...keys.subset(task.queue, names), '0', `\n${keys.events}`, task.queue, '1',
    DEFAULT_RETENTION.completed, DEFAULT_RETENTION.dead, DEFAULT_RETENTION.cancelled, kind, task.id, task.token, data, '0', last, '0');
}

describe('a Redis Cluster store', () => {
  const opened: Backend[] = [];
  const prefixes: string[] = [];
  const open = async (query = '') => {
    const prefix = uniquePrefix('cluster');
    prefixes.push(prefix);
    const backend = await connect(cluster.url(query), { prefix });
    opened.push(backend);
    return { backend, prefix };
  };

  afterAll(async () => {
    await Promise.all(opened.map((b) => b.close()));
    for (const prefix of prefixes) await deletePrefix(cluster.url(), prefix);
  });

  it('keeps each queue in one slot, and spreads queues over every master', async () => {
    const { backend, prefix } = await open();
    await backend.enqueue(QUEUES.map((queue) => newTask('t', {}, { queue })));
    const masters = await Promise.all(QUEUES.map((queue) => cluster.masterOf(`{${prefix}:${queue}}:meta`)));
    const { masters: all } = await cluster.roles();
    expect(new Set(masters)).toEqual(new Set(all));
    expect((await backend.listQueues()).map((q) => [q.name, q.counts.queued])).toEqual(QUEUES.map((q) => [q, 1]));
  });

  it('finishes a workflow step a stopped client left half done: the node ends and starts it handed off', async () => {
    const { backend, prefix } = await open();
    // A chain over queues of different masters.
    const wf = newWorkflow([{ id: 'a', queue: 'q0' }, { id: 'b', queue: 'q1', dependsOn: ['a'] }, { id: 'c', queue: 'q2', dependsOn: ['b'] }]);
    await backend.createWorkflow(wf);
    const [claim] = await backend.claim('w', [{ queue: 'q0', count: 1 }], 30_000);
    const [task] = claim.tasks;
    // The ack a client makes, without the relay that follows it (as if the client died there): the
    // node's end waits in q0's hand-off set.
    const keys = new RedisKeys(prefix);
    const raw = cluster.client();
    try {
      await ackWithoutRelay(raw, keys, task, 'complete', '"A"', String(Date.now()));
      expect(await raw.zcard(keys.queueHandoff('q0'))).toBe(1);
      expect((await backend.getWorkflow(wf.id))!.nodes.map((n) => n.state)).toEqual(['completed', 'pending', 'pending']);
      // A worker's recovery pass carries it on: b starts with a's result.
      await backend.recoverExpired('q0', 100);
      expect((await backend.getWorkflow(wf.id))!.nodes.map((n) => n.state)).toEqual(['completed', 'queued', 'pending']);
      expect(await raw.zcard(keys.queueHandoff('q0'))).toBe(0);
      // A creation whose roots were not started (the client died after the script): the sweep
      // finds it among the workflows being carried.
      const second = newWorkflow([{ id: 'x', queue: 'q3' }, { id: 'y', queue: 'q4' }]);
      const { args } = prepareWorkflow(second);
      await raw.sadd(keys.handoffWorkflows, second.id);
      await raw.eval(scriptSource('workflow-create'), 1, keys.workflow(second.id).meta, '0', `\n${keys.events}`, '', '1', ...args);
      expect((await backend.getWorkflow(second.id))!.nodes.map((n) => n.taskId)).toEqual([null, null]);
      await backend.recoverExpired('q0', 100);
      expect((await backend.getWorkflow(second.id))!.nodes.map((n) => n.state)).toEqual(['queued', 'queued']);
      expect(await raw.sismember(keys.handoffWorkflows, second.id)).toBe(0);
    } finally {
      raw.disconnect();
    }
  });

  it('settles a node’s end carried twice once, even after a retry started the node anew', async () => {
    const { backend, prefix } = await open();
    const wf = newWorkflow([{ id: 'a', queue: 'q0' }, { id: 'b', queue: 'q1', dependsOn: ['a'] }], { generatedTaskIds: false });
    await backend.createWorkflow(wf);
    const [claim] = await backend.claim('w', [{ queue: 'q0', count: 1 }], 30_000);
    const [task] = claim.tasks;
    const keys = new RedisKeys(prefix);
    const raw = cluster.client();
    try {
      // The node dies; its end is handed off and kept, as by a relay that stopped before removing it.
      const attempt = { attempt: 1, startedAt: task.startedAt, finishedAt: Date.now(), outcome: 'dead', error: 'boom', stack: null, workerId: 'w' };
      await ackWithoutRelay(raw, keys, task, 'dead', 'boom', JSON.stringify(attempt));
      const kept = await raw.zrange(keys.queueHandoff('q0'), 0, -1, 'WITHSCORES');
      await backend.recoverExpired('q0', 100);
      expect((await backend.getWorkflow(wf.id))!.state).toBe('failed');
      // Retried: a runs anew. Then the old end is carried again.
      await backend.retryWorkflow(wf.id, null);
      await raw.zadd(keys.queueHandoff('q0'), kept[1], kept[0]);
      await backend.recoverExpired('q0', 100);
      const after = (await backend.getWorkflow(wf.id))!;
      expect(after.state).toBe('running');
      expect(after.nodes.map((n) => n.state)).toEqual(['queued', 'pending']);
    } finally {
      raw.disconnect();
    }
  });

  it('starts the nodes of a workflow made again under the id of one cleaned up', async () => {
    const { backend } = await open();
    const first = newWorkflow([{ id: 'x', queue: 'q2' }], { id: 'again', retention: 0 });
    await backend.createWorkflow(first);
    const [claim] = await backend.claim('w', [{ queue: 'q2', count: 1 }], 30_000);
    await backend.ack([completeAck(claim.tasks[0])]);
    expect((await backend.getWorkflow('again'))!.state).toBe('completed');
    expect(await backend.cleanupWorkflows(10)).toBe(1);
    const second = newWorkflow([{ id: 'x', queue: 'q2' }], { id: 'again' });
    await backend.createWorkflow(second);
    expect((await backend.getWorkflow('again'))!.nodes.map((n) => n.state)).toEqual(['queued']);
  });

  it('with durability=replicated, acknowledges enqueues and completions of queues on every master', async () => {
    const { backend } = await open('?durability=replicated');
    const tasks = QUEUES.flatMap((queue) => [newTask('t', {}, { queue }), newTask('t', {}, { queue })]);
    expect((await backend.enqueue(tasks)).every((o) => o.ok)).toBe(true);
    const claims = await backend.claim('w', QUEUES.map((queue) => ({ queue, count: 2 })), 30_000);
    const acks = claims.flatMap((claim) => claim.tasks.map((t) => completeAck(t)));
    expect(acks).toHaveLength(tasks.length);
    expect(await backend.ack(acks)).toEqual(acks.map(() => 'ok'));
    expect((await backend.listQueues()).every((q) => q.counts.completed === 2)).toBe(true);
  });

  it('wakes a worker waiting on queues of every master at the first task, without reopening connections', async () => {
    const { backend } = await open();
    const { masters } = await cluster.roles();
    const connectionsMade = async () => {
      let total = 0;
      for (const port of masters) {
        const node = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 1 });
        total += Number(/total_connections_received:(\d+)/.exec(await node.info('stats'))![1]);
        node.disconnect();
      }
      return total;
    };
    const signal = new AbortController().signal;
    // The first waits open the blocking connections; a task in each queue, the main connection's.
    await backend.enqueue(QUEUES.map((queue) => newTask('t', {}, { queue })));
    for (let i = 0; i < 3; i++) await backend.waitForWork(QUEUES, 300, signal);
    const before = await connectionsMade();
    for (let i = 0; i < 10; i++) {
      const started = Date.now();
      const waiting = backend.waitForWork(QUEUES, 10_000, signal);
      await new Promise((r) => setTimeout(r, 50));
      await backend.enqueue([newTask('t', {}, { queue: QUEUES[i % QUEUES.length] })]);
      await waiting;
      expect(Date.now() - started).toBeLessThan(5000);
    }
    // Only the counting connections themselves (one per master per count) are new.
    expect((await connectionsMade()) - before).toBeLessThanOrEqual(3);
  });

  it('fails with TL_STORE_UNAVAILABLE when no node answers, within the command timeout', async () => {
    const started = Date.now();
    const error = await connect(`redis+cluster://127.0.0.1:${await freePort()}`, { commandTimeout: 1000 }).catch((e: unknown) => e);
    expect(isTasklineError(error) && error.code).toBe('TL_STORE_UNAVAILABLE');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('refuses a key prefix with braces, which would put every queue in one slot', async () => {
    const error = await connect(cluster.url(), { prefix: 'app{1}' }).catch((e: unknown) => e);
    expect(isTasklineError(error) && error.code).toBe('TL_INVALID_CONFIG');
    expect((error as Error).message).toMatch(/prefix must not hold \{ or \}, got "app\{1\}"/);
  });

  it('rejects a database or a path in the URL', async () => {
    const error = await connect(`${cluster.url()}/2`).catch((e: unknown) => e);
    expect(isTasklineError(error) && error.code).toBe('TL_INVALID_CONFIG');
    expect((error as Error).message).toMatch(/database 0 only/);
  });

  it('runs a task center with its scheduler and a worker process: tasks of every queue, a workflow, a schedule’s fires', async () => {
    const prefix = uniquePrefix('cluster-e2e');
    prefixes.push(prefix);
    const backendArgs = ['--backend', cluster.url(), '--prefix', prefix];
    const port = await freePort();
    const server = new CliProcess([...backendArgs, 'server', '--port', String(port)]);
    const worker = ChildWorker.start(WORKER, { BACKEND_URL: cluster.url(), PREFIX: prefix, QUEUES: QUEUES.join(','), CONCURRENCY: '8', TASK_MS: '1' });
    try {
      await server.waitFor(/^ready/m, 30_000);
      await worker.waitForLine((l) => l === 'ready');
      const added = await runCli([...backendArgs, 'schedule', 'add', 'tick', '--cron', '* * * * * *', '--type', 'work', '--queue', 'q4']);
      expect(added.stderr).toBe('');
      const backend = await connect(cluster.url(), { prefix });
      opened.push(backend);
      const client = new Client(backend);
      const ids = [];
      for (const queue of QUEUES) for (let i = 0; i < 20; i++) ids.push((await client.enqueue('work', { i }, { queue })).id);
      await Promise.all(ids.map((id) => client.waitFor(id, { timeout: 30_000 })));
      // A workflow over queues of every master: a chain into a fan-out of three, joined at the end.
      const { id } = await client.enqueueWorkflow(
        chain(task('work', {}, { queue: 'q0' }), group(task('work', {}, { queue: 'q3' }), task('work', {}, { queue: 'q6' }), task('work', {}, { queue: 'q7' })), task('work', {}, { queue: 'q8' })),
      );
      await eventually(async () => ((await backend.getWorkflow(id))!.state === 'completed' ? true : null), 30_000, 100);
      // The scheduler fires each second into q4; the worker completes the fires.
      await eventually(async () => ((await backend.getQueue('q4'))!.counts.completed >= 20 + 3 ? true : null), 20_000, 200);
      const health = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(health.status).toBe(200);
      const queues = (await (await fetch(`http://127.0.0.1:${port}/api/v1/queues`)).json()) as { queues: { name: string }[] };
      expect(queues.queues.map((q) => q.name).sort()).toEqual(QUEUES);
    } finally {
      server.signal('SIGTERM');
      await server.exited;
      await worker.destroy();
    }
  });
});
