/**
 * The context every Redis module works through: the main connection, the key names, the
 * script runner, the store's clock, and the error mapping. Connections for blocking waits and
 * pub/sub are opened from here too (wait.ts, events.ts), with the same settings.
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { TasklineError } from '../../core/errors.js';
import { RedisKeys } from './keys.js';
import { ScriptRunner, scriptKeyNames, type ScriptCall, type ScriptName } from './scripts.js';
import { redactUrl, redisTarget, type RedisTarget } from './target.js';

/**
 * The scripts whose writes acknowledge work to a caller — an enqueue, a completion or failure, a
 * fire, an operator's or a workflow's change: with durability 'replicated' each answers only once
 * a replica has it (WAIT). A claim's lease is not among them: one lost to a failover only runs
 * the task again.
 */
const ACKNOWLEDGED_WRITES: ReadonlySet<ScriptName> = new Set<ScriptName>([
  'enqueue', 'ack', 'ack-claim', 'fire', 'operate', 'operate-all', 'workflow-create', 'workflow-cancel', 'workflow-retry', 'workflow-settle', 'workflow-apply',
  'schedule-save', 'schedule-advance',
]);

/** A connection to one server (or a Sentinel-watched master), or a Cluster client over all of its masters. */
export type RedisClient = Redis | Cluster;

export interface RedisBackendOptions {
  /** Key prefix, so that several deployments (or tests) share one Redis. Default `tl`. */
  prefix?: string;
  /** ms after which a store command fails with TL_STORE_UNAVAILABLE. Default 5000. */
  commandTimeout?: number;
  /** Test only: ms added to the store's clock, to simulate a skewed clock. Default 0. */
  clockOffsetMs?: number;
  /** Extra ioredis options. */
  redis?: RedisOptions;
}

export class RedisConnection {
  readonly keys: RedisKeys;
  readonly redis: RedisClient;
  readonly scripts = new ScriptRunner();
  /** The clock offset, as the scripts take it (ARGV[1]). */
  readonly offset: string;
  /** Queues known to be in the queue registry (the `queues` set), so each is added once. */
  readonly registered = new Set<string>();
  private closed = false;
  /** The last error a connection reported by itself (not on a command): why connecting fails. */
  private lastError: string | null = null;

  private constructor(private readonly target: RedisTarget, private readonly options: RedisBackendOptions) {
    this.keys = new RedisKeys(options.prefix ?? 'tl');
    this.offset = String(options.clockOffsetMs ?? 0);
    // With durability 'replicated' a WAIT may take its own timeout on top of a command's.
    this.redis = this.open('main', { commandTimeout: this.deadlineMs });
  }

  /** Connects and checks that Redis answers; throws TL_STORE_UNAVAILABLE when it does not. */
  static async connect(url: string, options: RedisBackendOptions): Promise<RedisConnection> {
    const target = redisTarget(url);
    if (target.cluster && /[{}]/.test(options.prefix ?? '')) {
      // Redis Cluster hashes the text inside a key's first {…}: a brace in the prefix would put
      // every queue in one slot, or split a queue's keys over several.
      throw new TasklineError('TL_INVALID_CONFIG', `on a Redis Cluster the key prefix must not hold { or }, got ${JSON.stringify(options.prefix)}: each queue's keys are tagged {<prefix>:<queue>}`);
    }
    const db = target.db;
    const connection = new RedisConnection(target, options);
    try {
      // A Cluster client holds commands while it cannot reach a node, without a timeout of their own.
      await withDeadline(connection.redis.ping(), connection.deadlineMs);
      await withDeadline(connection.scripts.ensureLoaded(connection.redis), connection.deadlineMs);
    } catch (error) {
      connection.redis.disconnect();
      // A Cluster or Sentinel client retries quietly until the deadline: its last error says why.
      const seen = connection.lastError !== null && connection.lastError !== (error as Error).message ? ` (last error: ${connection.lastError})` : '';
      throw new TasklineError('TL_STORE_UNAVAILABLE', `cannot reach Redis at ${redactUrl(url)}: ${(error as Error).message}${seen}`, { cause: error });
    }
    // ioredis selects the URL's database on connecting, and when the server refuses (a number
    // past its `databases` setting) it goes on, silently, in database 0: ask once, plainly.
    if (db > 0) {
      try {
        await connection.redis.select(db);
      } catch (error) {
        connection.redis.disconnect();
        throw new TasklineError('TL_INVALID_CONFIG', `${redactUrl(url)}: this Redis server has no database ${db} (${(error as Error).message}); use a number below its "databases" setting (16 by default)`, { cause: error });
      }
    }
    return connection;
  }

