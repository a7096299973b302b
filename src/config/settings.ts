/**
 * Configuration. Precedence: command-line flags > environment > config file >
 * defaults. Invalid settings fail at start with one line naming the setting and the accepted form.
 */
import { basename } from 'node:path';
import { DEFAULT_BACKEND_URL, resolveBackendUrl } from '../backend/connect.js';
import { isTasklineError, TasklineError } from '../core/errors.js';
import type { ScheduleInput } from '../core/schedule.js';
import { findConfigFile, readConfigFile } from './config-file.js';
import { parseBackendUrl, parseDuration, parseInteger, parsePort, parseQueue, parseToken, type SettingSource } from './values.js';

export interface Settings {
  /** The store: `redis://…`, `rediss://…` or `sqlite:<path>`. Default `sqlite:./taskline.db`. */
  backend: string;
  /** Which setting chose the backend (`--backend`, `REDIS_URL`, `taskline.config.json`, `default` …). */
  backendFrom: string;
  /** Redis key prefix (`--prefix`, TASKLINE_PREFIX, `prefix`). Default: the backend's (`tl`). */
  prefix: string | undefined;
  /** Retries after the first attempt for tasks enqueued here (MAX_RETRIES). Default 3. */
  maxRetries: number;
  /** Queue of tasks enqueued without one (DEFAULT_QUEUE). Default `default`. */
  defaultQueue: string;
  /** Time-to-live of distributed locks, ms (LOCK_TTL). Default 30 s. */
  lockTtlMs: number;
  /** The scheduler's leader lease, ms (SCHEDULER_LEASE); instances check in every third of it. Default 3 s. */
  schedulerLeaseMs: number;
  /** How long a fire may be overdue before a standby scheduler fires it itself, ms (SCHEDULER_TAKEOVER_DELAY). Default 500 ms. */
  takeoverDelayMs: number;
  /** Port of a worker's Prometheus endpoint (METRICS_PORT). Default 9090. */
  metricsPort: number;
  /** Port of the task center's HTTP API (PORT). Default 8080. */
  port: number;
  /** Admin bearer token of the HTTP API (TASKLINE_API_TOKEN). Default: none. */
  apiToken: string | undefined;
  /** Read-only bearer token of the HTTP API (TASKLINE_READ_TOKEN). Default: none. */
  readToken: string | undefined;
  /** The config file read, or null. */
  configFile: string | null;
  /**
   * The config file's `schedules: [...]`, reconciled as config-owned schedules by the processes
   * that run a scheduler (`dev`, `server`), which validate each one. Default: none.
   */
  schedules: ScheduleInput[];
}

/** Settings given on the command line. */
export interface SettingFlags {
  backend?: string;
  prefix?: string;
  config?: string;
}

