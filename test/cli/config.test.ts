/** Configuration: precedence flags > environment > config file > defaults; one-line errors. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSettings } from '../../src/config/index.js';
import { parseDuration } from '../../src/config/values.js';
import { isTasklineError } from '../../src/core/errors.js';

let cwd: string;
beforeEach(() => {
  cwd = mkdtempSync(join(tmpdir(), 'taskline-config-'));
});
afterEach(() => rmSync(cwd, { recursive: true, force: true }));

async function failure(promise: Promise<unknown>): Promise<{ message: string; source: unknown }> {
  try {
    await promise;
  } catch (error) {
    if (!isTasklineError(error, 'TL_INVALID_CONFIG')) throw error;
    expect(error.message).not.toContain('\n');
    return { message: error.message, source: (error.details as { source?: string }).source };
  }
  throw new Error('expected a TL_INVALID_CONFIG error');
}

describe('loadSettings', () => {
  it('defaults: the embedded store and the defaults', async () => {
    expect(await loadSettings({ env: {}, cwd })).toEqual({
      backend: 'sqlite:./taskline.db', backendFrom: 'default', prefix: undefined, maxRetries: 3, defaultQueue: 'default', lockTtlMs: 30_000,
      schedulerLeaseMs: 3_000, takeoverDelayMs: 500, metricsPort: 9090, port: 8080, apiToken: undefined, readToken: undefined, configFile: null, schedules: [],
    });
  });

  it('reads every setting from the environment; empty values count as unset', async () => {
    const settings = await loadSettings({
      cwd,
      env: {
        REDIS_URL: 'redis://r:6379/2', MAX_RETRIES: '5', DEFAULT_QUEUE: 'jobs', LOCK_TTL: '45s', METRICS_PORT: '9100', PORT: '3000',
        SCHEDULER_LEASE: '5s', SCHEDULER_TAKEOVER_DELAY: '250ms', TASKLINE_API_TOKEN: 'admin-token', TASKLINE_READ_TOKEN: 'read-token', TASKLINE_PREFIX: 'app', BROKER_URL: '',
      },
    });
    expect(settings).toMatchObject({
      backend: 'redis://r:6379/2', backendFrom: 'REDIS_URL', maxRetries: 5, defaultQueue: 'jobs', lockTtlMs: 45_000, schedulerLeaseMs: 5_000, takeoverDelayMs: 250, metricsPort: 9100, port: 3000,
      apiToken: 'admin-token', readToken: 'read-token', prefix: 'app',
    });
  });

  it('BROKER_URL and RESULT_BACKEND may name the same store; different stores fail', async () => {
    const same = await loadSettings({ cwd, env: { BROKER_URL: 'redis://a:6379', RESULT_BACKEND: 'redis://a:6379' } });
    expect(same.backend).toBe('redis://a:6379');
    const differ = await failure(loadSettings({ cwd, env: { BROKER_URL: 'redis://a:6379', RESULT_BACKEND: 'redis://b:6379' } }));
    expect(differ.message).toMatch(/BROKER_URL, RESULT_BACKEND point to different stores/);
    expect(differ.source).toBe('env');
    const conflict = await failure(loadSettings({ cwd, env: { TASKLINE_BACKEND: 'sqlite:./x.db', REDIS_URL: 'redis://a:6379' } }));
    expect(conflict.message).toMatch(/TASKLINE_BACKEND="sqlite:.\/x.db" and REDIS_URL point to different stores/);
  });

  it('flags beat the environment, which beats the config file', async () => {
    writeFileSync(join(cwd, 'taskline.config.json'), JSON.stringify({ backend: 'redis://file:6379', prefix: 'file', maxRetries: 1, port: 4000 }));
    const fileOnly = await loadSettings({ cwd, env: {} });
    expect(fileOnly).toMatchObject({ backend: 'redis://file:6379', backendFrom: 'taskline.config.json', prefix: 'file', maxRetries: 1, port: 4000 });
    expect(fileOnly.configFile).toBe(join(cwd, 'taskline.config.json'));

    const envOverFile = await loadSettings({ cwd, env: { TASKLINE_BACKEND: 'sqlite:/tmp/e.db', MAX_RETRIES: '2' } });
    expect(envOverFile).toMatchObject({ backend: 'sqlite:/tmp/e.db', backendFrom: 'TASKLINE_BACKEND', maxRetries: 2, port: 4000 });

    const flagOverAll = await loadSettings({ cwd, env: { TASKLINE_BACKEND: 'sqlite:/tmp/e.db', TASKLINE_PREFIX: 'env' }, flags: { backend: 'redis://flag:6379', prefix: 'flag' } });
    expect(flagOverAll).toMatchObject({ backend: 'redis://flag:6379', backendFrom: '--backend', prefix: 'flag' });
  });

  it('an .mjs config file and an explicit --config path', async () => {
    writeFileSync(join(cwd, 'other.mjs'), 'export default { defaultQueue: "mjs", lockTtl: "2m" };');
    expect(await loadSettings({ cwd, env: {}, flags: { config: 'other.mjs' } })).toMatchObject({ defaultQueue: 'mjs', lockTtlMs: 120_000 });
    expect(await loadSettings({ cwd, env: { TASKLINE_CONFIG: 'other.mjs' } })).toMatchObject({ defaultQueue: 'mjs' });
  });

  it('invalid settings fail with one line naming the setting and the accepted form', async () => {
    const cases: [NodeJS.ProcessEnv, RegExp][] = [
      [{ MAX_RETRIES: '-1' }, /^MAX_RETRIES="-1" is not accepted: a whole number from 0 to 1000$/],
      [{ MAX_RETRIES: '2.5' }, /^MAX_RETRIES="2.5" is not accepted/],
      [{ PORT: '0' }, /^PORT="0" is not accepted: a whole number from 1 to 65535$/],
      [{ METRICS_PORT: 'http' }, /^METRICS_PORT="http" is not accepted/],
      [{ LOCK_TTL: '10' }, /^LOCK_TTL="10" is not accepted: a duration such as 500ms, 30s, 5m, 1h, 2d, or a whole number of ms \(at least 100 ms\)$/],
      [{ SCHEDULER_LEASE: '100ms' }, /^SCHEDULER_LEASE="100ms" is not accepted: a duration from 300ms to 10m, such as 3s, or a whole number of ms$/],
      [{ SCHEDULER_TAKEOVER_DELAY: '2m' }, /^SCHEDULER_TAKEOVER_DELAY="2m" is not accepted: a duration from 0ms to 1m, such as 3s, or a whole number of ms$/],
      [{ DEFAULT_QUEUE: '-x' }, /^DEFAULT_QUEUE="-x" is not accepted: a queue name/],
      [{ TASKLINE_BACKEND: 'mysql://db' }, /^TASKLINE_BACKEND="mysql:\/\/db" is not accepted: redis:\/\/host:port\[\/db\], rediss:\/\/host:port\[\/db\], redis\+sentinel:\/\/host:port\[,host:port…\]\/<master name>\[\/db\], redis\+cluster:\/\/host:port\[,host:port…\] \(each may add \?durability=replicated\) or sqlite:<path>$/],
      [{ TASKLINE_BACKEND: 'sqlite:' }, /^TASKLINE_BACKEND="sqlite:" is not accepted/],
      [{ RESULT_BACKEND: 'redis://' }, /^RESULT_BACKEND="redis:\/\/" is not accepted/],
      [{ TASKLINE_API_TOKEN: 'has space' }, /^TASKLINE_API_TOKEN="…" is not accepted: a non-empty string without spaces$/],
    ];
    for (const [env, expected] of cases) {
      const { message, source } = await failure(loadSettings({ cwd, env }));
      expect(message).toMatch(expected);
      expect(source).toBe('env');
    }
    const flag = await failure(loadSettings({ cwd, env: {}, flags: { backend: 'redis:/x' } }));
    expect(flag).toEqual({ message: expect.stringMatching(/^--backend="redis:\/x" is not accepted/), source: 'flag' });
  });

  it('config file problems name the file', async () => {
    writeFileSync(join(cwd, 'taskline.config.json'), JSON.stringify({ port: 'eighty' }));
    expect((await failure(loadSettings({ cwd, env: {} }))).message).toBe('taskline.config.json: port="eighty" is not accepted: a whole number from 1 to 65535');
    writeFileSync(join(cwd, 'taskline.config.json'), '[1]');
    expect((await failure(loadSettings({ cwd, env: {} }))).message).toMatch(/^taskline\.config\.json must hold an object of settings/);
    writeFileSync(join(cwd, 'taskline.config.mjs'), 'export default {};');
    expect((await failure(loadSettings({ cwd, env: {} }))).message).toBe('found taskline.config.json and taskline.config.mjs: keep one config file');
    rmSync(join(cwd, 'taskline.config.json'));
    writeFileSync(join(cwd, 'taskline.config.mjs'), 'throw new Error("kaboom");');
    // The module's file, line and column, then what it threw.
    expect((await failure(loadSettings({ cwd, env: {} }))).message).toMatch(/^taskline.config.mjs failed to load: \/.*\/taskline.config.mjs:1:7: Error: kaboom$/);
  });

  it('parses durations', () => {
    expect(parseDuration('x', '1500', 'env')).toBe(1500);
    expect(parseDuration('x', '1.5s', 'env')).toBe(1500);
    expect(parseDuration('x', '5m', 'env')).toBe(300_000);
    expect(parseDuration('x', '2h', 'env')).toBe(7_200_000);
    expect(parseDuration('x', '1d', 'env')).toBe(86_400_000);
    expect(parseDuration('x', 250, 'file')).toBe(250);
    expect(() => parseDuration('x', '1.5', 'env')).toThrow(/x="1.5" is not accepted/);
    expect(() => parseDuration('x', '-1s', 'env')).toThrow(/is not accepted/);
  });
});
