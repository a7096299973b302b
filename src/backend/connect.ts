import { TasklineError } from '../core/errors.js';
import type { Backend } from './contract.js';
import { RedisBackend, type RedisBackendOptions } from './redis/redis-backend.js';
import { isRedisUrl } from './redis/target.js';

export interface ConnectOptions {
  /** Redis: key prefix. Default `tl`. */
  prefix?: string;
  /** Redis: ms before a command fails as unavailable. Default 5000. */
  commandTimeout?: number;
  /** Test only: ms added to the store clock. Default 0. */
  clockOffsetMs?: number;
}

/** The embedded default store. */
export const DEFAULT_BACKEND_URL = 'sqlite:./taskline.db';

const ACCEPTED = 'redis://host:port[/db], rediss://…, redis+sentinel://host:port,…/<master name>, redis+cluster://host:port,…, or sqlite:<path>';

export { isRedisUrl };

/**
 * Opens a backend from a URL: `redis://…`/`rediss://…`, `redis+sentinel://…`, `redis+cluster://…` (redis/target.ts)
 * or `sqlite:<path>`. Without a URL the
 * environment decides (TASKLINE_BACKEND, REDIS_URL, BROKER_URL, RESULT_BACKEND), else the
 * embedded default `sqlite:./taskline.db`.
 */
export async function connect(url?: string, options: ConnectOptions = {}): Promise<Backend> {
  const target = url ?? resolveBackendUrl(process.env);
  if (typeof target !== 'string' || target.length === 0) {
    throw new TasklineError('TL_INVALID_CONFIG', `backend URL must be a non-empty string: ${ACCEPTED}`);
  }
  if (isRedisUrl(target)) {
    const redisOptions: RedisBackendOptions = { prefix: options.prefix, commandTimeout: options.commandTimeout, clockOffsetMs: options.clockOffsetMs };
    return RedisBackend.connect(target, redisOptions);
  }
  if (target.startsWith('sqlite:')) {
    const { SqliteBackend } = await import('./sqlite/sqlite-backend.js');
    return SqliteBackend.open(target.slice('sqlite:'.length), { clockOffsetMs: options.clockOffsetMs });
  }
  throw new TasklineError('TL_INVALID_CONFIG', `unsupported backend URL ${JSON.stringify(target)}: use ${ACCEPTED}`);
}

/**
 * The backend URL from the environment. REDIS_URL, BROKER_URL and RESULT_BACKEND
 * each select Redis; one store holds queues and results, so if two differ that is an error.
 */
export function resolveBackendUrl(env: NodeJS.ProcessEnv): string {
  const explicit = env.TASKLINE_BACKEND?.trim();
  const redisSettings = (['REDIS_URL', 'BROKER_URL', 'RESULT_BACKEND'] as const)
    .map((name) => [name, env[name]?.trim()] as const)
    .filter((entry): entry is readonly [typeof entry[0], string] => entry[1] !== undefined && entry[1] !== '');
  for (const [name, value] of redisSettings) {
    if (!isRedisUrl(value)) {
      throw new TasklineError('TL_INVALID_CONFIG', `${name}=${JSON.stringify(value)} is not a Redis URL: use redis://host:port[/db], rediss://…, redis+sentinel://host:port,…/<master name> or redis+cluster://host:port,…`);
    }
  }
  const distinct = new Set(redisSettings.map(([, value]) => value));
  if (distinct.size > 1) {
    throw new TasklineError(
      'TL_INVALID_CONFIG',
      `${redisSettings.map(([n]) => n).join(', ')} point to different stores; Taskline keeps queues and results in one store, so set them to the same URL (or set only one)`,
    );
  }
  if (explicit) {
    if (redisSettings.length > 0 && explicit !== redisSettings[0][1]) {
      throw new TasklineError('TL_INVALID_CONFIG', `TASKLINE_BACKEND=${JSON.stringify(explicit)} and ${redisSettings[0][0]} point to different stores; set one of them`);
    }
    return explicit;
  }
  if (redisSettings.length > 0) return redisSettings[0][1];
  return DEFAULT_BACKEND_URL;
}

/** Where a backend URL points, without credentials, for messages: `127.0.0.1:6379`, `./taskline.db`. */
export function storeLocation(url: string): string {
  if (url.startsWith('sqlite:')) return url.slice('sqlite:'.length);
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || '6379'}${parsed.pathname.length > 1 ? parsed.pathname : ''}`;
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//');
  }
}
