/** Wrong usage exits 2, failures exit 1; every error is one line on stderr without a stack. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../helpers/redis-server.js';
import { REDIS_URL, deletePrefix, uniquePrefix } from '../helpers/stores.js';
import { BACKEND_KINDS, CliProcess, cliStore, oneLine, parseJson, runCli, type CliStore } from './helpers.js';
import { Redis } from 'ioredis';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'taskline-cli-usage-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('usage errors exit 2 with one line', () => {
  const cases: [string, string[], RegExp][] = [
    ['no command', [], /^taskline: missing command: dev, worker, server, enqueue, task, workflow, queue, schedule, schedulers, workers, types, stats \(see taskline --help\)$/],
    ['unknown command', ['frobnicate'], /^taskline: unknown command "frobnicate"; commands: dev, worker/],
    ['a typo of a command', ['enqeue', 'x'], /^taskline: unknown command "enqeue" — did you mean enqueue\?; commands: dev, worker/],
    ['help for a command that does not exist', ['help', 'nope'], /^taskline: no command "nope" to show help for: dev, worker/],
    ['unknown option', ['queue', 'ls', '--frob'], /^taskline: unknown option '--frob' \(see taskline queue ls --help\)$/],
    ['missing argument', ['enqueue'], /^taskline: missing required argument 'type' \(see taskline enqueue --help\)$/],
    ['too many arguments', ['enqueue', 'a', '{}', 'extra'], /^taskline: too many arguments for 'enqueue'/],
    ['payload not JSON', ['enqueue', 'a', '{nope'], /^taskline: the payload is not valid JSON .*give a JSON value/],
    ['bad duration', ['enqueue', 'a', '--delay', 'soon'], /^taskline: option '--delay <duration>' argument 'soon' is invalid\. give a duration such as 500ms, 30s/],
    ['bad concurrency', ['worker', '--handlers', 'x.mjs', '--concurrency', '0'], /argument '0' is invalid\. give a whole number from 1 to 10000/],
    ['missing --handlers', ['worker'], /^taskline: required option '--handlers <module>' not specified/],
    ['handlers file missing', ['worker', '--handlers', 'nowhere.mjs'], /^taskline: --handlers nowhere\.mjs: no such file .*default export is \{ \[type\]: handler \}/],
    ['bad --queues', ['worker', '--handlers', 'x.mjs', '--queues', 'critical=high'], /^taskline: queues: the weight of critical must be a whole number from 1 to 1000, got NaN \(TL_INVALID_OPTION\)/],
    ['task without subcommand', ['task'], /^taskline: task needs a subcommand: get, ls, search, run, archive, delete or cancel/],
    ['task unknown subcommand', ['task', 'explode'], /^taskline: task has no subcommand "explode"/],
    ['bad state', ['task', 'ls', '--state', 'done'], /argument 'done' is invalid\. give one of scheduled, queued, running, retrying, completed, dead, cancelled/],
    ['run without id or --all', ['task', 'run'], /^taskline: task run: give a task id, or --all/],
    ['id and --all', ['task', 'delete', 'x', '--all'], /^taskline: task delete: give either a task id or --all/],
    ['bulk state not allowed', ['task', 'archive', '--all', '--state', 'completed'], /--state completed is not accepted; give one of queued, scheduled, retrying/],
    ['bad queue name', ['queue', 'pause', 'no spaces'], /^taskline: invalid queue "no spaces": a queue name is/],
    ['bad task id', ['task', 'get', 'a b'], /^taskline: invalid task id "a b"/],
    ['bad --backend', ['--backend', 'postgres://x', 'queue', 'ls'], /^taskline: --backend="postgres:\/\/x" is not accepted: redis:\/\/host:port\[\/db\], rediss:\/\/host:port\[\/db\], redis\+sentinel:\/\/host:port\[,host:port…\]\/<master name>\[\/db\], redis\+cluster:\/\/host:port\[,host:port…\] \(each may add \?durability=replicated\) or sqlite:<path> \(TL_INVALID_CONFIG\)/],
    ['a Redis database that is not a number', ['--backend', 'redis://127.0.0.1:6379/abc', 'queue', 'ls'], /^taskline: --backend="redis:\/\/127\.0\.0\.1:6379\/abc" is not accepted: the database must be a whole number \(redis:\/\/host:port\/2\), got "abc"; accepted: redis:\/\/host:port\[\/db\]/],
    ['a Cluster URL with a database', ['--backend', 'redis+cluster://127.0.0.1:7000/1', 'queue', 'ls'], /^taskline: --backend="redis\+cluster:\/\/127\.0\.0\.1:7000\/1" is not accepted: a Redis Cluster has database 0 only/],
    ['definitions file missing', ['enqueue', 'a', '--definitions', 'defs.mjs'], /^taskline: --definitions defs\.mjs: no such file .*exports defineTask/],
    ['missing --config file', ['--config', 'nope.json', 'queue', 'ls'], /^taskline: config file nope\.json does not exist/],
  ];
  beforeAll(() => writeFileSync(join(dir, 'x.mjs'), 'export default { a: async () => 1 };'));
  // Independent child processes: run them side by side.
  it.concurrent.each(cases)('%s', async (_name, args, expected) => {
    const result = await runCli(args, { cwd: dir });
    expect(result.code, result.stderr).toBe(2);
    expect(oneLine(result.stderr)).toMatch(expected);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(result.stdout).toBe('');
  });

  it('taskline help [command …] prints that command\'s help, exit 0', async () => {
    for (const [args, usage] of [[['help'], 'Usage: taskline [options] <command>'], [['help', 'enqueue'], 'Usage: taskline enqueue [options] <type> [json]'], [['help', 'schedule', 'add'], 'Usage: taskline schedule add <id>']] as const) {
      const result = await runCli([...args]);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout.startsWith(usage), result.stdout).toBe(true);
      expect(result.stderr).toBe('');
    }
  });

  it('--help and --version exit 0 on stdout', async () => {
    const help = await runCli(['task', 'ls', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: taskline task ls \[options\]/);
    const version = await runCli(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });
});

describe('store and configuration failures exit 1 with one line', () => {
  it('an unreachable Redis', async () => {
    const port = await freePort();
    const result = await runCli(['--backend', `redis://127.0.0.1:${port}`, 'queue', 'ls']);
    expect(result.code).toBe(1);
    expect(oneLine(result.stderr)).toBe(
      `taskline: cannot reach Redis at redis://127.0.0.1:${port}: no answer (is redis-server running there? set the store with --backend or TASKLINE_BACKEND) (TL_STORE_UNAVAILABLE)`,
    );
  });

  it('a Redis database the server does not have is refused, not replaced by database 0', async () => {
    const result = await runCli(['--backend', 'redis://127.0.0.1:6379/99', '--prefix', 'never-written', 'enqueue', 'a', '{}']);
    expect(result.code).toBe(1);
    expect(oneLine(result.stderr)).toMatch(/^taskline: redis:\/\/127\.0\.0\.1:6379\/99: this Redis server has no database 99 \(ERR DB index is out of range\); use a number below its "databases" setting/);
    const redis = new Redis(REDIS_URL);
    try {
      expect(await redis.keys('*never-written*')).toEqual([]);
    } finally {
      redis.disconnect();
    }
  });

  it('a missing SQLite store (the default ./taskline.db) for inspection, without creating it', async () => {
    const result = await runCli(['task', 'ls', '--state', 'dead'], { cwd: dir });
    expect(result.code).toBe(1);
    expect(oneLine(result.stderr)).toMatch(/^taskline: no store at sqlite:\.\/taskline\.db: .*taskline\.db does not exist; `taskline dev` or `taskline server` with this backend creates it/);
    const again = await runCli(['--json', 'workers'], { cwd: dir });
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(existsSync(join(dir, 'taskline.db'))).toBe(false);
  });

  // A mistyped path must not become a new empty store that a worker polls or a producer fills.
  const refusing: [string, string[]][] = [
    ['worker', ['worker', '--handlers', 'x.mjs']],
    ['enqueue', ['enqueue', 'email:deliver', '{}']],
    ['schedule add', ['schedule', 'add', 'nightly', '--cron', '0 3 * * *', '--type', 'send_report']],
  ];
  it.concurrent.each(refusing)('%s refuses a SQLite file that does not exist, and creates nothing', async (name, args) => {
    const path = join(dir, `typo-${name.replace(' ', '-')}.db`);
    const result = await runCli(['--backend', `sqlite:${path}`, ...args], { cwd: dir });
    expect(result.code, result.stderr).toBe(1);
    expect(oneLine(result.stderr)).toBe(
      `taskline: no store at sqlite:${path}: ${path} does not exist; \`taskline dev\` or \`taskline server\` with this backend creates it (or point --backend / TASKLINE_BACKEND at your store) (TL_STORE_UNAVAILABLE)`,
    );
    expect(result.stdout).toBe('');
    expect(existsSync(path)).toBe(false);
  });

  it('server creates a SQLite store that does not exist yet (as dev does)', async () => {
    const path = join(dir, 'new-store.db');
    const server = new CliProcess(['--backend', `sqlite:${path}`, 'server', '--port', String(await freePort())], { cwd: dir });
    try {
      await server.waitFor(/^ready/m, 20_000);
      expect(existsSync(path)).toBe(true);
      server.signal('SIGTERM');
      expect(await server.exited).toEqual({ code: 0, signal: null });
      // As dev and worker do: what it is doing, then that it is done.
      expect(server.stderr).toMatch(/taskline: SIGTERM: stopping the task center\ntaskline: stopped\n$/);
    } finally {
      await server.kill();
    }
  }, 30_000);

  const envCases: [string, Record<string, string>, RegExp][] = [
    ['MAX_RETRIES', { MAX_RETRIES: 'lots' }, /^taskline: MAX_RETRIES="lots" is not accepted: a whole number from 0 to 1000 \(TL_INVALID_CONFIG\)$/],
    ['LOCK_TTL', { LOCK_TTL: '30 parsecs' }, /^taskline: LOCK_TTL="30 parsecs" is not accepted: a duration such as 500ms, 30s/],
    ['PORT', { PORT: '99999' }, /^taskline: PORT="99999" is not accepted: a whole number from 1 to 65535/],
    ['DEFAULT_QUEUE', { DEFAULT_QUEUE: 'a b' }, /^taskline: DEFAULT_QUEUE="a b" is not accepted: a queue name/],
    ['REDIS_URL not Redis', { REDIS_URL: 'http://x' }, /^taskline: REDIS_URL="http:\/\/x" is not accepted: redis:\/\//],
    ['BROKER_URL and RESULT_BACKEND differ', { BROKER_URL: 'redis://a:6379', RESULT_BACKEND: 'redis://b:6379' }, /^taskline: BROKER_URL, RESULT_BACKEND point to different stores/],
  ];
  it.concurrent.each(envCases)('invalid environment: %s', async (_name, env, expected) => {
    const result = await runCli(['queue', 'ls'], { cwd: dir, env });
    expect(result.code).toBe(1);
    expect(oneLine(result.stderr)).toMatch(expected);
  });

  it('an invalid config file names the file and the setting', async () => {
    const cwd = mkdtempSync(join(dir, 'cfg-'));
    writeFileSync(join(cwd, 'taskline.config.json'), JSON.stringify({ backend: 'sqlite:./x.db', maxRetries: -1 }));
    const bad = await runCli(['queue', 'ls'], { cwd });
    expect(bad.code).toBe(1);
    expect(oneLine(bad.stderr)).toBe('taskline: taskline.config.json: maxRetries=-1 is not accepted: a whole number from 0 to 1000 (TL_INVALID_CONFIG)');
    writeFileSync(join(cwd, 'taskline.config.json'), JSON.stringify({ backnd: 'x' }));
    expect(oneLine((await runCli(['queue', 'ls'], { cwd })).stderr)).toMatch(/^taskline: taskline\.config\.json: unknown setting "backnd"; accepted: backend, maxRetries/);
    writeFileSync(join(cwd, 'taskline.config.json'), '{ not json');
    expect(oneLine((await runCli(['queue', 'ls'], { cwd })).stderr)).toMatch(/^taskline: taskline\.config\.json is not valid JSON/);
  });
});

describe('a module that fails to load: one line with its file, line and column (exit 1)', () => {
  let modules: string;
  beforeAll(() => {
    modules = mkdtempSync(join(dir, 'modules-'));
    const files: Record<string, string> = {
      'syntax.mjs': 'export default {\n  a: async () => {\n    return 1 +;\n  },\n};\n',
      'imports-broken.mjs': "import { writeFileSync } from 'node:fs';\nimport './syntax.mjs';\nwriteFileSync(new URL('./ran', import.meta.url), 'ran');\nexport default {};\n",
      'unfinished.mjs': 'export default { a: () => 1 ',
      'throws.mjs': "export default { a: () => 1 };\nthrow new Error('no config');\n",
      'port.mjs': "throw new Error('connect ECONNREFUSED 127.0.0.1:6379');\n",
      'dynamic.mjs': "import { appendFileSync } from 'node:fs';\nappendFileSync(new URL('./dynamic-ran', import.meta.url), 'ran ');\nawait import('./syntax.mjs');\n",
      'syntax.cjs': 'module.exports = {\n  a: () => 1 +,\n};\n',
      'defs.mjs': "import { z } from 'zod';\nexport const a = { type: 'a', schema: z.object({}) ;\n",
    };
    for (const [name, text] of Object.entries(files)) writeFileSync(join(modules, name), text);
  });

  const at = (name: string, place: string) => `${join(modules, name)}:${place}`;
  const cases: [string, string[], () => string][] = [
    ['a syntax error', ['worker', '--handlers', 'syntax.mjs'], () => `--handlers syntax.mjs failed to load: ${at('syntax.mjs', '3:15')}: SyntaxError: Unexpected token ';'`],
    ['a syntax error in a module it imports', ['worker', '--handlers', 'imports-broken.mjs'], () => `--handlers imports-broken.mjs failed to load: ${at('syntax.mjs', '3:15')}: SyntaxError: Unexpected token ';'`],
    ['an unfinished module', ['worker', '--handlers', 'unfinished.mjs'], () => `--handlers unfinished.mjs failed to load: ${at('unfinished.mjs', '1:29')}: SyntaxError: Unexpected end of input`],
    ['an error thrown while it runs', ['worker', '--handlers', 'throws.mjs'], () => `--handlers throws.mjs failed to load: ${at('throws.mjs', '2:7')}: Error: no config`],
    ['an error whose message ends like a place', ['worker', '--handlers', 'port.mjs'], () => `--handlers port.mjs failed to load: ${at('port.mjs', '1:7')}: Error: connect ECONNREFUSED 127.0.0.1:6379`],
    ['a CommonJS syntax error', ['worker', '--handlers', 'syntax.cjs'], () => `--handlers syntax.cjs failed to load: ${at('syntax.cjs', '2:15')}: SyntaxError: Unexpected token ','`],
    ['--definitions', ['enqueue', 'a', '--definitions', 'defs.mjs'], () => `--definitions defs.mjs failed to load: ${at('defs.mjs', '2:52')}: SyntaxError: Unexpected token ';'`],
  ];
  it.concurrent.each(cases)('%s', async (_name, args, expected) => {
    const result = await runCli(args, { cwd: modules });
    expect(result.code, result.stderr).toBe(1);
    expect(oneLine(result.stderr)).toBe(`taskline: ${expected()}`);
    expect(result.stdout).toBe('');
  });

  it('finding the place runs none of the module\'s code', async () => {
    await runCli(['worker', '--handlers', 'imports-broken.mjs'], { cwd: modules });
    expect(existsSync(join(modules, 'ran'))).toBe(false);
    // A dynamic import of a broken file runs the code before it once (the worker's own load);
    // finding the place does not run it a second time.
    rmSync(join(modules, 'dynamic-ran'), { force: true });
    const result = await runCli(['worker', '--handlers', 'dynamic.mjs'], { cwd: modules });
    expect(oneLine(result.stderr)).toMatch(/failed to load: .*SyntaxError: Unexpected token ';'/);
    expect(readFileSync(join(modules, 'dynamic-ran'), 'utf8')).toBe('ran ');
  });

  it('a taskline.config.mjs', async () => {
    const cwd = mkdtempSync(join(dir, 'mjs-config-'));
    writeFileSync(join(cwd, 'taskline.config.mjs'), "export default {\n\tbackend: 'sqlite:./x.db',,\n};\n");
    const result = await runCli(['queue', 'ls'], { cwd });
    expect(result.code).toBe(1);
    expect(oneLine(result.stderr)).toBe(`taskline: taskline.config.mjs failed to load: ${join(cwd, 'taskline.config.mjs')}:2:27: SyntaxError: Unexpected token ',' (TL_INVALID_CONFIG)`);
  });
});

describe.each(BACKEND_KINDS)('settings reach the commands on %s', (kind) => {
  let store: CliStore;
  beforeAll(async () => {
    store = await cliStore(kind);
    await store.open(); // the store exists: only dev and server create a missing SQLite file
  });
  afterAll(async () => store.cleanup());

  it('TASKLINE_BACKEND/TASKLINE_PREFIX, MAX_RETRIES and DEFAULT_QUEUE apply to enqueue; a flag beats the environment', async () => {
    const env: Record<string, string> = { TASKLINE_BACKEND: store.url, MAX_RETRIES: '7', DEFAULT_QUEUE: 'from-env' };
    const prefixIndex = store.args.indexOf('--prefix');
    if (prefixIndex >= 0) env.TASKLINE_PREFIX = store.args[prefixIndex + 1];
    const result = await runCli(['--json', 'enqueue', 'cfg', '--id', 'cfg-1'], { cwd: store.dir, env });
    expect(result.code, result.stderr).toBe(0);
    expect(parseJson(result)).toMatchObject({ queue: 'from-env' });
    expect(await (await store.open()).getTask('cfg-1')).toMatchObject({ maxRetries: 7, queue: 'from-env' });

    // A command's flags win over the environment (and so over the config file).
    const flagged = await runCli(['--json', 'enqueue', 'cfg', '--id', 'cfg-2', '--queue', 'from-flag', '--max-retries', '1'], { cwd: store.dir, env });
    expect(flagged.code, flagged.stderr).toBe(0);
    expect(await (await store.open()).getTask('cfg-2')).toMatchObject({ maxRetries: 1, queue: 'from-flag' });

    // --backend wins over a bad TASKLINE_BACKEND.
    const flagWins = await runCli([...store.args, '--json', 'task', 'get', 'cfg-1'], { cwd: store.dir, env: { TASKLINE_BACKEND: 'redis://127.0.0.1:1' } });
    expect(flagWins.code, flagWins.stderr).toBe(0);
  });

  it('a config file supplies the backend when neither flag nor environment does', async () => {
    const cwd = mkdtempSync(join(store.dir, 'cfg-'));
    const prefixIndex = store.args.indexOf('--prefix');
    const config: Record<string, unknown> = { backend: store.url, defaultQueue: 'from-file' };
    if (prefixIndex >= 0) config.prefix = store.args[prefixIndex + 1];
    writeFileSync(join(cwd, 'taskline.config.json'), JSON.stringify(config));
    const result = await runCli(['--json', 'enqueue', 'cfg'], { cwd });
    expect(result.code, result.stderr).toBe(0);
    expect(parseJson(result)).toMatchObject({ queue: 'from-file' });
    const envWins = await runCli(['--json', 'enqueue', 'cfg'], { cwd, env: { DEFAULT_QUEUE: 'from-env' } });
    expect(parseJson(envWins)).toMatchObject({ queue: 'from-env' });
  });
});

describe('a Redis prefix isolates stores', () => {
  it('tasks enqueued under one prefix are not seen under another', async () => {
    const [a, b] = [uniquePrefix('cli-a'), uniquePrefix('cli-b')];
    try {
      expect((await runCli(['--backend', REDIS_URL, '--prefix', a, 'enqueue', 'x', '--id', 'iso'])).code).toBe(0);
      expect((await runCli(['--backend', REDIS_URL, '--prefix', b, 'task', 'get', 'iso'])).code).toBe(1);
      expect((await runCli(['--backend', REDIS_URL, '--prefix', a, 'task', 'get', 'iso'])).code).toBe(0);
    } finally {
      await deletePrefix(REDIS_URL, a);
      await deletePrefix(REDIS_URL, b);
    }
  });
});
