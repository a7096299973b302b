/**
 * Schedules in the config file: reconciled by startScheduler (add, change, remove; API schedules
 * left alone; a bad schedule changes nothing), and end to end through `taskline dev`: a schedule
 * firing every second runs its task, `schedule fires` shows it, and a changed file is applied at
 * the next start.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { SchedulingBackend } from '../../src/backend/contract.js';
import { startScheduler, type RunningScheduler } from '../../src/cli/start-scheduler.js';
import { isTasklineError } from '../../src/core/errors.js';
import type { ScheduleInput } from '../../src/core/schedule.js';
import { ScheduleService } from '../../src/scheduler/service.js';
import { freePort } from '../scheduler/servers.js';
import { BACKEND_KINDS, CliProcess, cliStore, oneLine, parseJson, runCli, type CliStore } from './helpers.js';

describe.each(BACKEND_KINDS)('config-file schedules on %s', (kind) => {
  let store: CliStore;
  let backend: SchedulingBackend;
  let running: RunningScheduler | null = null;
  let dev: CliProcess | null = null;
  const configFile = () => join(store.dir, 'taskline.config.json');
  const writeConfig = (schedules: unknown[]) => writeFileSync(configFile(), JSON.stringify({ schedules }, null, 2));
  const cli = (...args: string[]) => runCli([...store.args, ...args], { cwd: store.dir, timeoutMs: 60_000 });

  beforeEach(async () => {
    store = await cliStore(kind);
    backend = await store.open();
  });
  afterEach(async () => {
    await running?.scheduler.stop();
    running = null;
    await dev?.kill();
    dev = null;
    await store.cleanup();
  });

  const start = async (schedules: ScheduleInput[], defaults?: ScheduleInput[]) => {
    await running?.scheduler.stop();
    running = null;
    running = await startScheduler(backend, { schedules, schedulerLeaseMs: 3_000, takeoverDelayMs: 500, configFile: configFile() }, { defaults });
    return running;
  };
  const ids = async () => (await backend.listSchedules()).map((s) => `${s.id}:${s.source}`);

  it('startScheduler upserts, changes and removes config-owned schedules; API schedules stay', async () => {
    await new ScheduleService(backend).create({ id: 'manual', cron: '0 12 * * *', task: { type: 'by-hand' } });
    const first = await start([
      { id: 'a', cron: '0 1 * * *', task: { type: 'job:a' } },
      { id: 'b', cron: '0 2 * * *', timezone: 'Europe/London', task: { type: 'job:b', queue: 'low' } },
    ]);
    expect(first.reconciled).toEqual({ upserted: ['a', 'b'], removed: [] });
    expect(first.schedules.map((s) => [s.schedule.id, s.nextRunAt !== null])).toEqual([['a', true], ['b', true], ['manual', true]]);
    expect(await ids()).toEqual(['a:config', 'b:config', 'manual:api']);

    const second = await start([
      { id: 'a', cron: '30 1 * * *', task: { type: 'job:a', payload: { v: 2 } } },
      { id: 'c', cron: '@every 10m', task: { type: 'job:c' } },
    ]);
    expect(second.reconciled).toEqual({ upserted: ['a', 'c'], removed: ['b'] });
    expect(await ids()).toEqual(['a:config', 'c:config', 'manual:api']);
    expect(await backend.getSchedule('a')).toMatchObject({ cron: '30 1 * * *', task: { payload: { v: 2 } } });

    // A bad schedule in the file: one line naming the file and the schedule, nothing changed.
    const error = await start([
      { id: 'a', cron: '0 5 * * *', task: { type: 'job:a' } },
      { id: 'never', cron: '0 0 30 2 *', task: { type: 'x' } },
    ]).catch((e: unknown) => e);
    expect(isTasklineError(error, 'TL_INVALID_CONFIG')).toBe(true);
    expect((error as Error).message).toMatch(/^taskline\.config\.json: schedules\[1\] \(never\): invalid cron expression "0 0 30 2 \*": it never fires/);
    const twice = await start([{ id: 'a', cron: '0 5 * * *', task: { type: 'x' } }, { id: 'a', cron: '0 6 * * *', task: { type: 'x' } }]).catch((e: unknown) => e);
    expect((twice as Error).message).toBe('taskline.config.json: schedules[1] (a): the id "a" is listed twice');
    expect(await ids()).toEqual(['a:config', 'c:config', 'manual:api']);
    expect(await backend.getSchedule('a')).toMatchObject({ cron: '30 1 * * *' });

    // Defaults (dev's examples) are owned by dev; the file wins on the same id.
    const third = await start([{ id: 'ex', cron: '0 9 * * *', task: { type: 'mine' } }], [
      { id: 'ex', cron: '0 8 * * *', task: { type: 'example' } },
      { id: 'other-example', cron: '0 7 * * *', task: { type: 'example' } },
    ]);
    expect(third.fromFile).toEqual({ upserted: ['ex'], removed: ['a', 'c'] });
    expect(third.fromDefaults).toEqual({ upserted: ['other-example'], removed: [] });
    expect(await backend.getSchedule('ex')).toMatchObject({ cron: '0 9 * * *', task: { type: 'mine' }, source: 'config' });
    expect(await backend.getSchedule('other-example')).toMatchObject({ source: 'dev' });

    // Without a config file nothing is reconciled: no schedule is changed or removed — not dev's
    // examples, not the file's from an earlier start.
    await running?.scheduler.stop();
    running = await startScheduler(backend, { schedules: [], schedulerLeaseMs: 3_000, takeoverDelayMs: 500, configFile: null });
    expect(running.fromFile).toBeNull();
    expect(running.reconciled).toEqual({ upserted: [], removed: [] });
    expect(await ids()).toEqual(['ex:config', 'manual:api', 'other-example:dev']);
    // A config file that lists no schedules removes the file's, and only those.
    const none = await start([]);
    expect(none.fromFile).toEqual({ upserted: [], removed: ['ex'] });
    expect(await ids()).toEqual(['manual:api', 'other-example:dev']);
  }, 120_000);

  it('taskline dev fires a config schedule every second: its task completes, schedule fires shows it; a changed file applies at the next start', async () => {
    writeConfig([{ id: 'tick', cron: '* * * * * *', task: { type: 'clean_expired_sessions', payload: { olderThanDays: 1 } } }]);
    dev = new CliProcess([...store.args, 'dev'], { cwd: store.dir, env: { PORT: String(await freePort()) } });
    await dev.waitFor(/^ready/m, 60_000);
    expect(dev.stdout).toMatch(/^ {2}scheduler {3}running .*: 4 schedules$/m);
    expect(dev.stdout).toMatch(/^ {4}tick +\* \* \* \* \* \* +UTC +clean_expired_sessions → default +\S+ \d\d:\d\d:\d\d \+00:00 \(\S+ \S+Z\)$/m);
    const [, taskId] = await dev.waitFor(/completed +clean_expired_sessions +(schedule:tick:1:\d+) +queue=default attempt=1/, 60_000);
    expect(dev.stdout).toMatch(new RegExp(`fire +tick +${taskId} +enqueued lag \\d+(ms|s)`));

    const fires = parseJson(await cli('--json', 'schedule', 'fires', 'tick'));
    expect(fires.fires).toContainEqual(expect.objectContaining({ fireId: taskId, taskId, outcome: 'enqueued', taskState: 'completed' }));
    // Within 1 s on an idle machine; loose here, as CI machines are shared.
    for (const fire of fires.fires.filter((f: { outcome: string }) => f.outcome === 'enqueued')) expect(fire.lagMs).toBeLessThan(5_000);
    const ls = parseJson(await cli('--json', 'schedule', 'ls'));
    expect(ls.schedules.map((s: { id: string; source: string }) => `${s.id}:${s.source}`)).toEqual(['external-sync:dev', 'session-cleanup:dev', 'tick:config', 'weekly-report:dev']);
    expect(ls.schedules[2].lastOutcome).toBe('enqueued');

    dev.signal('SIGTERM');
    expect(await dev.exited).toEqual({ code: 0, signal: null });

    // Change the file: tick goes, nightly comes; an API schedule stays.
    expect((await cli('schedule', 'add', 'manual', '--cron', '0 12 * * *', '--type', 'report:generate')).code).toBe(0);
    writeConfig([{ id: 'nightly', cron: '0 3 * * *', timezone: 'Australia/Lord_Howe', task: { type: 'send_report', payload: { to: 'ops@example.com' } } }]);
    dev = new CliProcess([...store.args, 'dev'], { cwd: store.dir, env: { PORT: String(await freePort()) } });
    await dev.waitFor(/^ready/m, 60_000);
    expect(dev.stdout).toMatch(/^ {2}scheduler {3}running .*: 5 schedules; removed tick \(no longer in the config\)$/m);
    expect(dev.stdout).toMatch(/^ {4}nightly +0 3 \* \* \* +Australia\/Lord_Howe +send_report → default +\S+ 03:00:00 \+1[01]:(00|30) /m);
    dev.signal('SIGTERM');
    expect(await dev.exited).toEqual({ code: 0, signal: null });
    expect((await backend.listSchedules()).map((s) => `${s.id}:${s.source}`)).toEqual([
      'external-sync:dev', 'manual:api', 'nightly:config', 'session-cleanup:dev', 'weekly-report:dev',
    ]);
  }, 120_000);

  it("taskline server without a config file changes no schedule: dev's examples stay, also when it fails to listen", async () => {
    dev = new CliProcess([...store.args, 'dev'], { cwd: store.dir, env: { PORT: String(await freePort()) } });
    await dev.waitFor(/^ready/m, 60_000);
    expect(dev.stdout).toMatch(/^ {2}schedules {3}examples owned by dev; no config file: no schedule was changed or removed/m);
    dev.signal('SIGTERM');
    await dev.exited;
    dev = null;
    const examples = ['external-sync:dev', 'session-cleanup:dev', 'weekly-report:dev'];
    expect(await ids()).toEqual(examples);
    // A port in use: the server fails, and the examples are still there.
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    try {
      const failed = await runCli([...store.args, 'server', '--port', String((busy.address() as AddressInfo).port)], { cwd: store.dir, timeoutMs: 60_000 });
      expect(failed.code).not.toBe(0);
      expect(await ids()).toEqual(examples);
    } finally {
      busy.close();
    }
    const server = new CliProcess([...store.args, 'server', '--port', String(await freePort())], { cwd: store.dir });
    try {
      await server.waitFor(/^ready/m, 30_000);
      expect(server.stdout).toMatch(/^ {2}schedules {3}no config file: no schedule was changed or removed \(only a config file's schedules are reconciled\)$/m);
    } finally {
      await server.kill();
    }
    expect(await ids()).toEqual(examples);
  }, 120_000);

  it('a bad schedule in the config file stops dev with one line (exit 1)', async () => {
    writeConfig([{ id: 'bad-zone', cron: '0 9 * * *', timezone: 'Atlantis/Capital', task: { type: 'x' } }]);
    const result = await runCli([...store.args, 'dev'], { cwd: store.dir, env: { PORT: String(await freePort()) }, timeoutMs: 60_000 });
    expect(result.code).toBe(1);
    expect(oneLine(result.stderr)).toMatch(/^taskline: taskline\.config\.json: schedules\[0\] \(bad-zone\): unknown time zone "Atlantis\/Capital": .* \(TL_INVALID_CONFIG\)$/);
    expect(await backend.listSchedules()).toEqual([]);

    writeConfig([]);
    writeFileSync(configFile(), JSON.stringify({ schedules: { id: 'not-a-list' } }));
    const notList = await runCli([...store.args, 'schedule', 'ls'], { cwd: store.dir, timeoutMs: 60_000 });
    expect(notList.code).toBe(1);
    expect(oneLine(notList.stderr)).toMatch(/^taskline: taskline\.config\.json: schedules must be a list of schedules/);
  }, 120_000);
});
