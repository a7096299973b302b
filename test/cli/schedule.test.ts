/** `taskline schedule …` on each backend: human output, --json shapes, exit codes, bad input stores nothing. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SchedulingBackend } from '../../src/backend/contract.js';
import { BACKEND_KINDS, cliStore, oneLine, parseJson, runCli, type CliStore } from './helpers.js';

describe.each(BACKEND_KINDS)('taskline schedule on %s', (kind) => {
  let store: CliStore;
  const cli = (...args: string[]) => runCli([...store.args, ...args], { cwd: store.dir, timeoutMs: 60_000 });
  const open = async (): Promise<SchedulingBackend> => store.open();

  beforeEach(async () => {
    store = await cliStore(kind);
    await store.open(); // the store exists: only dev and server create a missing SQLite file
  });
  afterEach(async () => {
    await store.cleanup();
  });

  it('add and ls: next fire in local time and UTC, last outcome, paused; --json', async () => {
    const added = await cli('schedule', 'add', 'weekly-report', '--cron', '0 0 9 * * 1', '--tz', 'Europe/Berlin', '--type', 'send_report', '--payload', '{"to":"a@example.com"}');
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toMatch(/^added schedule weekly-report: 0 0 9 \* \* 1 \(Europe\/Berlin\) → send_report on queue default; next fire \d{4}-\d\d-\d\d 09:00:00 \+0[12]:00 \(\d{4}-\d\d-\d\d 0[78]:00:00Z\)\n$/);
    expect((await cli('schedule', 'add', 'sync', '--cron', '*/5 * * * *', '--type', 'sync_external_data', '--queue', 'sync_workers', '--paused', '--note', 'not yet')).code).toBe(0);

    const ls = await cli('schedule', 'ls');
    expect(ls.code, ls.stderr).toBe(0);
    const lines = ls.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+CRON\s+TIME ZONE\s+NEXT \(LOCAL\)\s+NEXT \(UTC\)\s+LAST OUTCOME\s+PAUSED\s+TASK$/);
    expect(lines[1]).toMatch(/^sync\s+\*\/5 \* \* \* \*\s+UTC\s+-\s+-\s+-\s+yes: not yet\s+sync_external_data → sync_workers$/);
    expect(lines[2]).toMatch(/^weekly-report\s+0 0 9 \* \* 1\s+Europe\/Berlin\s+\S+ 09:00:00 \+0[12]:00\s+\S+ 0[78]:00:00Z\s+-\s+no\s+send_report → default$/);

    const json = parseJson(await cli('--json', 'schedule', 'ls'));
    expect(json.schedules.map((s: { id: string }) => s.id)).toEqual(['sync', 'weekly-report']);
    const weekly = json.schedules[1];
    expect(weekly).toMatchObject({
      id: 'weekly-report', cron: '0 0 9 * * 1', timezone: 'Europe/Berlin', task: { type: 'send_report', queue: 'default', payload: { to: 'a@example.com' } },
      overlap: 'skip', catchUp: { policy: 'latest', window: 3_600_000 }, jitter: 0, paused: false, source: 'api', lastOutcome: null,
    });
    expect(weekly.nextRunAt).toBeGreaterThan(Date.now());
    expect(new Date(weekly.nextRunAt).getUTCDay()).toBe(1);
    expect(json.schedules[0]).toMatchObject({ paused: true, pauseNote: 'not yet', nextRunAt: null });
  }, 120_000);

  it('add takes every option and stores it', async () => {
    const result = await cli(
      '--json', 'schedule', 'add', 'full', '--cron', '@every 90s', '--tz', 'America/New_York', '--type', 'report:generate', '--payload', '{"title":"T"}', '--queue', 'critical',
      '--max-retries', '1', '--timeout', '1m', '--overlap', 'bufferOne', '--catch-up', 'all:6h', '--jitter', '5s', '--start-at', '2030-01-01T00:00:00Z', '--end-at', '2031-01-01',
    );
    expect(result.code, result.stderr).toBe(0);
    expect(parseJson(result)).toMatchObject({ id: 'full', nextRunAt: Date.UTC(2030, 0, 1) });
    expect(await (await open()).getSchedule('full')).toMatchObject({
      cron: '@every 90s', timezone: 'America/New_York', task: { type: 'report:generate', queue: 'critical', payload: { title: 'T' }, maxRetries: 1, timeout: 60_000 },
      overlap: 'bufferOne', catchUp: { policy: 'all', window: 6 * 3_600_000 }, jitter: 5_000, startAt: Date.UTC(2030, 0, 1), endAt: Date.UTC(2031, 0, 1), paused: false, source: 'api',
    });
  }, 120_000);

  it('bad input exits 2 with one line and stores nothing', async () => {
    const cases: [string[], RegExp][] = [
      [['--cron', 'every day', '--type', 't'], /^taskline: invalid cron expression "every day": it has 2 fields; accepted: 5 fields .* \(TL_INVALID_CRON\)/],
      [['--cron', '0 0 30 2 *', '--type', 't'], /^taskline: invalid cron expression "0 0 30 2 \*": it never fires; .*\(TL_INVALID_CRON\)/],
      [['--cron', '0 9 * * *', '--tz', 'Mars/Olympus', '--type', 't'], /^taskline: unknown time zone "Mars\/Olympus": use an IANA name .*\(TL_INVALID_TIMEZONE\)/],
      [['--cron', '0 9 * * *', '--type', 't', '--start-at', '2030-02-01', '--end-at', '2030-01-01'], /^taskline: endAt \(2030-01-01T00:00:00\.000Z\) must be after startAt \(2030-02-01T00:00:00\.000Z\) \(TL_INVALID_SCHEDULE\)/],
      [['--cron', '0 9 * * *', '--type', 't', '--start-at', '2030-01-01T09:00'], /^taskline: --start-at "2030-01-01T09:00" is not a time: give an ISO-8601 time with a zone/],
      [['--cron', '0 9 * * *', '--type', 't', '--overlap', 'never'], /argument 'never' is invalid\. give one of skip, allow, bufferOne, cancelPrevious/],
      [['--cron', '0 9 * * *', '--type', 't', '--catch-up', 'some:1h'], /argument 'some:1h' is invalid\. give policy\[:window\] with policy skip, latest, all/],
      [['--cron', '0 9 * * *', '--type', 't', '--payload', '{bad'], /^taskline: the payload is not valid JSON/],
      [['--cron', '0 9 * * *', '--type', 't', '--queue', 'bad queue'], /^taskline: invalid task\.queue "bad queue"/],
      [['--type', 't'], /^taskline: schedule add needs --cron \(or --file <path>\)/],
    ];
    await Promise.all(
      cases.map(async ([args, expected]) => {
        const result = await cli('schedule', 'add', 'bad', ...args);
        expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(2);
        expect(oneLine(result.stderr)).toMatch(expected);
        expect(result.stdout).toBe('');
      }),
    );
    const badId = await cli('schedule', 'add', 'no spaces', '--cron', '* * * * *', '--type', 't');
    expect(badId.code).toBe(2);
    expect(oneLine(badId.stderr)).toMatch(/^taskline: invalid schedule id "no spaces"/);
    // Nothing was stored.
    expect(await (await open()).listSchedules()).toEqual([]);
  }, 120_000);

  it('an existing id is a conflict (exit 1) unless --replace; --file adds a list', async () => {
    expect((await cli('schedule', 'add', 'dup', '--cron', '0 * * * *', '--type', 'a')).code).toBe(0);
    const again = await cli('schedule', 'add', 'dup', '--cron', '0 * * * *', '--type', 'b');
    expect(again.code).toBe(1);
    expect(oneLine(again.stderr)).toBe('taskline: a schedule with id "dup" already exists (give --replace to replace it) (TL_SCHEDULE_CONFLICT)');
    const replaced = await cli('schedule', 'add', 'dup', '--cron', '30 * * * *', '--type', 'b', '--replace');
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(replaced.stdout).toMatch(/^saved schedule dup: 30 \* \* \* \* \(UTC\) → b on queue default/);
    expect(await (await open()).getSchedule('dup')).toMatchObject({ cron: '30 * * * *', task: { type: 'b' } });

    const file = join(store.dir, 'schedules.json');
    writeFileSync(file, JSON.stringify([
      { id: 'f-1', cron: '0 0 * * *', timezone: 'Asia/Kolkata', task: { type: 'x', payload: { n: 1 } } },
      { id: 'f-2', cron: '@hourly', task: { type: 'y', queue: 'low' }, catchUp: { policy: 'skip' } },
    ]));
    const fromFile = await cli('--json', 'schedule', 'add', '--file', file);
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(parseJson(fromFile).schedules.map((s: { id: string; timezone: string }) => [s.id, s.timezone])).toEqual([['f-1', 'Asia/Kolkata'], ['f-2', 'UTC']]);

    writeFileSync(file, JSON.stringify([{ id: 'f-3', cron: '0 0 * * *', task: { type: 'x' } }, { id: 'f-4', cron: '0 0 30 2 *', task: { type: 'x' } }]));
    const oneBad = await cli('schedule', 'add', '--file', file);
    expect(oneBad.code).toBe(2);
    expect(oneLine(oneBad.stderr)).toMatch(/never fires/);
    const mixed = await cli('schedule', 'add', 'x', '--file', file, '--cron', '* * * * *');
    expect(mixed.code).toBe(2);
    expect(oneLine(mixed.stderr)).toMatch(/^taskline: schedule add --file takes everything from the file: drop <id>, --cron/);
    expect((await (await open()).listSchedules()).map((s) => s.id)).toEqual(['dup', 'f-1', 'f-2']);
  }, 120_000);

  it('pause (note, until), resume, trigger, fires, rm', async () => {
    expect((await cli('schedule', 'add', 'nightly', '--cron', '0 3 * * *', '--type', 'cleanup', '--queue', 'low')).code).toBe(0);

    const paused = await cli('schedule', 'pause', 'nightly', '--note', 'migration running', '--until', '2h');
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toMatch(/^paused schedule nightly until \S+ \S+Z: migration running\n$/);
    const backend = await open();
    const stored = await backend.getSchedule('nightly');
    expect(stored).toMatchObject({ paused: true, pauseNote: 'migration running' });
    expect(stored!.pausedUntil! - Date.now()).toBeGreaterThan(7_100_000);
    expect((await cli('schedule', 'ls')).stdout).toMatch(/^nightly .* yes until \S+ \S+Z: migration running\s+cleanup → low$/m);

    const trigger = parseJson(await cli('--json', 'schedule', 'trigger', 'nightly'));
    expect(trigger).toMatchObject({ id: 'nightly', outcome: 'enqueued', type: 'cleanup', queue: 'low' });
    expect(await backend.getTask(trigger.taskId)).toMatchObject({ type: 'cleanup', queue: 'low', state: 'queued' });

    const fires = parseJson(await cli('--json', 'schedule', 'fires', 'nightly'));
    expect(fires).toEqual({ id: 'nightly', fires: [expect.objectContaining({ fireId: trigger.fireId, outcome: 'enqueued', taskId: trigger.taskId, taskState: 'queued' })] });
    const firesHuman = await cli('schedule', 'fires', 'nightly', '--limit', '5');
    expect(firesHuman.stdout).toMatch(/^NOMINAL \(LOCAL\)\s+NOMINAL \(UTC\)\s+ENQUEUED \(UTC\)\s+LAG\s+OUTCOME\s+TASK\s+TASK STATE\n.*enqueued\s+schedule:nightly:\S+\s+queued\n$/);

    const resumed = await cli('schedule', 'resume', 'nightly');
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/^resumed schedule nightly; next fire \S+ 03:00:00 \+00:00 \(\S+ 03:00:00Z\)\n$/);
    expect(await backend.getSchedule('nightly')).toMatchObject({ paused: false });

    const rm = await cli('--json', 'schedule', 'rm', 'nightly');
    expect(parseJson(rm)).toEqual({ id: 'nightly', deleted: true, source: 'api' });
    expect(await backend.getSchedule('nightly')).toBeNull();
    expect((await cli('schedule', 'ls')).stdout).toMatch(/^no schedules/);
  }, 120_000);

  it('an unknown schedule exits 1 with one line', async () => {
    expect((await cli('schedule', 'add', 'known', '--cron', '0 3 * * *', '--type', 't')).code).toBe(0);
    await Promise.all(
      [['rm', 'ghost'], ['pause', 'ghost'], ['resume', 'ghost'], ['trigger', 'ghost'], ['fires', 'ghost']].map(async (args) => {
        const result = await cli('schedule', ...args);
        expect(result.code, args.join(' ')).toBe(1);
        expect(oneLine(result.stderr)).toBe('taskline: no schedule with id "ghost" (TL_SCHEDULE_NOT_FOUND)');
      }),
    );
  }, 120_000);
});