  /**
   * The event channel as queue scripts take it (ARGV 2). On a Cluster it carries a leading
   * newline (no key prefix holds whitespace):
   * publish whether or not a subscriber is seen, for PUBSUB NUMSUB counts only the subscribers of
   * the node the script runs on, while a PUBLISH reaches those of every node.
   */
  get channelArgument(): string {
    return this.isCluster ? `\n${this.keys.events}` : this.keys.events;
  }

  /** Whether the store is a Redis Cluster (`redis+cluster://`). */
  get isCluster(): boolean {
    return this.target.cluster !== undefined;
  }

  /**
   * A new connection to the same server (the Sentinels' master), or a new Cluster client; `role`
   * names it in CLIENT LIST.
   */
  open(role: string, extra: RedisOptions = {}): RedisClient {
    const target = this.target.connectTo;
    const options: RedisOptions = {
      lazyConnect: false,
      connectionName: `taskline:${role}`,
      maxRetriesPerRequest: role === 'main' ? 2 : null,
      // No auto-pipelining: Taskline batches its hot calls itself (one claim or ack script call
      // per batch), and ioredis's per-tick Pipeline objects cost more than the writes they save
      // (measured: 50k drain 23.5k → 29.5k tasks/s, enqueue one-by-one 44k → 51k/s).
      enableAutoPipelining: false,
      retryStrategy: (times) => Math.min(50 * times, 1000),
      ...this.options.redis,
      ...extra,
    };
    const cluster = this.target.cluster;
    const connection = cluster
      ? new Cluster(cluster.nodes, {
          // A queue's keys live on its slot's master; reads go there too (a replica may lag).
          scaleReads: 'master',
          enableAutoPipelining: false,
          enableOfflineQueue: true,
          // After a master fails, the cluster needs its node timeout and an election before the
          // slots answer again: commands wait for the new slot table instead of failing at once.
          retryDelayOnFailover: 200,
          retryDelayOnClusterDown: 300,
          retryDelayOnTryAgain: 100,
          clusterRetryStrategy: (times) => Math.min(100 * times, 1000),
          slotsRefreshTimeout: 2000,
          redisOptions: { ...options, ...(cluster.username !== undefined && { username: cluster.username }), ...(cluster.password !== undefined && { password: cluster.password }) },
        })
      : typeof target === 'string'
        ? new Redis(target, options)
        : new Redis({ ...target, ...options });
    // Errors surface on the commands; the connection reconnects by itself.
    connection.on('error', (error: Error) => (this.lastError ??= error.message.slice(0, 300)));
    // A Cluster client's own error says only that it could not read the slots; a node's says why.
    connection.on('node error', (error: Error, node: string) => (this.lastError = `${node}: ${error.message}`.slice(0, 300)));
    return connection;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * How long a call may take in all: the command timeout, plus the replicas' wait with
   * durability 'replicated'.
   */
  get deadlineMs(): number {
    return (this.options.commandTimeout ?? 5000) + (this.target.durability === 'replicated' ? this.target.waitTimeoutMs : 0);
  }

  /**
   * Runs a store operation, mapping its failure to TL_STORE_UNAVAILABLE or TL_STORE_ERROR. On a
   * Cluster it is bounded by `deadlineMs`: a command waiting for a node the client cannot reach
   * has no timeout of its own there.
   */
  async call<T>(operation: () => Promise<T>): Promise<T> {
    if (this.closed) throw new TasklineError('TL_CLOSED', 'the Redis backend is closed');
    try {
      return this.isCluster ? await withDeadline(operation(), this.deadlineMs) : await operation();
    } catch (error) {
      throw storeError(error);
    }
  }

  /** A queue script's call: the keys it takes of `queue`, then `extraKeys`; ARGV 1–3, then `args`. */
  scriptCall(name: ScriptCall['name'], queue: string, args: (string | number)[], extraKeys: string[] = []): ScriptCall {
    const queueKeys = this.keys.subset(queue, scriptKeyNames(name));
    const keys = extraKeys.length > 0 ? [...queueKeys, ...extraKeys] : queueKeys;
    return { name, keys, args: [this.offset, this.channelArgument, queue, ...args] };
  }

  runScript(name: ScriptCall['name'], queue: string, args: (string | number)[], extraKeys: string[] = []): Promise<unknown> {
    const call = this.scriptCall(name, queue, args, extraKeys);
    if (this.waitsFor([call])) return this.runReplicated([call]).then(([result]) => result);
    return this.call(() => this.scripts.run(this.redis, call.name, call.keys, call.args));
  }

  /** A script on other keys than a queue's (schedules, scheduler instances, locks): ARGV 1 is the clock offset. */
  runPlainScript(name: ScriptCall['name'], keys: string[], args: (string | number)[]): Promise<unknown> {
    const call = { name, keys, args: [this.offset, ...args] };
    if (this.waitsFor([call])) return this.runReplicated([call]).then(([result]) => result);
    return this.call(() => this.scripts.run(this.redis, name, keys, call.args));
  }

  /** Several script calls in one round trip (ScriptRunner.runMany). */
  runScripts(calls: ScriptCall[]): Promise<unknown[]> {
    if (this.waitsFor(calls)) return this.runReplicated(calls);
    return this.call(() => this.scripts.runMany(this.redis, calls));
  }

  /** The durability the URL asked for ('replicated': acknowledged writes wait for a replica). */
  get durability(): RedisTarget['durability'] {
    return this.target.durability;
  }

  /** Whether these calls answer only once replicas have their writes (durability 'replicated'). */
  private waitsFor(calls: readonly Pick<ScriptCall, 'name'>[]): boolean {
    return this.target.durability === 'replicated' && calls.some((call) => ACKNOWLEDGED_WRITES.has(call.name));
  }

  /**
   * With durability 'replicated': runs the calls with a WAIT after them on the same connection
   * (one pipeline; on a Cluster one per hash tag, which goes to that slot's master), so the WAIT
   * counts exactly these writes even when a failover moves the slot meanwhile; answers only once
   * `replicas` replicas have them, else fails with TL_STORE_UNAVAILABLE (the write may be on the
   * master alone: a retry with the same task ids is refused as a conflict, not stored twice).
   */
  private async runReplicated(calls: ScriptCall[]): Promise<unknown[]> {
    const { replicas, waitTimeoutMs } = this.target;
    const groups = indexesByTag(calls.map((call) => (this.isCluster ? call.keys[0] ?? '' : '')));
    const results: unknown[] = new Array(calls.length);
    await Promise.all(
      [...groups.values()].map(async (indexes) => {
        const { replies, confirmed } = await this.call(() => this.followingSlots(() => this.scripts.runAndWait(this.redis, indexes.map((i) => calls[i]), replicas, waitTimeoutMs)));
        if (confirmed < replicas) throw await this.unconfirmed(confirmed);
        indexes.forEach((at, j) => (results[at] = replies[j]));
      }),
    );
    return results;
  }

  /** TL_STORE_UNAVAILABLE for writes too few replicas confirmed, saying how many the master has (one server). */
  private async unconfirmed(confirmed: number): Promise<TasklineError> {
    const { replicas, waitTimeoutMs } = this.target;
    let has = '';
    if (!(this.redis instanceof Cluster)) {
      const count = /connected_slaves:(\d+)/.exec(await this.redis.info('replication').catch(() => ''))?.[1];
      if (count !== undefined) has = `; this master has ${count} connected replica(s)`;
    }
    return new TasklineError(
      'TL_STORE_UNAVAILABLE',
      `Redis: ${confirmed} of ${replicas} replica(s) confirmed the write within ${waitTimeoutMs} ms (durability=replicated${has}): it is on the master, not confirmed on a replica, and may be lost if the master fails`,
    );
  }

  /**
   * Runs a pipeline on a Cluster again while its slot answers that it moved or is not served yet
   * (MOVED, TRYAGAIN, CLUSTERDOWN: nothing of it ran), after reading the slot table anew: ioredis
   * follows a redirect itself for single commands, but not for a pipeline with a WAIT in it.
   * Bounded by the call's deadline.
   */
  private async followingSlots<T>(run: () => Promise<T>): Promise<T> {
    const cluster = this.redis;
    if (!(cluster instanceof Cluster)) return run();
    const deadline = Date.now() + this.deadlineMs;
    for (;;) {
      try {
        return await run();
      } catch (error) {
        if (!/^(MOVED|TRYAGAIN|CLUSTERDOWN)/.test((error as Error).message) || Date.now() > deadline || this.closed) throw error;
        await new Promise<void>((resolve) => cluster.refreshSlotsCache(() => resolve()));
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  /**
   * Sends commands whose keys may lie in different slots, at once: one pipeline on one server; on a
   * Cluster (which takes a pipeline only within one node's slots) one pipeline per hash tag.
   * Each command is [name, key, ...args]; the replies come back in the order given, each
   * [error, result].
   */
  async pipelined(commands: PipelinedCommand[]): Promise<[Error | null, unknown][]> {
    if (commands.length === 0) return [];
    if (!this.isCluster) {
      const answer = (await this.call(() => this.redis.pipeline(commands).exec())) ?? [];
      return answer.map(([error, value]) => [error ? storeError(error) : null, value]);
    }
    const groups = indexesByTag(commands.map(([, key]) => key));
    const replies: [Error | null, unknown][] = new Array(commands.length);
    await Promise.all(
      [...groups.values()].map(async (indexes) => {
        const answer = (await this.call(() => this.redis.pipeline(indexes.map((i) => commands[i])).exec())) ?? [];
        indexes.forEach((at, j) => {
          const [error, value] = answer[j] ?? [new Error('no reply'), null];
          replies[at] = [error ? storeError(error) : null, value];
        });
      }),
    );
    return replies;
  }

  /** Adds queues to the registry, without waiting for the reply; a failure un-registers for a later try. */
  register(queues: Iterable<string>): void {
    const fresh = [...queues].filter((q) => !this.registered.has(q));
    if (fresh.length === 0) return;
    for (const q of fresh) this.registered.add(q);
    this.redis.sadd(this.keys.queues, ...fresh).catch(() => fresh.forEach((q) => this.registered.delete(q)));
  }

  /** The store's clock (Redis TIME, plus the test offset), in ms. */
  async now(): Promise<number> {
    const [seconds, micros] = await this.call(() => this.redis.time());
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) + Number(this.offset);
  }

  /** Marks the context closed: later calls fail with TL_CLOSED. */
  markClosed(): boolean {
    if (this.closed) return false;
    this.closed = true;
    return true;
  }
}


/** A command for `pipelined`: its name, its one key, then its arguments. */
export type PipelinedCommand = [name: string, key: string, ...args: (string | number)[]];

/** The indexes of `keys`, grouped by their hash tag (each group in order): one slot each. */
function indexesByTag(keys: string[]): Map<string, number[]> {
  const groups = new Map<string, number[]>();
  keys.forEach((key, i) => {
    const tag = hashTag(key);
    const group = groups.get(tag);
    if (group) group.push(i);
    else groups.set(tag, [i]);
  });
  return groups;
}

/** What Redis Cluster hashes of a key: the text inside its first {…} when not empty, else the whole key. */
function hashTag(key: string): string {
  const open = key.indexOf('{');
  if (open < 0) return key;
  const close = key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

/** `promise`, or TL_STORE_UNAVAILABLE once `ms` have passed. */
function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TasklineError('TL_STORE_UNAVAILABLE', `Redis: Command timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

function storeError(error: unknown): TasklineError {
  if (error instanceof TasklineError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (/^MOVED \d+ /.test(message)) {
    return new TasklineError('TL_STORE_ERROR', `Redis: ${message}: this server is a node of a Redis Cluster; connect with redis+cluster://host:port[,host:port…]`, { cause: error });
  }
  const unavailable =
    /Command timed out|Connection is closed|ECONNREFUSED|ECONNRESET|ETIMEDOUT|MaxRetriesPerRequest|Stream isn't writeable|enableOfflineQueue|EPIPE|LOADING/i.test(message);
  return new TasklineError(unavailable ? 'TL_STORE_UNAVAILABLE' : 'TL_STORE_ERROR', `Redis: ${message}`, { cause: error });
}


/**
 * Closes a connection: QUIT where a command of ioredis's own may be in flight — a subscriber
 * re-subscribes by itself after a reconnect, and a disconnect would reject that command with no
 * one to hear it (an unhandled rejection).
 */
export async function quit(connection: RedisClient): Promise<void> {
  if (connection.status === 'ready') await connection.quit().catch(() => connection.disconnect());
  else connection.disconnect();
}
