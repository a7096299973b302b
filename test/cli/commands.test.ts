/** Each command against each backend: human output, --json shapes, exit codes. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { Client } from '../../src/client/client.js';
import { Worker } from '../../src/worker/worker.js';
import { freePort } from '../scheduler/servers.js';
import { BACKEND_KINDS, CliProcess, cliStore, oneLine, parseJson, runCli, type CliStore } from './helpers.js';

const HANDLERS = `
export default {
  'test:echo': async (payload) => ({ echoed: payload }),
  'test:fail': async () => { throw new Error('boom'); },
  'test:slow': async (payload, ctx) => {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(resolve, payload.ms);
      ctx.signal.addEventListener('abort', () => { clearTimeout(timer); reject(ctx.signal.reason); });
    });
    return 'slow done';
  },
};
`;

describe.each(BACKEND_KINDS)('taskline commands on %s', (kind) => {
  let store: CliStore;
  const cli = (...args: string[]) => runCli([...store.args, ...args], { cwd: store.dir });

  beforeEach(async () => {
    store = await cliStore(kind);
    await store.open(); // the store exists: only dev and server create a missing SQLite file
  });
  afterEach(async () => {
    await store.cleanup();
  });

  it('schedulers: none, then the live instances with the leader (table and --json), from server processes', async () => {
    const none = await cli('schedulers');
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).toBe('no schedulers running (taskline server and taskline dev run one)\n');
    expect(parseJson(await cli('--json', 'schedulers'))).toEqual({ schedulers: [], leader: null });
    const ports = [await freePort(), await freePort()];
    const servers = ports.map((port) => new CliProcess([...store.args, 'server', '--port', String(port)], { cwd: store.dir }));
    try {
      for (const server of servers) await server.waitFor(/^ready/m, 20_000);
      const json = parseJson(await cli('--json', 'schedulers'));
      expect(json.schedulers).toHaveLength(2);
      expect(Object.keys(json.schedulers[0]).sort()).toEqual(['epoch', 'firesLastMinute', 'host', 'id', 'lastSeenAt', 'lastTickAt', 'leader', 'pid', 'startedAt', 'version']);
      const leader = json.schedulers.find((s: { leader: boolean }) => s.leader);
      expect(json.leader).toMatchObject({ id: leader.id, epoch: leader.epoch });
      expect(servers.map((s) => s.pid)).toContain(leader.pid);
      const table = await cli('schedulers');
      expect(table.stdout).toMatch(/^ID\s+HOST\s+PID\s+ROLE\s+EPOCH\s+UPTIME\s+LAST TICK\s+FIRES\/MIN$/m);
      expect(table.stdout).toMatch(new RegExp(`^${leader.id}\\s+\\S+\\s+${leader.pid}\\s+leader\\s+${leader.epoch}\\s`, 'm'));
      expect(table.stdout).toMatch(/\sstandby\s+-\s/);
    } finally {
      await Promise.all(servers.map((s) => s.kill()));
    }
  });

  it('enqueue prints the task; --json gives {id, type, queue, state}', async () => {
    const human = await cli('enqueue', 'mail:send', '{"to":"a@example.com"}');
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/^queued \S+ {2}mail:send on queue default\n$/);

    const json = await cli('--json', 'enqueue', 'mail:send', '{"n":1}', '--queue', 'low', '--id', 'job-1', '--delay', '1h');
    expect(json.code, json.stderr).toBe(0);
    expect(parseJson(json)).toEqual({ id: 'job-1', type: 'mail:send', queue: 'low', state: 'scheduled' });

    const task = await (await store.open()).getTask('job-1');
    expect(task).toMatchObject({ payload: { n: 1 }, queue: 'low', state: 'scheduled', maxRetries: 3 });
    expect(task!.nextRunAt! - task!.createdAt).toBeGreaterThan(3_590_000);
  });

  it('enqueue reads the payload from stdin with -, applies --max-retries and --timeout', async () => {
    const result = await runCli([...store.args, '--json', 'enqueue', 't', '-', '--max-retries', '0', '--timeout', '5s', '--id', 'stdin-1'], { cwd: store.dir, input: '{"from":"stdin"}' });
    expect(result.code, result.stderr).toBe(0);
    expect(await (await store.open()).getTask('stdin-1')).toMatchObject({ payload: { from: 'stdin' }, maxRetries: 0, timeout: 5_000 });
  });

  it('enqueue --definitions validates the payload and applies the definition\'s defaults', async () => {
    const definitions = join(store.dir, 'definitions.mjs');
    writeFileSync(
      definitions,
      `import { defineTask } from ${JSON.stringify(new URL('../../dist/index.js', import.meta.url).href)};
export const resize = defineTask('img:resize', {
  schema: { safeParse: (v) => (typeof v?.width === 'number' ? { success: true, data: v } : { success: false, error: { message: 'width must be a number' } }) },
  defaults: { queue: 'images', maxRetries: 1 },
});`,
    );
    const ok = await cli('--json', 'enqueue', 'img:resize', '{"width":10}', '--definitions', definitions);
    expect(ok.code, ok.stderr).toBe(0);
    const { id } = parseJson(ok);
    expect(await (await store.open()).getTask(id)).toMatchObject({ queue: 'images', maxRetries: 1 });
    const invalid = await cli('enqueue', 'img:resize', '{"width":"wide"}', '--definitions', definitions);
    expect(invalid.code).toBe(2);
    expect(oneLine(invalid.stderr)).toMatch(/^taskline: payload of img:resize does not match its schema: width must be a number \(TL_VALIDATION_FAILED\)/);
    const unknown = await cli('enqueue', 'other', '--definitions', definitions);
    expect(unknown.code).toBe(2);
    expect(oneLine(unknown.stderr)).toMatch(/defines no task type "other"/);
  });

  it('enqueue of an existing id fails with exit 1 and one line', async () => {
    expect((await cli('enqueue', 't', '--id', 'dup')).code).toBe(0);
    const again = await cli('enqueue', 't', '--id', 'dup');
    expect(again.code).toBe(1);
    expect(oneLine(again.stderr)).toBe('taskline: a task with id "dup" already exists (TL_TASK_CONFLICT)');
  });

  it('task get and task ls, human and --json', async () => {
    await cli('enqueue', 'report', '{"week":3}', '--id', 'r-1');
    await cli('enqueue', 'report', '{"week":4}', '--id', 'r-2');

    const get = await cli('task', 'get', 'r-1');
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout).toMatch(/^id\s+r-1$/m);
    expect(get.stdout).toMatch(/^state\s+queued$/m);
    expect(get.stdout).toMatch(/^payload\s+\{"week":3\}$/m);
    expect(get.stdout).toMatch(/^waiting\s+no live worker serves the queue default$/m);

    const getJson = parseJson(await cli('--json', 'task', 'get', 'r-1'));
    expect(Object.keys(getJson).sort()).toEqual(
      ['attempt', 'attempts', 'cancelRequested', 'createdAt', 'deadline', 'enqueuedAt', 'finishedAt', 'group', 'headers', 'id', 'lastError', 'links', 'logs', 'maxRetries', 'nextRunAt', 'payload', 'progress', 'queue', 'result', 'startedAt', 'state', 'timeout', 'type', 'waiting', 'workerId'].sort(),
    );
    expect(getJson).toMatchObject({ id: 'r-1', type: 'report', state: 'queued', payload: { week: 3 }, attempt: 0, result: null, waiting: { reason: 'no-worker-for-queue', until: null } });

    const ls = await cli('task', 'ls', '--state', 'queued');
    expect(ls.code, ls.stderr).toBe(0);
    const lines = ls.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+TYPE\s+STATE\s+ATTEMPT\s+CREATED\s+NEXT RUN\s+ERROR$/);
    expect(lines.slice(1).map((l) => l.split(/\s+/)[0]).sort()).toEqual(['r-1', 'r-2']);
    // Aligned: every row starts its TYPE column at the same offset.
    expect(new Set(lines.map((l) => l.indexOf(l.includes('TYPE') ? 'TYPE' : 'report'))).size).toBe(1);

    const page = parseJson(await cli('--json', 'task', 'ls', '--state', 'queued', '--limit', '1'));
    expect(page).toMatchObject({ queue: 'default', state: 'queued' });
    expect(page.tasks).toHaveLength(1);
    expect(typeof page.nextCursor).toBe('string');
    const next = parseJson(await cli('--json', 'task', 'ls', '--state', 'queued', '--limit', '1', '--cursor', page.nextCursor));
    expect(next.tasks.map((t: { id: string }) => t.id)).not.toContain(page.tasks[0].id);

    const missing = await cli('task', 'get', 'nope');
    expect(missing.code).toBe(1);
    expect(oneLine(missing.stderr)).toBe('taskline: no task with id "nope" (TL_TASK_NOT_FOUND)');
  });

  it('task ls without --state: a page of every state in lifecycle order, each in the order its help states', async () => {
    const backend = await store.open();
    const worker = new Worker(backend, { concurrency: 1, heartbeatInterval: 60_000 });
    worker.handle('done', async () => 'ok');
    await worker.start();
    const client = new Client(backend);
    try {
      for (const id of ['c-1', 'c-2']) {
        await client.enqueue('done', {}, { id });
        await client.waitFor(id, { timeout: 10_000 });
      }
    } finally {
      await worker.stop();
      await client.close();
    }
    for (const id of ['q-1', 'q-2', 'q-3']) await cli('enqueue', 'wait', '--id', id);
    await cli('enqueue', 'later', '--id', 's-late', '--delay', '10m');
    await cli('enqueue', 'later', '--id', 's-soon', '--delay', '5m');
    await cli('enqueue', 'gone', '--id', 'd-1');
    await cli('task', 'archive', 'd-1');

    const json = parseJson(await cli('--json', 'task', 'ls'));
    expect(json.queue).toBe('default');
    expect(json.states.map((s: { state: string }) => s.state)).toEqual(['scheduled', 'queued', 'running', 'retrying', 'completed', 'dead', 'cancelled']);
    const ids = Object.fromEntries(json.states.map((s: { state: string; tasks: { id: string }[] }) => [s.state, s.tasks.map((t) => t.id)]));
    expect(ids).toEqual({ scheduled: ['s-soon', 's-late'], queued: ['q-1', 'q-2', 'q-3'], running: [], retrying: [], completed: ['c-2', 'c-1'], dead: ['d-1'], cancelled: [] });
    expect(json.states.every((s: { nextCursor: unknown }) => s.nextCursor === null)).toBe(true);

    const table = await cli('task', 'ls', '--limit', '2');
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+TYPE\s+STATE\s/);
    expect(lines.slice(1, 8).map((l) => l.split(/\s+/).slice(0, 3).join(' '))).toEqual([
      's-soon later scheduled', 's-late later scheduled', 'q-1 wait queued', 'q-2 wait queued', 'c-2 done completed', 'c-1 done completed', 'd-1 gone dead',
    ]);
    expect(lines.slice(8)).toEqual([expect.stringMatching(/^more queued: taskline task ls --queue default --state queued --limit 2 --cursor \S+$/)]);
    const more = lines[8].split(': ')[1].split(' ').slice(1);
    expect(parseJson(await cli('--json', ...more)).tasks.map((t: { id: string }) => t.id)).toEqual(['q-3']);

    const refused = await cli('task', 'ls', '--cursor', 'abc');
    expect(refused.code).toBe(2);
    expect(oneLine(refused.stderr)).toBe('taskline: task ls: --cursor continues the list of one state; give the --state it came with (see taskline task ls --help)');
    expect((await cli('task', 'ls', '--queue', 'empty')).stdout).toBe('no tasks in queue empty\n');
  });

  it('task archive, run, cancel, delete — one task and --all', async () => {
    for (const id of ['a-1', 'a-2', 'a-3']) await cli('enqueue', 'op', '--id', id);

    const archive = parseJson(await cli('--json', 'task', 'archive', 'a-1'));
    expect(archive).toEqual({ id: 'a-1', action: 'archive', ok: true });
    const backend = await store.open();
    expect((await backend.getTask('a-1'))!.state).toBe('dead');

    const run = await cli('task', 'run', 'a-1');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('queued a-1\n');
    expect((await backend.getTask('a-1'))!.state).toBe('queued');

    expect(parseJson(await cli('--json', 'task', 'cancel', 'a-2'))).toEqual({ id: 'a-2', action: 'cancel', outcome: 'cancelled' });
    const deleted = await cli('task', 'delete', 'a-2');
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(await backend.getTask('a-2')).toBeNull();

    const bulk = parseJson(await cli('--json', 'task', 'archive', '--all', '--state', 'queued'));
    expect(bulk).toEqual({ queue: 'default', state: 'queued', action: 'archive', count: 2 });
    const runAll = await cli('task', 'run', '--all');
    expect(runAll.stdout).toBe('queued 2 dead tasks of queue default\n');

    const notAllowed = await cli('task', 'run', 'a-3');
    expect(notAllowed.code).toBe(1);
    expect(oneLine(notAllowed.stderr)).toMatch(/^taskline: .*\(TL_INVALID_STATE\)$/);
  });

  it('queue ls, pause, resume', async () => {
    await cli('enqueue', 'q', '--queue', 'emails');
    await cli('enqueue', 'q', '--queue', 'emails', '--delay', '10m');
    expect(parseJson(await cli('--json', 'queue', 'pause', 'emails'))).toEqual({ queue: 'emails', paused: true });

    const ls = await cli('queue', 'ls');
    expect(ls.code, ls.stderr).toBe(0);
    expect(ls.stdout).toMatch(/^QUEUE\s+STATUS\s+SCHEDULED\s+QUEUED\s+RUNNING\s+RETRYING\s+COMPLETED\s+DEAD\s+CANCELLED\s+PROCESSED\s+FAILED\s+LATENCY\s+LIMITS$/m);
    expect(ls.stdout).toMatch(/^emails\s+paused\s+1\s+1\s+0\s+0\s+0\s+0\s+0\s+0\s+0\s+\S+\s+-$/m);
    expect((await cli('queue', 'limit', 'emails', '--rate', '100/1s', '--group-concurrency', '2')).code).toBe(0);
    expect((await cli('queue', 'ls')).stdout).toMatch(/^emails\s+paused\s+.*\s+rate 100\/1s, group 2$/m);
    expect((await cli('queue', 'limit', 'emails', '--rate', 'none', '--group-concurrency', 'none')).code).toBe(0);

    const json = parseJson(await cli('--json', 'queue', 'ls'));
    expect(json.queues).toEqual([
      {
        name: 'emails', paused: true, keep: { completed: null, dead: null, cancelled: null },
        limits: { rate: null, concurrency: null, groupConcurrency: null, maxLength: null },
        counts: { scheduled: 1, queued: 1, running: 0, retrying: 0, completed: 0, dead: 0, cancelled: 0 },
        processed: 0, failed: 0, latencyMs: expect.any(Number), groups: { waiting: 0, running: {} },
      },
    ]);
    expect((await cli('queue', 'resume', 'emails')).stdout).toBe('resumed queue emails\n');
    expect((await (await store.open()).getQueue('emails'))!.paused).toBe(false);
  });

  it('queue keep shows and sets the bounds on finished tasks; bad values are usage errors', async () => {
    await cli('enqueue', 'q', '--queue', 'emails');
    const set = await cli('queue', 'keep', 'emails', '--completed', '0', '--dead', '1000');
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toBe('queue emails keeps completed: at most 0, dead: at most 1000, cancelled: no bound\n');
    expect(parseJson(await cli('--json', 'queue', 'keep', 'emails', '--dead', 'none'))).toEqual({ queue: 'emails', keep: { completed: 0, dead: null, cancelled: null } });
    expect(parseJson(await cli('--json', 'queue', 'keep', 'emails'))).toEqual({ queue: 'emails', keep: { completed: 0, dead: null, cancelled: null } });
    for (const bad of ['-1', '1.5', 'all', '2000000000']) {
      const refused = await cli('queue', 'keep', 'emails', '--completed', bad);
      expect(refused.code, bad).toBe(2);
      expect(refused.stderr).toContain('give a whole number of tasks from 0 to 1000000000, or none (no bound)');
    }
    expect((await (await store.open()).getQueue('emails'))!.keep).toEqual({ completed: 0, dead: null, cancelled: null });
    const unknown = await cli('queue', 'keep', 'nowhere');
    expect(unknown.code).toBe(1);
    expect(oneLine(unknown.stderr)).toMatch(/no queue "nowhere"/);
  });

  it('queue limit shows and sets a queue\'s controls; none removes one; bad values are usage errors; a full queue refuses an enqueue', async () => {
    await cli('enqueue', 'q', '--queue', 'emails');
    const set = await cli('queue', 'limit', 'emails', '--rate', '100/1s', '--concurrency', '10', '--group-concurrency', '2', '--max-length', '1');
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toBe('queue emails: rate: at most 100 starts per 1s, concurrency: 10, group concurrency: 2, max length: 1\n');
    expect(parseJson(await cli('--json', 'queue', 'limit', 'emails', '--rate', 'none', '--concurrency', 'none', '--group-concurrency', 'none'))).toEqual({
      queue: 'emails', limits: { rate: null, concurrency: null, groupConcurrency: null, maxLength: 1 },
    });
    expect(parseJson(await cli('--json', 'queue', 'limit', 'emails', '--rate', '10/1m30s'))).toMatchObject({ limits: { rate: { limit: 10, intervalMs: 90_000 } } });
    expect(parseJson(await cli('--json', 'queue', 'limit', 'emails', '--rate', '5/250ms'))).toMatchObject({ limits: { rate: { limit: 5, intervalMs: 250 } } });
    expect((await cli('queue', 'limit', 'emails')).stdout).toBe('queue emails: rate: at most 5 starts per 250ms, concurrency: no limit, group concurrency: no limit, max length: 1\n');
    for (const [flag, bad, message] of [
      ['--concurrency', '0', 'give a whole number from 1 to 1000000, or none (no limit)'],
      ['--concurrency', '-3', 'give a whole number from 1 to 1000000, or none (no limit)'],
      ['--max-length', '1.5', 'give a whole number from 1 to 1000000000, or none (no limit)'],
      ['--rate', '100', 'give <starts>/<interval>'],
      ['--rate', '100/0s', 'give <starts>/<interval>'],
      ['--rate', '0/1s', 'the starts "0" are not a whole number from 1 to 100000'],
      ['--rate', '1.5/1s', 'the starts "1.5" are not a whole number'],
      ['--rate', '1/0.6ms', 'the interval "0.6ms" is not whole ms, s, m or h from 1ms to 24h'],
      ['--rate', '1/1.0001s', 'the interval "1.0001s" is not whole'],
      ['--rate', '1/2d', 'the interval "2d" is not whole'],
      ['--rate', '1/25h', 'the interval "25h" is not whole ms, s, m or h from 1ms to 24h'],
    ]) {
      const refused = await cli('queue', 'limit', 'emails', flag, bad);
      expect(refused.code, `${flag} ${bad}`).toBe(2);
      expect(refused.stderr).toContain(message);
    }
    expect((await (await store.open()).getQueue('emails'))!.limits).toEqual({ rate: { limit: 5, intervalMs: 250 }, concurrency: null, groupConcurrency: null, maxLength: 1 });
    const full = await cli('enqueue', 'q', '--queue', 'emails');
    expect(full.code).toBe(1);
    expect(oneLine(full.stderr)).toMatch(/^taskline: queue emails is full: maxLength 1, 1 waiting .*\(TL_QUEUE_FULL\)$/);
    const unknown = await cli('queue', 'limit', 'nowhere');
    expect(unknown.code).toBe(1);
    expect(oneLine(unknown.stderr)).toMatch(/no queue "nowhere"/);
  });

  it('worker runs the handlers of a module; enqueue --wait sees results and failures; SIGTERM exits 0', async () => {
    const module = join(store.dir, 'handlers.mjs');
    writeFileSync(module, HANDLERS);
    const worker = new CliProcess([...store.args, 'worker', '--handlers', module, '--concurrency', '4', '--queues', 'critical=3,default=1'], { cwd: store.dir });
    try {
      await worker.waitFor(/ready/);
      const ok = await cli('--json', 'enqueue', 'test:echo', '{"hello":"world"}', '--wait', '--queue', 'critical');
      expect(ok.code, ok.stderr).toBe(0);
      expect(parseJson(ok)).toMatchObject({ type: 'test:echo', queue: 'critical', state: 'completed', result: { echoed: { hello: 'world' } }, error: null });

      const failed = await cli('enqueue', 'test:fail', '--wait', '--max-retries', '0');
      expect(failed.code).toBe(1);
      expect(oneLine(failed.stderr)).toMatch(/^taskline: task \S+ is dead: boom \(TL_TASK_FAILED\)$/);

      const workers = parseJson(await cli('--json', 'workers'));
      expect(workers.workers).toHaveLength(1);
      expect(workers.workers[0]).toMatchObject({ queues: ['critical', 'default'], concurrency: 4, running: [] });
      expect(Object.keys(workers.workers[0]).sort()).toEqual(['concurrency', 'host', 'id', 'lastHeartbeatAt', 'pid', 'queues', 'running', 'startedAt', 'version']);
      const table = await cli('workers');
      expect(table.stdout).toMatch(/^ID\s+HOST\s+PID\s+QUEUES\s+CONCURRENCY\s+RUNNING\s+UPTIME\s+HEARTBEAT$/m);

      const stats = parseJson(await cli('--json', 'stats'));
      expect(stats.workers).toBe(1);
      expect(stats.totals).toMatchObject({ completed: 1, dead: 1, processedToday: 2, failedToday: 1 });
      expect(stats.queues.map((q: { name: string }) => q.name).sort()).toEqual(['critical', 'default']);

      await worker.waitFor(/completed\s+test:echo/);
      await worker.waitFor(/failed\s+test:fail .* dead: boom/);

      // A task still running when SIGTERM arrives finishes before the worker exits 0.
      const slow = await cli('--json', 'enqueue', 'test:slow', '{"ms":700}');
      const { id } = parseJson(slow);
      await worker.waitFor(/./, 100).catch(() => undefined);
      await waitForState(store, id, 'running');
      worker.signal('SIGTERM');
      expect(await worker.exited).toEqual({ code: 0, signal: null });
      expect((await (await store.open()).getTask(id))!.state).toBe('completed');
      expect(worker.stderr).toMatch(/SIGTERM: stopping/);
    } finally {
      await worker.kill();
    }
  });

  it('worker: a second signal exits at once with 1', async () => {
    const module = join(store.dir, 'handlers.mjs');
    writeFileSync(module, HANDLERS);
    const worker = new CliProcess([...store.args, 'worker', '--handlers', module], { cwd: store.dir });
    try {
      await worker.waitFor(/ready/);
      const { id } = parseJson(await cli('--json', 'enqueue', 'test:slow', '{"ms":20000}'));
      await waitForState(store, id, 'running');
      const started = Date.now();
      worker.signal('SIGTERM');
      await new Promise((r) => setTimeout(r, 200));
      worker.signal('SIGINT');
      expect(await worker.exited).toEqual({ code: 1, signal: null });
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(worker.stderr).toMatch(/second SIGINT: exiting now/);
    } finally {
      await worker.kill();
    }
  });

  it('stats --watch --json prints a line per refresh and stops on SIGINT with 0', async () => {
    await cli('enqueue', 'w');
    const watch = new CliProcess([...store.args, '--json', 'stats', '--watch', '--interval', '200ms'], { cwd: store.dir });
    try {
      await watch.waitFor(/\n.*\n/);
      watch.signal('SIGINT');
      expect(await watch.exited).toEqual({ code: 0, signal: null });
      const lines = watch.stdout.trim().split('\n').map((l) => JSON.parse(l));
      expect(lines.length).toBeGreaterThanOrEqual(2);
      expect(lines[0]).toMatchObject({ workers: 0, totals: { queued: 1 } });
      expect(Object.keys(lines[0]).sort()).toEqual(['at', 'queues', 'totals', 'workers']);
    } finally {
      await watch.kill();
    }
  });
});

describe('taskline worker metrics', () => {
  let store: CliStore;
  beforeEach(async () => {
    store = await cliStore('sqlite');
    await store.open();
    writeFileSync(join(store.dir, 'handlers.mjs'), HANDLERS);
  });
  afterEach(async () => store.cleanup());

  it('the banner and the started event give the address /metrics is bound to, and it answers there', async () => {
    const port = await freePort();
    const worker = new CliProcess([...store.args, 'worker', '--handlers', 'handlers.mjs', '--metrics-port', String(port)], { cwd: store.dir });
    try {
      await worker.waitFor(/ready/);
      expect(worker.stdout).toContain(`\n  metrics http://0.0.0.0:${port}/metrics (every interface)\n`);
      // Every interface: loopback and, when the machine has one, an external address.
      const external = Object.values(networkInterfaces()).flat().find((i) => i?.family === 'IPv4' && !i.internal)?.address;
      for (const host of ['127.0.0.1', ...(external ? [external] : [])]) {
        const response = await fetch(`http://${host}:${port}/metrics`);
        expect(response.status, host).toBe(200);
        expect(await response.text()).toContain('scheduler_tasks_completed_total');
      }
      worker.signal('SIGTERM');
      expect(await worker.exited).toEqual({ code: 0, signal: null });
    } finally {
      await worker.kill();
    }

    const json = new CliProcess([...store.args, '--json', 'worker', '--handlers', 'handlers.mjs', '--metrics-port', String(port)], { cwd: store.dir });
    try {
      const [line] = await json.waitFor(/^\{"event":"started".*$/m);
      expect(JSON.parse(line).metrics).toEqual({ host: '0.0.0.0', port, url: `http://0.0.0.0:${port}/metrics` });
      json.signal('SIGTERM');
      expect(await json.exited).toEqual({ code: 0, signal: null });
    } finally {
      await json.kill();
    }
  });
});

async function waitForState(store: CliStore, id: string, state: string): Promise<void> {
  const backend = await store.open();
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if ((await backend.getTask(id))?.state === state) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`task ${id} did not reach ${state}`);
}
