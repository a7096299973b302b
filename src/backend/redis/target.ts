/**
 * Where a Redis backend connects, from its URL:
 * - `redis://[user:password@]host:port[/db]` (`rediss://` with TLS): one server;
 * - `redis+sentinel://[user:password@]host:port,host:port…/<master name>[/db]`: the master that
 *   the Sentinels name, followed through their failovers (ioredis asks them again on a
 *   reconnect). The user and password are the data nodes'; `sentinelPassword` a Sentinel's.
 * - `redis+cluster://[user:password@]host:port,host:port…`: a Redis Cluster, found from any of the
 *   nodes given (ioredis's Cluster client follows its slots as they move and fail over). A
 *   queue's keys share one hash tag, so each queue lives on one master and queues spread over
 *   them; a cluster has database 0 only.
 * Each takes `?durability=replicated`: a write that acknowledges work (an enqueue, a completion,
 * a fire) answers only once a replica confirms it has it (Redis WAIT), so a failover to that
 * replica loses nothing acknowledged; `&replicas=N` (default 1) and `&waitTimeout=ms` (default
 * 5000) tune it.
 */
import type { RedisOptions } from 'ioredis';
import { TasklineError } from '../../core/errors.js';

export type Durability = 'acknowledged' | 'replicated';

/** A Redis Cluster: the nodes to start from, and the data nodes' credentials. */
export interface ClusterNodes {
  nodes: { host: string; port: number }[];
  username?: string;
  password?: string;
}

export interface RedisTarget {
  /** What ioredis is given: the URL of one server, or the options of a Sentinel-watched master. */
  connectTo: string | RedisOptions;
  /** Set for `redis+cluster://`: then `connectTo` is unused. */
  cluster?: ClusterNodes;
  /** The URL without credentials, for messages. */
  shown: string;
  db: number;
  durability: Durability;
  /** With `replicated`: how many replicas must confirm, and how long a write waits for them. */
  replicas: number;
  waitTimeoutMs: number;
}

export const SENTINEL_FORM = 'redis+sentinel://[user:password@]host:port[,host:port…]/<master name>[/db][?durability=replicated]';
export const CLUSTER_FORM = 'redis+cluster://[user:password@]host:port[,host:port…][?durability=replicated]';
const OPTIONS_FORM = 'durability=acknowledged|replicated, replicas=<1–100>, waitTimeout=<ms, 1–60000>, sentinelPassword=<text>';

function invalid(shown: string, what: string): TasklineError {
  return new TasklineError('TL_INVALID_CONFIG', `${shown}: ${what}`);
}

/** Whether a URL names a Redis store (one server, a master watched by Sentinels, or a Cluster). */
export function isRedisUrl(url: string): boolean {
  return ['redis://', 'rediss://', 'redis+sentinel://', 'redis+cluster://'].some((scheme) => url.startsWith(scheme));
}

