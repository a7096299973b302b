/** Task groups in the CLI on each store: enqueue --group, task get shows the group and why a grouped task waits. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BACKEND_KINDS, cliStore, oneLine, parseJson, runCli, type CliStore } from './helpers.js';

describe.each(BACKEND_KINDS)('taskline groups on %s', (kind) => {
  let store: CliStore;
  const cli = (...args: string[]) => runCli([...store.args, ...args], { cwd: store.dir });

  beforeEach(async () => {
    store = await cliStore(kind);
    await store.open();
  });
  afterEach(async () => {
    await store.cleanup();
  });

  it('enqueue --group stores the group; task get prints it (and --json has it, null without one)', async () => {
    const enqueued = await cli('enqueue', 'report', '--queue', 'tenants', '--group', 'tenant:42', '--id', 'g-1');
    expect(enqueued.code, enqueued.stderr).toBe(0);
    expect((await (await store.open()).getTask('g-1'))?.group).toBe('tenant:42');
    const get = await cli('task', 'get', 'g-1');
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout).toMatch(/^group\s+tenant:42$/m);
    expect(parseJson(await cli('--json', 'task', 'get', 'g-1'))).toMatchObject({ id: 'g-1', group: 'tenant:42' });

    expect((await cli('enqueue', 'report', '--id', 'plain')).code).toBe(0);
    const plain = await cli('task', 'get', 'plain');
    expect(plain.stdout).not.toMatch(/^group/m);
    expect(parseJson(await cli('--json', 'task', 'get', 'plain'))).toMatchObject({ id: 'plain', group: null });
  });

  it('a group that is not one is a usage error naming the accepted form; nothing is stored', async () => {
    const bad = await cli('enqueue', 'report', '--group', 'no spaces', '--id', 'bad');
    expect(bad.code).toBe(2);
    expect(oneLine(bad.stderr)).toMatch(/^taskline: invalid group "no spaces": a group is 1–200 characters of letters, digits and _ \. : @ \/ \+ = - \(TL_INVALID_OPTION\) \(see taskline enqueue --help\)$/);
    expect(await (await store.open()).getTask('bad')).toBeNull();
  });

  it('schedule add --group: its runs are tasks of the group; a bad group is refused before anything is stored', async () => {
    const added = await cli('schedule', 'add', 'tenant-report', '--cron', '0 9 * * *', '--type', 'report', '--queue', 'tenants', '--group', 'acme');
    expect(added.code, added.stderr).toBe(0);
    const triggered = parseJson(await cli('--json', 'schedule', 'trigger', 'tenant-report'));
    const backend = await store.open();
    expect((await backend.getTask(triggered.taskId as string))?.group).toBe('acme');
    const bad = await cli('schedule', 'add', 'bad-report', '--cron', '0 9 * * *', '--type', 'report', '--group', 'no spaces');
    expect(bad.code).not.toBe(0);
    expect(oneLine(bad.stderr)).toMatch(/group/);
    expect((await backend.listSchedules()).map((s) => s.id)).not.toContain('bad-report');
  });

  it('task get says when the task\'s group runs as many tasks as the queue\'s group concurrency allows', async () => {
    expect((await cli('queue', 'limit', 'tenants', '--group-concurrency', '1')).code).toBe(0);
    for (const id of ['a-1', 'a-2']) expect((await cli('enqueue', 'report', '--queue', 'tenants', '--group', 'acme', '--id', id)).code).toBe(0);
    const backend = await store.open();
    const [claim] = await backend.claim('cli-test-worker', [{ queue: 'tenants', count: 1 }], 60_000);
    expect(claim.tasks.map((t) => t.id)).toEqual(['a-1']);
    const get = await cli('task', 'get', 'a-2');
    expect(get.stdout).toMatch(/^waiting\s+the group acme of the queue tenants runs as many tasks as its group concurrency allows \(1\)$/m);
    expect(parseJson(await cli('--json', 'task', 'get', 'a-2')).waiting).toMatchObject({ reason: 'group-concurrency-full', until: null });
    const queues = parseJson(await cli('--json', 'queue', 'ls')).queues as { name: string; groups: unknown }[];
    expect(queues.find((q) => q.name === 'tenants')?.groups).toEqual({ waiting: 1, running: { acme: 1 } });
  });
});