export interface LoadSettingsInput {
  flags?: SettingFlags;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

interface SettingSpec<T> {
  env: string;
  file: string;
  parse: (setting: string, value: unknown, source: SettingSource) => T;
}

const SPECS = {
  maxRetries: { env: 'MAX_RETRIES', file: 'maxRetries', parse: (s, v, src) => parseInteger(s, v, src, { min: 0, max: 1000 }) },
  defaultQueue: { env: 'DEFAULT_QUEUE', file: 'defaultQueue', parse: parseQueue },
  lockTtlMs: { env: 'LOCK_TTL', file: 'lockTtl', parse: (s, v, src) => parseDuration(s, v, src, { min: 100 }) },
  schedulerLeaseMs: { env: 'SCHEDULER_LEASE', file: 'schedulerLease', parse: (s, v, src) => parseDuration(s, v, src, { min: 300, max: 600_000 }) },
  takeoverDelayMs: { env: 'SCHEDULER_TAKEOVER_DELAY', file: 'schedulerTakeoverDelay', parse: (s, v, src) => parseDuration(s, v, src, { min: 0, max: 60_000 }) },
  metricsPort: { env: 'METRICS_PORT', file: 'metricsPort', parse: parsePort },
  port: { env: 'PORT', file: 'port', parse: parsePort },
  apiToken: { env: 'TASKLINE_API_TOKEN', file: 'apiToken', parse: parseToken },
  readToken: { env: 'TASKLINE_READ_TOKEN', file: 'readToken', parse: parseToken },
  prefix: { env: 'TASKLINE_PREFIX', file: 'prefix', parse: parseToken },
} satisfies Record<string, SettingSpec<unknown>>;

const DEFAULTS = { maxRetries: 3, defaultQueue: 'default', lockTtlMs: 30_000, schedulerLeaseMs: 3_000, takeoverDelayMs: 500, metricsPort: 9090, port: 8080 };

/** Keys a config file may hold. */
export const FILE_KEYS = ['backend', ...Object.values(SPECS).map((spec) => spec.file), 'schedules'];

const BACKEND_ENV = ['TASKLINE_BACKEND', 'REDIS_URL', 'BROKER_URL', 'RESULT_BACKEND'] as const;

function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

export async function loadSettings(input: LoadSettingsInput = {}): Promise<Settings> {
  const flags = input.flags ?? {};
  const env = input.env ?? process.env;
  const cwd = input.cwd ?? process.cwd();

  const configPath = findConfigFile(cwd, flags.config ?? envValue(env, 'TASKLINE_CONFIG'));
  const file = configPath === null ? null : await readConfigFile(configPath);
  const fileName = configPath === null ? '' : basename(configPath);
  if (file) {
    for (const key of Object.keys(file.content)) {
      if (!FILE_KEYS.includes(key)) {
        throw new TasklineError('TL_INVALID_CONFIG', `${fileName}: unknown setting ${JSON.stringify(key)}; accepted: ${FILE_KEYS.join(', ')}`, {
          details: { setting: key, source: 'file' },
        });
      }
    }
  }

  const pick = <T>(spec: SettingSpec<T>, flag?: { name: string; value: string | undefined }): T | undefined => {
    if (flag?.value !== undefined) return spec.parse(flag.name, flag.value, 'flag');
    const fromEnv = envValue(env, spec.env);
    if (fromEnv !== undefined) return spec.parse(spec.env, fromEnv, 'env');
    if (file && file.content[spec.file] !== undefined) return spec.parse(`${fileName}: ${spec.file}`, file.content[spec.file], 'file');
    return undefined;
  };

  const { backend, backendFrom } = resolveBackend(flags, env, file?.content.backend, fileName);
  return {
    backend,
    backendFrom,
    prefix: pick(SPECS.prefix, { name: '--prefix', value: flags.prefix }),
    maxRetries: pick(SPECS.maxRetries) ?? DEFAULTS.maxRetries,
    defaultQueue: pick(SPECS.defaultQueue) ?? DEFAULTS.defaultQueue,
    lockTtlMs: pick(SPECS.lockTtlMs) ?? DEFAULTS.lockTtlMs,
    schedulerLeaseMs: pick(SPECS.schedulerLeaseMs) ?? DEFAULTS.schedulerLeaseMs,
    takeoverDelayMs: pick(SPECS.takeoverDelayMs) ?? DEFAULTS.takeoverDelayMs,
    metricsPort: pick(SPECS.metricsPort) ?? DEFAULTS.metricsPort,
    port: pick(SPECS.port) ?? DEFAULTS.port,
    apiToken: pick(SPECS.apiToken),
    readToken: pick(SPECS.readToken),
    configFile: configPath,
    schedules: fileSchedules(file?.content.schedules, fileName),
  };
}

/** The shape only (a list of objects); each schedule is validated where it is reconciled. */
function fileSchedules(value: unknown, fileName: string): ScheduleInput[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'object' || item === null || Array.isArray(item))) {
    throw new TasklineError('TL_INVALID_CONFIG', `${fileName}: schedules must be a list of schedules [{ "id", "cron", "timezone"?, "task": { "type", … }, … }]`, {
      details: { setting: 'schedules', source: 'file' },
    });
  }
  return value as ScheduleInput[];
}

function resolveBackend(flags: SettingFlags, env: NodeJS.ProcessEnv, fromFile: unknown, fileName: string): { backend: string; backendFrom: string } {
  if (flags.backend !== undefined) return { backend: parseBackendUrl('--backend', flags.backend, 'flag'), backendFrom: '--backend' };
  const named = BACKEND_ENV.filter((name) => envValue(env, name) !== undefined);
  if (named.length > 0) {
    // Each env URL is checked on its own first, so the error names the bad one.
    for (const name of named) parseBackendUrl(name, envValue(env, name), 'env');
    let backend: string;
    try {
      backend = resolveBackendUrl(env);
    } catch (error) {
      if (isTasklineError(error, 'TL_INVALID_CONFIG')) {
        throw new TasklineError('TL_INVALID_CONFIG', error.message, { cause: error, details: { setting: named.join(', '), source: 'env' } });
      }
      throw error;
    }
    return { backend, backendFrom: named.join(', ') };
  }
  if (fromFile !== undefined) return { backend: parseBackendUrl(`${fileName}: backend`, fromFile, 'file'), backendFrom: fileName };
  return { backend: DEFAULT_BACKEND_URL, backendFrom: 'default' };
}

/** Where a config error came from (`flag` errors are usage errors). */
export function configErrorSource(error: unknown): SettingSource | null {
  if (!isTasklineError(error, 'TL_INVALID_CONFIG')) return null;
  const details = error.details as { source?: SettingSource } | undefined;
  return details?.source ?? null;
}