/** A URL with its password replaced by ***. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^@/]*)@/, '//***@');
}

/** The target of a `redis://`, `rediss://`, `redis+sentinel://` or `redis+cluster://` URL; TL_INVALID_CONFIG names what is wrong. */
export function redisTarget(url: string): RedisTarget {
  const shown = redactUrl(url);
  const [base, query = ''] = url.split(/\?(.*)/s, 2);
  const params = new URLSearchParams(query);
  const durabilityText = params.get('durability') ?? 'acknowledged';
  if (durabilityText !== 'acknowledged' && durabilityText !== 'replicated') {
    throw invalid(shown, `durability must be acknowledged or replicated, got ${JSON.stringify(durabilityText.slice(0, 40))}`);
  }
  const replicas = whole(shown, params, 'replicas', 1, 100, 1);
  const waitTimeoutMs = whole(shown, params, 'waitTimeout', 1, 60_000, 5000);
  for (const key of params.keys()) {
    if (!['durability', 'replicas', 'waitTimeout', 'sentinelPassword'].includes(key)) {
      throw invalid(shown, `unknown option ${JSON.stringify(key.slice(0, 40))}; accepted: ${OPTIONS_FORM}`);
    }
  }
  const durability: Durability = durabilityText === 'replicated' ? 'replicated' : 'acknowledged';
  const common = { shown, durability, replicas, waitTimeoutMs };
  const cluster = base.startsWith('redis+cluster://');
  if (!base.startsWith('redis+sentinel://') && !cluster) {
    if (params.has('sentinelPassword')) throw invalid(shown, 'sentinelPassword goes with redis+sentinel:// only');
    const db = databaseOf(shown, base);
    return { ...common, connectTo: base, db };
  }
  if (cluster && params.has('sentinelPassword')) throw invalid(shown, 'sentinelPassword goes with redis+sentinel:// only');
  const form = cluster ? CLUSTER_FORM : SENTINEL_FORM;
  const rest = base.slice(cluster ? 'redis+cluster://'.length : 'redis+sentinel://'.length);
  const at = rest.lastIndexOf('@', rest.indexOf('/') < 0 ? rest.length : rest.indexOf('/'));
  const { username, password } = credentialsOf(at >= 0 ? rest.slice(0, at) : '');
  const [hostList = '', name = '', dbText, ...extra] = rest.slice(at + 1).split('/');
  const hosts = hostList.split(',').map((entry) => {
    const match = /^([^:,\s]+):(\d{1,5})$/.exec(entry);
    if (!match || Number(match[2]) < 1 || Number(match[2]) > 65_535) throw invalid(shown, `each ${cluster ? 'node' : 'Sentinel'} is host:port, got ${JSON.stringify(entry.slice(0, 60))}: ${form}`);
    return { host: match[1], port: Number(match[2]) };
  });
  if (cluster) {
    if (name !== '' || dbText !== undefined) throw invalid(shown, `a Redis Cluster has database 0 only, and takes no path after its nodes: ${CLUSTER_FORM}`);
    return { ...common, connectTo: {}, cluster: { nodes: hosts, username, password }, db: 0 };
  }
  if (extra.length > 0 || name === '') throw invalid(shown, `give the master's name after the Sentinels: ${SENTINEL_FORM}`);
  if (dbText !== undefined && !/^\d{1,5}$/.test(dbText)) throw invalid(shown, `the database must be a whole number, got ${JSON.stringify(dbText.slice(0, 40))}`);
  const db = dbText === undefined ? 0 : Number(dbText);
  const options: RedisOptions = { sentinels: hosts, name: decodeURIComponent(name), db };
  if (username !== undefined) options.username = username;
  if (password !== undefined) options.password = password;
  const sentinelPassword = params.get('sentinelPassword');
  if (sentinelPassword !== null) options.sentinelPassword = sentinelPassword;
  return { ...common, connectTo: options, db };
}

/** `user:password` of a URL, decoded; an empty part is left out. */
function credentialsOf(credentials: string): { username?: string; password?: string } {
  if (credentials === '') return {};
  const colon = credentials.indexOf(':');
  const user = decodeURIComponent(colon < 0 ? credentials : credentials.slice(0, colon));
  const password = colon < 0 ? '' : decodeURIComponent(credentials.slice(colon + 1));
  return { ...(user !== '' && { username: user }), ...(password !== '' && { password }) };
}

function whole(shown: string, params: URLSearchParams, key: string, min: number, max: number, fallback: number): number {
  const text = params.get(key);
  if (text === null) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) throw invalid(shown, `${key} must be a whole number from ${min} to ${max}, got ${JSON.stringify(text.slice(0, 40))}`);
  return Number(text);
}

/** The database number of a Redis URL (`redis://host:6379/2` → 2; none → 0). */
function databaseOf(shown: string, url: string): number {
  let path = '';
  try {
    path = new URL(url).pathname;
  } catch {
    return 0; // ioredis reports an unparsable URL itself
  }
  const match = /^\/?(\d*)$/.exec(path);
  if (!match) throw invalid(shown, `the database must be a whole number (redis://host:port/2), got ${JSON.stringify(path.slice(1, 40))}`);
  return match[1] === '' ? 0 : Number(match[1]);
}
