/**
 * End to end: `taskline dev` as a child process in a fresh directory (so the default store
 * ./taskline.db lands there), an example task enqueued through the CLI with --wait, then SIGTERM.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { deletePrefix, REDIS_URL, uniquePrefix } from '../helpers/stores.js';
import { freePort } from '../scheduler/servers.js';
import { BACKEND_KINDS, CliProcess, parseJson, runCli } from './helpers.js';

describe.each(BACKEND_KINDS)('taskline dev on %s', (kind) => {
  let cwd: string;
  let prefix: string;
  let dev: CliProcess | null = null;
  /** Store arguments: none for SQLite (the default ./taskline.db), --backend and --prefix for Redis. */
  let storeArgs: string[];

  beforeEach(() => {
    cwd = mkdtempSync(join(tmpdir(), `taskline-dev-${kind}-`));
    prefix = uniquePrefix('dev');
    storeArgs = kind === 'redis' ? ['--backend', REDIS_URL, '--prefix', prefix] : [];
  });
  afterEach(async () => {
    await dev?.kill();
    dev = null;
    if (kind === 'redis') await deletePrefix(REDIS_URL, prefix);
    rmSync(cwd, { recursive: true, force: true });
  });

  it('a port in use ends dev with one line (the API is what the README talks to)', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    try {
      const port = (holder.address() as AddressInfo).port;
      const result = await runCli([...storeArgs, 'dev'], { cwd, env: { PORT: String(port) }, timeoutMs: 60_000 });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(`taskline: port ${port} is in use (another taskline dev or server?): stop that one, or give this one another port with PORT=<port> (TL_INVALID_CONFIG)\n`);
    } finally {
      holder.close();
    }
  });

  it('runs the example handlers: enqueue --wait completes, SIGTERM exits 0', async () => {
    dev = new CliProcess([...storeArgs, 'dev'], { cwd, env: { PORT: String(await freePort()) } });
    await dev.waitFor(/^ready/m);
    expect(dev.stdout).toMatch(/^ {2}store {7}(sqlite:\.\/taskline\.db \(embedded, .*taskline\.db\)|redis:\/\/127\.0\.0\.1:6379)$/m);
    expect(dev.stdout).toMatch(/^ {2}handlers {4}send_report, clean_expired_sessions, sync_external_data, email:deliver, report:generate, image:resize, workflow:summary$/m);
    expect(dev.stdout).toMatch(/^ {2}scheduler {3}running \(scheduler-\S+; lease 3s, takeover after 500ms\) — leader: this instance \(epoch \d+\): 3 schedules$/m);
    expect(dev.stdout).toMatch(/^ {4}ID +CRON +TIME ZONE +TASK +NEXT FIRE$/m);
    expect(dev.stdout).toMatch(/^ {4}weekly-report +0 0 9 \* \* 1 +UTC +send_report → default +\S+ 09:00:00 \+00:00 \(\S+ 09:00:00Z\)$/m);
    expect(dev.stdout).toMatch(/^ {4}session-cleanup +0 0 \*\/6 \* \* \* +UTC +clean_expired_sessions → default +\S+ (00|06|12|18):00:00 \+00:00/m);
    expect(dev.stdout).toMatch(/^ {4}external-sync +0 \*\/5 \* \* \* \* +UTC +sync_external_data → sync_workers +\S+ \d\d:\d[05]:00 \+00:00/m);
    expect(dev.stdout).toMatch(/^ {2}dashboard {3}http:\/\/127\.0\.0\.1:\d+\/$/m);
    // The banner comes first; scheduler events (leader, fires) follow it.
    expect(dev.stdout.indexOf('taskline dev ')).toBe(0);
    if (kind === 'sqlite') expect(existsSync(join(cwd, 'taskline.db'))).toBe(true);

    const report = await runCli([...storeArgs, '--json', 'enqueue', 'report:generate', '{"title":"E2E"}', '--queue', 'critical', '--wait', '--wait-timeout', '15s'], { cwd });
    expect(report.code, report.stderr).toBe(0);
    const done = parseJson(report);
    // The report counts the app's records: none yet, or the sample records once an external-sync
    // fire (every 5 s) ran first on a slow machine.
    expect(done).toMatchObject({ type: 'report:generate', queue: 'critical', state: 'completed', result: { records: expect.any(Number) } });
    expect([0, 5]).toContain((done as { result: { records: number } }).result.records);
    expect(readdirSync(join(cwd, '.taskline', 'reports'))).toEqual([`${done.id}.csv`]);

    const mail = await runCli([...storeArgs, 'enqueue', 'email:deliver', '{"to":"dev@example.com","subject":"hello","text":"from dev"}', '--wait'], { cwd });
    expect(mail.code, mail.stderr).toBe(0);
    expect(mail.stdout).toMatch(/"via":"outbox"/);
    await dev.waitFor(/completed\s+email:deliver/);

    dev.signal('SIGTERM');
    expect(await dev.exited).toEqual({ code: 0, signal: null });
    expect(dev.stderr).toMatch(/SIGTERM: stopping/);
  });

  it('--json prints NDJSON events', async () => {
    dev = new CliProcess([...storeArgs, '--json', 'dev'], { cwd, env: { PORT: String(await freePort()) } });
    const [line] = await dev.waitFor(/^\{.*"event":"started".*\}$/m);
    expect(dev.stdout.split('\n')[0]).toBe(line);
    expect(JSON.parse(line)).toMatchObject({ event: 'started', dashboard: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/$/), scheduler: { running: true, reconciled: { upserted: ['weekly-report', 'session-cleanup', 'external-sync'], removed: [] } }, worker: { queues: 'critical=6,default=3,sync_workers=2,low=1' } });
    const resized = await runCli([...storeArgs, 'enqueue', 'image:resize', '{"width":8,"height":8}', '--wait'], { cwd });
    expect(resized.code, resized.stderr).toBe(0);
    // The example schedules may complete a task meanwhile (external-sync fires every 5 minutes).
    const [completed] = await dev.waitFor(/^\{"event":"completed"[^\n]*"type":"image:resize"[^\n]*\}$/m);
    expect(JSON.parse(completed)).toMatchObject({ event: 'completed', type: 'image:resize', queue: 'default', attempt: 1 });
    dev.signal('SIGINT');
    expect(await dev.exited).toEqual({ code: 0, signal: null });
  });
});