describe('taskline schedule without a store', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'taskline-schedule-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('preview shows local time and UTC, across a DST change, and touches no store', async () => {
    const result = await runCli(['schedule', 'preview', '30 2 * * *', '--tz', 'America/New_York', '--count', '3'], { cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toBe('30 2 * * * in America/New_York: next 3 fire times');
    expect(lines[1]).toMatch(/^#\s+LOCAL\s+UTC$/);
    expect(lines.slice(2)).toHaveLength(3);
    for (const line of lines.slice(2)) expect(line).toMatch(/^\d\s+\S+ 02:30:00 -0[45]:00\s+\S+ 0[67]:30:00Z$/);
    expect(existsSync(join(dir, 'taskline.db'))).toBe(false);

    const json = parseJson(await runCli(['--json', 'schedule', 'preview', '0 0 * * *', '--tz', 'Asia/Kolkata', '--count', '2'], { cwd: dir }));
    expect(json.cron).toBe('0 0 * * *');
    expect(json.times).toHaveLength(2);
    expect(json.times[0]).toEqual({ at: expect.any(Number), utc: expect.stringMatching(/T18:30:00\.000Z$/), local: expect.stringMatching(/T00:00:00\+05:30$/) });
  }, 120_000);

  it('wrong usage exits 2 with one line', async () => {
    const cases: [string[], RegExp][] = [
      [['schedule'], /^taskline: schedule needs a subcommand: ls, add, rm, pause, resume, trigger, preview or fires \(see taskline schedule --help\)$/],
      [['schedule', 'explode'], /^taskline: schedule has no subcommand "explode"/],
      [['schedule', 'add'], /^taskline: schedule add needs <id>, --cron, --type \(or --file <path>\)/],
      [['schedule', 'rm'], /^taskline: missing required argument 'id' \(see taskline schedule rm --help\)$/],
      [['schedule', 'preview'], /^taskline: missing required argument 'cron'/],
      [['schedule', 'preview', '* * * * *', '--count', '0'], /argument '0' is invalid\. give a whole number from 1 to 1000/],
      [['schedule', 'preview', '0 0 30 2 *'], /^taskline: invalid cron expression "0 0 30 2 \*": it never fires/],
      [['schedule', 'preview', '* * * * *', '--tz', 'Nowhere/Town'], /^taskline: unknown time zone "Nowhere\/Town"/],
      [['schedule', 'pause', 'x', '--until', 'tomorrow'], /^taskline: --until "tomorrow" is not a time/],
      [['schedule', 'fires', 'x', '--limit', 'many'], /argument 'many' is invalid/],
      [['schedule', 'add', '--file', 'missing.json'], /^taskline: --file missing\.json: no such file/],
    ];
    await Promise.all(
      cases.map(async ([args, expected]) => {
        const result = await runCli(args, { cwd: dir, timeoutMs: 60_000 });
        expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(2);
        expect(oneLine(result.stderr)).toMatch(expected);
        expect(result.stdout).toBe('');
      }),
    );
  }, 120_000);
});
