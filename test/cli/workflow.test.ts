/** `taskline workflow run|ls|get|cancel|retry` on each backend, and the README's example workflow on `taskline dev`. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '../../src/index.js';
import { freePort } from '../scheduler/servers.js';
import { BACKEND_KINDS, CliProcess, cliStore, oneLine, parseJson, runCli, type CliStore } from './helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');

describe.each(BACKEND_KINDS)('taskline workflow on %s', (kind) => {
  let store: CliStore;
  const cli = (...args: string[]) => runCli([...store.args, ...args], { cwd: store.dir, timeoutMs: 60_000 });

  beforeEach(async () => {
    store = await cliStore(kind);
    await store.open();
  });
  afterEach(async () => {
    await store.cleanup();
  });

  it('run --file stores the graph; ls, get, cancel and retry follow it; --json shapes', async () => {
    const file = join(store.dir, 'wf.json');
    writeFileSync(file, JSON.stringify({ id: 'cli-wf', name: 'cli demo', nodes: [{ id: 'a', type: 'x' }, { id: 'b', type: 'y', dependsOn: ['a'] }] }));
    const run = await cli('workflow', 'run', '--file', file);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('running workflow cli-wf; follow it with: taskline workflow get cli-wf\n');
    const get = await cli('workflow', 'get', 'cli-wf');
    expect(get.stdout).toMatch(/^workflow cli-wf \(cli demo\): running\n/);
    expect(get.stdout).toMatch(/^a\s+queued\s+x\s+-\s+\S+/m);
    expect(get.stdout).toMatch(/^b\s+pending \(waiting on a\)\s+y\s+a\s+\S+/m);
    const taskId = parseJson(await cli('--json', 'workflow', 'get', 'cli-wf')).nodes[0].taskId;
    expect((await cli('task', 'get', taskId)).stdout).toMatch(/^workflow +cli-wf, node a$/m);
    const ls = parseJson(await cli('--json', 'workflow', 'ls'));
    expect(ls.workflows.map((w: { id: string; state: string }) => [w.id, w.state])).toEqual([['cli-wf', 'running']]);
    const cancel = await cli('workflow', 'cancel', 'cli-wf');
    expect(cancel.stdout).toBe('cancelling workflow cli-wf: 2 cancelled\n');
    expect(parseJson(await cli('--json', 'workflow', 'get', 'cli-wf')).state).toBe('cancelled');
    const again = await cli('workflow', 'cancel', 'cli-wf');
    expect(again.code).toBe(1);
    expect(oneLine(again.stderr)).toMatch(/workflow "cli-wf" is cancelled; only a running workflow can be cancelled/);
    const retry = parseJson(await cli('--json', 'workflow', 'retry', 'cli-wf'));
    expect(retry.nodes.map((n: { id: string; state: string }) => [n.id, n.state])).toEqual([['a', 'queued'], ['b', 'pending']]);
    expect(parseJson(await cli('--json', 'workflow', 'ls', '--state', 'cancelled')).workflows).toEqual([]);
  });

  it('run --wait prints the results; a failure exits 1 with one line', async () => {
    const backend = await store.open();
    const { Worker } = await import('../../src/index.js');
    const worker = new Worker(backend, { idleWait: 200 });
    worker.handle('one', async () => 1);
    worker.handle('plus', async (_p, ctx) => (ctx.parent as number) + 1);
    worker.handle('fail', async () => {
      throw new (await import('../../src/index.js')).PermanentError('nope');
    });
    void worker.start();
    try {
      const file = join(store.dir, 'ok.json');
      writeFileSync(file, JSON.stringify({ nodes: [{ id: 'a', type: 'one' }, { id: 'b', type: 'plus', dependsOn: ['a'] }] }));
      const ok = await cli('workflow', 'run', '--file', file, '--wait');
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.stdout).toMatch(/completed workflow \S+\n {2}a: 1\n {2}b: 2\n$/);
      writeFileSync(file, JSON.stringify({ nodes: [{ id: 'bad', type: 'fail' }] }));
      const failed = await cli('workflow', 'run', '--file', file, '--wait');
      expect(failed.code).toBe(1);
      expect(oneLine(failed.stderr)).toMatch(/is failed: node "bad" ended dead: nope/);
    } finally {
      await worker.stop({ timeout: 1000 });
    }
  });

  it('task run on a dead node\'s task is refused, pointing at taskline workflow retry', async () => {
    const backend = await store.open();
    const { Worker, PermanentError } = await import('../../src/index.js');
    const worker = new Worker(backend, { idleWait: 200 });
    worker.handle('fail', async () => {
      throw new PermanentError('nope');
    });
    void worker.start();
    try {
      const file = join(store.dir, 'dead.json');
      writeFileSync(file, JSON.stringify({ id: 'wf-dead', nodes: [{ id: 'bad', type: 'fail' }] }));
      expect((await cli('workflow', 'run', '--file', file, '--wait')).code).toBe(1);
    } finally {
      await worker.stop({ timeout: 1000 });
    }
    const taskId = parseJson(await cli('--json', 'workflow', 'get', 'wf-dead')).nodes[0].taskId;
    const run = await cli('task', 'run', taskId);
    expect(run.code).toBe(1);
    expect(oneLine(run.stderr)).toBe(
      `taskline: cannot run task ${taskId}: it runs node "bad" of workflow wf-dead; run the workflow's failed nodes again with: taskline workflow retry wf-dead (TL_INVALID_STATE)`,
    );
    expect((await cli('workflow', 'retry', 'wf-dead')).code).toBe(0);
  });

  it('ls --cursor that no page printed: exit 2 with one line speaking of the workflow list', async () => {
    const cursor = await cli('workflow', 'ls', '--cursor', 'xyz');
    expect(cursor.code).toBe(2);
    expect(oneLine(cursor.stderr)).toBe(
      'taskline: workflow ls: invalid --cursor "xyz": give the cursor a previous page of the workflow list printed ("more: --cursor …", or nextCursor with --json), ' +
        'with the same --state; leave --cursor out for the first page (see taskline workflow ls --help)',
    );
  });

  it('bad input: exit 2 with one line naming the node or field; nothing stored', async () => {
    expect((await cli('workflow', 'run')).code).toBe(2);
    expect((await cli('workflow', 'run', '--file', join(store.dir, 'missing.json'))).code).toBe(2);
    expect((await cli('workflow', 'ls', '--state', 'nope')).code).toBe(2);
    expect((await cli('workflow', 'nope')).code).toBe(2);
    const file = join(store.dir, 'bad.json');
    for (const [doc, message] of [
      ['{"nodes":[{"id":"a","type":"x","dependsOn":["ghost"]}]}', 'node "a" depends on "ghost"'],
      ['{"nodes":[{"id":"a","type":"x","queue":"no spaces"}]}', 'node "a": invalid queue'],
      ['{"nodes":[{"id":"a"}]}', 'type must be a non-empty string'],
      ['not json', 'is not JSON'],
    ] as const) {
      writeFileSync(file, doc);
      const result = await cli('workflow', 'run', '--file', file);
      expect(result.code, result.stderr).toBe(2);
      expect(oneLine(result.stderr)).toContain(message);
    }
    const missing = await cli('workflow', 'get', 'nope');
    expect(missing.code).toBe(1);
    expect(oneLine(missing.stderr)).toContain('no workflow with id "nope"');
    expect(parseJson(await cli('--json', 'workflow', 'ls')).workflows).toEqual([]);
  });
});

describe('the README example workflow on taskline dev', () => {
  let dev: CliProcess | null = null;
  let cwd = '';
  afterEach(async () => {
    await dev?.kill();
    dev = null;
    rmSync(cwd, { recursive: true, force: true });
  });

  it('taskline workflow run --file examples/image-pipeline.json --wait completes every node', async () => {
    cwd = mkdtempSync(join(tmpdir(), 'taskline-wf-dev-'));
    const backend = `sqlite:${join(cwd, 'dev.db')}`;
    dev = new CliProcess(['--backend', backend, 'dev'], { cwd, env: { PORT: String(await freePort()) } });
    await dev.waitFor(/^ready/m, 60_000);
    const run = await runCli(['--backend', backend, 'workflow', 'run', '--file', join(ROOT, 'examples/image-pipeline.json'), '--wait'], { cwd, timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/completed workflow \S+\n/);
    expect(run.stdout).toMatch(/^ {2}summary: \{"path":".*-summary\.json","parents":\["thumbnail: completed","preview: completed","report: completed"\]\}$/m);
    const id = /completed workflow (\S+)/.exec(run.stdout)![1];
    const summary = JSON.parse(readFileSync(join(cwd, '.taskline', 'reports', `${id}-summary.json`), 'utf8'));
    expect(summary.parents.map((p: { node: string }) => p.node)).toEqual(['thumbnail', 'preview', 'report']);
    expect(summary.parents[0].result.to).toEqual({ width: 160, height: 100 });
    const client = new Client(await (await import('../../src/index.js')).connect(backend));
    try {
      expect((await client.getWorkflow(id))!.state).toBe('completed');
    } finally {
      await client.close();
      await client.backend.close();
    }
  }, 120_000);
});
