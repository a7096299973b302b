import { Redis, type RedisOptions } from 'ioredis';
import { TasklineError } from '../../core/errors.js';
import { DEFAULT_BACKOFF } from '../../core/backoff.js';
import { validateQueueName } from '../../core/options.js';
import type { NewTask, TaskRecord, TaskState, TaskLogLine } from '../../core/task.js';
import {
  DEFAULT_RETENTION, KEPT_STATES,
  type Ack, type AckAndClaimResult, type AckResult, type BackendEvent, type BulkState, type ClaimRequest, type ClaimResult,
  type DailyStat, type EnqueueOutcome, type LeaseRef, type MinuteStat, type QueueInfo, type QueueKeep, type RenewResult, type TaskPage,
  type Unsubscribe, type WorkerInfo, type TaskTypeInfo, type SchedulingBackend, type LifecycleEvent, type SubscribeOptions, type FireBatch, type FireRecord, type FireResult, type ScheduleUpdate,
  type SchedulerCheckIn, type SchedulerInstance, type SchedulerList, type ScheduleChanges,
} from '../contract.js';
import type { Schedule, ScheduleDefinition } from '../../core/schedule.js';
import { RedisScheduleStore } from './schedule-store.js';
import { RedisKeys } from './keys.js';
import { ScriptRunner, scriptKeyNames, type ScriptCall } from './scripts.js';
import { EnqueueGroups } from '../enqueue-groups.js';
import { decodeTaskType, encodeTaskType } from '../task-types.js';
import { decodeClaimed, decodeRecord, encodeAttempt, encodeRecordFragment, readableMeta } from './codec.js';
import { decodeCursor, encodeCursor, pageLimit } from '../page-cursor.js';
import {
  checkStorableTasks, countWithin, decodeWorkerInfo, dayString, emptyCounts, FORWARD_LIMIT, MAX_LOG_LINES, MAX_STAT_DAYS, MAX_STAT_MINUTES, operationError, validateQueueKeep,
} from '../shared.js';

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

const BULK_LIMIT = 500;
/** The states whose tasks a queue holds in a sorted set (queued ones are in a list). */
const ZSET_STATES = ['scheduled', 'retrying', 'running', 'completed', 'dead', 'cancelled'] as const;

/** The Redis store: every state transition is one Lua script (lua/). */
export class RedisBackend implements SchedulingBackend {
  readonly kind = 'redis' as const;
  readonly remote = true;
  readonly keys: RedisKeys;
  private readonly redis: Redis;
  private blocking: Redis | null = null;
  private subscriber: Redis | null = null;
  private readonly listeners = new Set<(event: BackendEvent) => void>();
  private readonly lifecycleListeners = new Set<(event: BackendEvent) => void>();
  private readonly cancelListeners = new Set<(event: BackendEvent) => void>();
  private readonly joined = new Map<string, Promise<void>>();
  private subscribing: Promise<void> = Promise.resolve();
  private readonly scripts = new ScriptRunner();
  private readonly registered = new Set<string>();
  private readonly enqueues = new EnqueueGroups((tasks) => this.enqueueNow(tasks));
  private readonly offset: string;
  private closed = false;
  private readonly scheduling: RedisScheduleStore;

  private constructor(private readonly url: string, private readonly options: RedisBackendOptions) {
    this.keys = new RedisKeys(options.prefix ?? 'tl');
    this.offset = String(options.clockOffsetMs ?? 0);
    this.redis = this.createConnection('main', { commandTimeout: options.commandTimeout ?? 5000 });
    this.scheduling = new RedisScheduleStore({
      redis: this.redis,
      scripts: this.scripts,
      keys: this.keys,
      offset: this.offset,
      call: (operation) => this.call(operation),
      queueScript: (name, queue, args, extraKeys) => this.scriptCall(name, queue, args, extraKeys),
      register: (queues) => this.register(queues),
    });
  }

  /** Connects and checks that Redis answers; throws TL_STORE_UNAVAILABLE when it does not. */
  static async connect(url: string, options: RedisBackendOptions = {}): Promise<RedisBackend> {
    const db = databaseOf(url);
    const backend = new RedisBackend(url, options);
    try {
      await backend.redis.ping();
      await backend.scripts.ensureLoaded(backend.redis);
    } catch (error) {
      backend.redis.disconnect();
      throw new TasklineError('TL_STORE_UNAVAILABLE', `cannot reach Redis at ${redactUrl(url)}: ${(error as Error).message}`, { cause: error });
    }
    // ioredis selects the URL's database on connecting, and when the server refuses (a number
    // past its `databases` setting) it goes on, silently, in database 0: ask once, plainly.
    if (db > 0) {
      try {
        await backend.redis.select(db);
      } catch (error) {
        backend.redis.disconnect();
        throw new TasklineError('TL_INVALID_CONFIG', `${redactUrl(url)}: this Redis server has no database ${db} (${(error as Error).message}); use a number below its "databases" setting (16 by default)`, { cause: error });
      }
    }
    return backend;
  }

  private createConnection(role: string, extra: RedisOptions): Redis {
    const connection = new Redis(this.url, {
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
    });
    // Errors surface on the commands; the connection reconnects by itself.
    connection.on('error', () => undefined);
    return connection;
  }

  private async call<T>(operation: () => Promise<T>): Promise<T> {
    if (this.closed) throw new TasklineError('TL_CLOSED', 'the Redis backend is closed');
    try {
      return await operation();
    } catch (error) {
      throw storeError(error);
    }
  }

  private commonArgs(queue: string): string[] {
    return [this.offset, this.keys.events, queue];
  }

  private scriptCall(name: ScriptCall['name'], queue: string, args: (string | number)[], extraKeys: string[] = []): ScriptCall {
    const queueKeys = this.keys.subset(queue, scriptKeyNames(name));
    const keys = extraKeys.length > 0 ? [...queueKeys, ...extraKeys] : queueKeys;
    return { name, keys, args: [...this.commonArgs(queue), ...args] };
  }

  private runScript(name: ScriptCall['name'], queue: string, args: (string | number)[], extraKeys: string[] = []): Promise<unknown> {
    const call = this.scriptCall(name, queue, args, extraKeys);
    return this.call(() => this.scripts.run(this.redis, call.name, call.keys, call.args));
  }

  private register(queues: Iterable<string>): void {
    const fresh = [...queues].filter((q) => !this.registered.has(q));
    if (fresh.length === 0) return;
    for (const q of fresh) this.registered.add(q);
    // Auto-pipelining sends this with the next command; a failure un-registers for a later try.
    this.redis.sadd(this.keys.queues, ...fresh).catch(() => fresh.forEach((q) => this.registered.delete(q)));
  }

  async now(): Promise<number> {
    const [seconds, micros] = await this.call(() => this.redis.time());
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) + Number(this.offset);
  }

  // ── producing ───────────────────────────────────────────────────────────────

  /** Enqueues of a tick go together: one script call per queue (EnqueueGroups). */
  async enqueue(tasks: NewTask[]): Promise<EnqueueOutcome[]> {
    // Before grouping: one caller's bad task must not fail the others of its group.
    checkStorableTasks(tasks);
    return this.enqueues.enqueue(tasks);
  }

  private async enqueueNow(tasks: NewTask[]): Promise<EnqueueOutcome[]> {
    const outcomes: EnqueueOutcome[] = new Array<EnqueueOutcome>(tasks.length);
    // Ids are unique across queues, but a script sees one queue: custom ids are first looked up
    // in the other queues (generated UUIDv7 ids cannot collide).
    const customIds = tasks.filter((t) => t.generatedId !== true);
    const elsewhere = customIds.length > 0 ? await this.idsInOtherQueues(customIds) : new Set<string>();
    // A repeat of an id within the batch is a conflict too, even when it names another queue.
    const seen = new Set<string>();
    const stored: number[] = [];
    tasks.forEach((task, index) => {
      // A generated id (UUIDv7) is new: only given ids can repeat.
      if (task.generatedId === true) stored.push(index);
      else if (elsewhere.has(task.id) || seen.has(task.id)) outcomes[index] = { ok: false, id: task.id, reason: 'id-conflict' };
      else {
        stored.push(index);
        seen.add(task.id);
      }
    });
    if (stored.length === 0) return outcomes;
    // Smaller calls than other scripts take, each sent as soon as it is encoded: Redis stores one
    // while this process encodes the next (bulk enqueue in batches of 1,000: ~70k → ~85k tasks/s in a warm process).
    const chunks = chunksByQueue(tasks, stored, ENQUEUE_CALL);
    this.register(new Set(chunks.map(([queue]) => queue)));
    const sent: Promise<unknown>[] = [];
    const order: number[][] = [];
    for (const [queue, indexes] of chunks) {
      const extraKeys: string[] = [];
      // Plain tasks (queued now, no unique key) need 3 fields each, the others 7 (lua/enqueue.lua).
      const plain = indexes.every((index) => tasks[index].uniqueKey === null && tasks[index].delay === null && tasks[index].runAt === null);
      const args: (string | number)[] = [indexes.length, plain ? 3 : 7];
      for (const index of indexes) {
        const task = tasks[index];
        if (plain) {
          args.push(task.id, encodeRecordFragment(task), task.payload);
          continue;
        }
        let uniqueIndex = 0;
        if (task.uniqueKey !== null) {
          extraKeys.push(this.keys.unique(queue, task.uniqueKey));
          uniqueIndex = scriptKeyNames('enqueue').length + extraKeys.length;
        }
        args.push(
          task.id, encodeRecordFragment(task), task.payload, task.delay ?? -1, task.runAt ?? -1, uniqueIndex, task.uniqueFor ?? 0,
        );
      }
      sent.push(this.runScript('enqueue', queue, args, extraKeys));
      order.push(indexes);
    }
    const replies = (await Promise.all(sent)) as string[][];
    replies.forEach((reply, q) => {
      order[q].forEach((index, i) => {
        const task = tasks[index];
        const status = reply[i];
        if (status === 'queued' || status === 'scheduled') {
          outcomes[index] = { ok: true, info: { id: task.id, type: task.type, queue: task.queue, state: status } };
        } else if (status === 'id') {
          outcomes[index] = { ok: false, id: task.id, reason: 'id-conflict' };
        } else {
          outcomes[index] = { ok: false, id: task.id, reason: 'unique-conflict', holder: status.slice(2) };
        }
      });
    });
    return outcomes;
  }

  /** Custom ids that already exist in a queue other than the task's own. */
  private async idsInOtherQueues(tasks: NewTask[]): Promise<Set<string>> {
    const queues = await this.call(() => this.redis.smembers(this.keys.queues));
    const checks: { id: string }[] = [];
    const pipeline = this.redis.pipeline();
    for (const task of tasks) {
      for (const queue of queues) {
        if (queue === task.queue) continue;
        pipeline.hexists(this.keys.queueKey(queue, 'meta'), task.id);
        checks.push({ id: task.id });
      }
    }
    if (checks.length === 0) return new Set();
    const replies = (await this.call(() => pipeline.exec())) ?? [];
    return new Set(checks.filter((_, i) => replies[i]?.[1] === 1).map((c) => c.id));
  }

  // ── working ─────────────────────────────────────────────────────────────────

  async claim(workerId: string, requests: ClaimRequest[], leaseMs: number): Promise<ClaimResult[]> {
    return (await this.ackAndClaim([], workerId, requests, leaseMs)).claims;
  }

  async ack(acks: Ack[]): Promise<AckResult[]> {
    return (await this.ackAndClaim(acks, '', [], 0)).acks;
  }

  /**
   * One script call per queue: `ack-claim` for a queue with acks and a claim, `ack` or `claim`
   * for a queue with only one of them; all written at once.
   */
  async ackAndClaim(acks: Ack[], workerId: string, requests: ClaimRequest[], leaseMs: number): Promise<AckAndClaimResult> {
    if (acks.length === 0 && requests.length === 0) return { acks: [], claims: [] };
    if (requests.length > 0) this.register(requests.map((r) => r.queue));
    // A queue's acks may take several calls (chunksByQueue): its first carries the claim.
    const ackChunks = chunksByQueue(acks);
    const calls: ScriptCall[] = [];
    // Per call: the acks it carries (indexes into `acks`) and the claim request it makes.
    const parts: { acks: number[]; claim: ClaimRequest | null }[] = [];
    for (const request of requests) {
      const first = ackChunks.findIndex(([queue]) => queue === request.queue);
      const claimArgs = [request.count, workerId, leaseMs, FORWARD_LIMIT];
      if (first < 0) {
        calls.push(this.scriptCall('claim', request.queue, claimArgs));
        parts.push({ acks: [], claim: request });
        continue;
      }
      const { args, order } = ackArgs(acks, ackChunks.splice(first, 1)[0][1]);
      calls.push(this.scriptCall('ack-claim', request.queue, [...args, ...claimArgs]));
      parts.push({ acks: order, claim: request });
    }
    for (const [queue, indexes] of ackChunks) {
      const { args, order } = ackArgs(acks, indexes);
      calls.push(this.scriptCall('ack', queue, args));
      parts.push({ acks: order, claim: null });
    }
    const replies = (await this.call(() => this.scripts.runMany(this.redis, calls))) as (string | number)[][];
    const ackResults = new Array<AckResult>(acks.length);
    const claims: ClaimResult[] = [];
    replies.forEach((reply, i) => {
      const { acks: indexes, claim } = parts[i];
      // ack-claim: { n, n ack results, claim reply }; ack: the n results; claim: the claim reply.
      const ackStart = claim && indexes.length > 0 ? 1 : 0;
      indexes.forEach((index, j) => (ackResults[index] = reply[ackStart + j] === 1 ? 'ok' : 'stale'));
      if (claim) claims.push(decodeClaimReply(reply, indexes.length > 0 ? 1 + indexes.length : 0, claim.queue, leaseMs));
    });
    return { acks: ackResults, claims };
  }

  async renewLeases(leases: LeaseRef[], leaseMs: number): Promise<RenewResult> {
    if (leases.length === 0) return { lost: [], cancelRequested: [] };
    const calls = chunksByQueue(leases).map(([queue, indexes]) =>
      this.scriptCall('renew', queue, [leaseMs, ...indexes.flatMap((i) => [leases[i].id, leases[i].token])]),
    );
    const replies = (await this.call(() => this.scripts.runMany(this.redis, calls))) as [string[], string[]][];
    return { lost: replies.flatMap((r) => r[0]), cancelRequested: replies.flatMap((r) => r[1]) };
  }

  async waitForWork(queues: string[], timeoutMs: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted || queues.length === 0) return;
    this.blocking ??= this.createConnection('blocking', {});
    const blocking = this.blocking;
    const markers = queues.map((q) => this.keys.queueKey(q, 'marker'));
    const seconds = Math.max(0.01, timeoutMs / 1000).toFixed(3);
    let onAbort: (() => void) | undefined;
    let guard: NodeJS.Timeout | undefined;
    let popped = false;
    try {
      await Promise.race([
        blocking.bzpopmin(...markers, seconds).finally(() => (popped = true)),
        new Promise<void>((resolve) => {
          onAbort = resolve;
          signal.addEventListener('abort', onAbort, { once: true });
          // Never wait much past the timeout, even if Redis is away and the command hangs.
          guard = setTimeout(resolve, timeoutMs + 1000);
        }),
      ]);
    } catch {
      // Redis away: the caller's loop retries after its own pause.
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort);
      clearTimeout(guard);
      if (!popped) {
        // Aborted while BZPOPMIN still blocks: left alone it would swallow the next wake-up and
        // hold up the next wait on this connection, so drop the connection.
        if (this.blocking === blocking) this.blocking = null;
        blocking.disconnect();
      }
    }
  }

  async forwardDue(queue: string, limit: number): Promise<number> {
    return Number(await this.runScript('forward', queue, [limit]));
  }

  async recoverExpired(queue: string, limit: number): Promise<number> {
    const backoff = DEFAULT_BACKOFF.type === 'exponential' ? DEFAULT_BACKOFF : { base: 10_000, max: 3_600_000 };
    const seed = Math.floor(Math.random() * 2 ** 31);
    return Number(
      await this.runScript('recover', queue, [limit, DEFAULT_RETENTION.dead, DEFAULT_RETENTION.cancelled, backoff.base, backoff.max, seed]),
    );
  }

  async cleanup(queue: string, limit: number): Promise<number> {
    return Number(await this.runScript('cleanup', queue, [limit]));
  }

  async reportProgress(lease: LeaseRef, update: { logs?: TaskLogLine[]; progress?: unknown }): Promise<AckResult> {
    const logs = update.logs && update.logs.length > 0 ? JSON.stringify(update.logs) : '';
    const progress = update.progress === undefined ? '' : JSON.stringify(update.progress);
    const applied = await this.runScript('progress', lease.queue, [lease.id, lease.token, logs, progress, MAX_LOG_LINES]);
    return applied === 1 ? 'ok' : 'stale';
  }

  // ── notifications ───────────────────────────────────────────────────────────

  async subscribe(listener: (event: BackendEvent) => void, options: SubscribeOptions = {}): Promise<Unsubscribe> {
    if (!this.subscriber) {
      const subscriber = this.createConnection('subscriber', {});
      this.subscriber = subscriber;
      subscriber.on('message', (channel: string, message: string) => {
        if (channel === this.keys.lifecycle) {
          for (const event of parseLifecycle(message)) for (const l of this.lifecycleListeners) l(event);
          return;
        }
        // A message is one event, or several finished events, one per line (lua/ack.lua).
        for (const line of message.split('\n')) {
          const event = parseEvent(line);
          if (!event) continue;
          if (event.kind === 'cancel-requested') for (const l of this.cancelListeners) l(event);
          for (const l of this.lifecycleListeners) l(event);
          if (this.listeners.size === 0) continue;
          // Plain subscribers get the finished event without the type (their contract predates it).
          const plain: BackendEvent = event.kind === 'finished' ? { kind: 'finished', id: event.id, queue: event.queue, state: event.state } : event;
          for (const l of this.listeners) l(plain);
        }
      });
    }
    // Channels are joined on first demand: a worker (cancelsOnly) joins only the cancel channel,
    // so it does not receive a message for every finished task.
    const set = options.lifecycle === true ? this.lifecycleListeners : options.cancelsOnly === true ? this.cancelListeners : this.listeners;
    const channels = [this.keys.cancels];
    if (set !== this.cancelListeners) channels.push(this.keys.events);
    if (set === this.lifecycleListeners) channels.push(this.keys.lifecycle);
    await this.join(channels);
    set.add(listener);
    return async () => {
      set.delete(listener);
    };
  }

  /**
   * Joins the channels not joined yet. SUBSCRIBEs go one after another: a second one sent while
   * the connection is still connecting breaks its ready check.
   */
  private async join(channels: string[]): Promise<void> {
    const fresh = channels.filter((c) => !this.joined.has(c));
    if (fresh.length > 0) {
      const subscriber = this.subscriber!;
      const joined = this.subscribing.catch(() => undefined).then(() => this.call(() => subscriber.subscribe(...fresh))).then(() => undefined);
      this.subscribing = joined;
      for (const channel of fresh) this.joined.set(channel, joined);
      joined.catch(() => fresh.forEach((c) => this.joined.get(c) === joined && this.joined.delete(c)));
    }
    for (const channel of channels) await this.joined.get(channel);
  }

  // ── workers ─────────────────────────────────────────────────────────────────

  async heartbeat(info: WorkerInfo, ttlMs: number): Promise<void> {
    const now = await this.now();
    // Two independent idempotent writes: pipelined, without MULTI/EXEC (two commands fewer per beat).
    await this.call(() =>
      Promise.all([
        this.redis.set(this.keys.worker(info.id), JSON.stringify({ ...info, lastHeartbeatAt: now }), 'PX', ttlMs),
        this.redis.zadd(this.keys.workers, now + ttlMs, info.id),
      ]),
    );
  }

  async removeWorker(id: string): Promise<void> {
    await this.call(() => this.redis.multi().del(this.keys.worker(id)).zrem(this.keys.workers, id).exec());
  }

  async listWorkers(): Promise<WorkerInfo[]> {
    const now = await this.now();
    await this.call(() => this.redis.zremrangebyscore(this.keys.workers, '-inf', now));
    const ids = await this.call(() => this.redis.zrange(this.keys.workers, 0, -1));
    if (ids.length === 0) return [];
    const raw = await this.call(() => this.redis.mget(...ids.map((id) => this.keys.worker(id))));
    return raw.map(decodeWorkerInfo).filter((w): w is WorkerInfo => w !== null);
  }

  async recordTaskTypes(types: TaskTypeInfo[]): Promise<void> {
    if (types.length === 0) return;
    const now = await this.now();
    // Each type's document is written whole (HSET of independent fields): no read-modify-write.
    await this.call(() => this.redis.hset(this.keys.taskTypes, Object.fromEntries(types.map((info) => [info.type, encodeTaskType(info, now)]))));
  }

  async listTaskTypes(): Promise<TaskTypeInfo[]> {
    const all = await this.call(() => this.redis.hgetall(this.keys.taskTypes));
    return Object.keys(all)
      .sort()
      .map((type) => decodeTaskType(type, all[type]));
  }

  // ── operating ───────────────────────────────────────────────────────────────

  async pauseQueue(queue: string): Promise<void> {
    this.register([queue]);
    await this.call(() => this.redis.set(this.keys.queueKey(queue, 'paused'), '1'));
  }

  async resumeQueue(queue: string): Promise<void> {
    await this.call(() =>
      this.redis.multi().del(this.keys.queueKey(queue, 'paused')).zadd(this.keys.queueKey(queue, 'marker'), 0, '1').exec(),
    );
  }

  async setQueueKeep(queue: string, keep: Partial<QueueKeep>): Promise<QueueKeep> {
    validateQueueName(queue);
    const bounds = validateQueueKeep(keep);
    const key = this.keys.queueKey(queue, 'keep');
    const set = Object.entries(bounds).filter(([, n]) => n !== null);
    const cleared = Object.entries(bounds).filter(([, n]) => n === null).map(([state]) => state);
    // The queue is registered in the same transaction: its bounds never exist without it.
    const multi = this.redis.multi().sadd(this.keys.queues, queue);
    if (set.length > 0) multi.hset(key, Object.fromEntries(set));
    if (cleared.length > 0) multi.hdel(key, ...cleared);
    multi.hmget(key, ...KEPT_STATES);
    const replies = await this.call(() => multi.exec());
    if (!replies) throw new TasklineError('TL_STORE_UNAVAILABLE', `setting the keep bounds of queue ${queue}: the transaction was aborted`);
    const failed = replies.find(([error]) => error);
    if (failed) throw failed[0] as Error;
    this.registered.add(queue);
    const now = replies[replies.length - 1][1] as (string | null)[];
    return Object.fromEntries(KEPT_STATES.map((state, i) => [state, now[i] === null ? null : Number(now[i])])) as QueueKeep;
  }

  private async operate(id: string, action: 'run' | 'archive' | 'delete' | 'cancel'): Promise<string> {
    const queue = await this.findQueue(id);
    if (queue === null) throw new TasklineError('TL_TASK_NOT_FOUND', `no task with id ${JSON.stringify(id)}`);
    const reply = String(await this.runScript('operate', queue, [action, id, DEFAULT_RETENTION.dead, DEFAULT_RETENTION.cancelled]));
    if (reply === 'missing') throw new TasklineError('TL_TASK_NOT_FOUND', `no task with id ${JSON.stringify(id)}`);
    if (reply.startsWith('invalid:')) throw operationError(action, id, reply.slice(8));
    return reply;
  }

  async cancelTask(id: string): Promise<'cancelled' | 'cancel-requested'> {
    return (await this.operate(id, 'cancel')) === 'requested' ? 'cancel-requested' : 'cancelled';
  }

  async runTask(id: string): Promise<void> {
    await this.operate(id, 'run');
  }

  async archiveTask(id: string): Promise<void> {
    await this.operate(id, 'archive');
  }

  async deleteTask(id: string): Promise<void> {
    await this.operate(id, 'delete');
  }

  private async operateAll(queue: string, state: BulkState, action: 'run' | 'archive' | 'delete'): Promise<number> {
    let total = 0;
    // Each batch is one atomic script; tasks that cannot take the action stay where they are,
    // so stop when a batch changed nothing.
    for (;;) {
      const [done, seen] = (await this.runScript('operate-all', queue, [
        action, state, BULK_LIMIT, DEFAULT_RETENTION.dead, DEFAULT_RETENTION.cancelled,
      ])) as [number, number];
      total += done;
      if (seen < BULK_LIMIT || done === 0) return total;
    }
  }

  runAll(queue: string, state: BulkState): Promise<number> {
    return this.operateAll(queue, state, 'run');
  }

  archiveAll(queue: string, state: BulkState): Promise<number> {
    return this.operateAll(queue, state, 'archive');
  }

  deleteAll(queue: string, state: BulkState): Promise<number> {
    return this.operateAll(queue, state, 'delete');
  }

  // ── inspecting ──────────────────────────────────────────────────────────────

  private async queueNames(): Promise<string[]> {
    return (await this.call(() => this.redis.smembers(this.keys.queues))).sort();
  }

  private async findQueue(id: string): Promise<string | null> {
    const queues = await this.queueNames();
    if (queues.length === 0) return null;
    const pipeline = this.redis.pipeline();
    for (const q of queues) pipeline.hexists(this.keys.queueKey(q, 'meta'), id);
    const replies = (await this.call(() => pipeline.exec())) ?? [];
    const index = replies.findIndex((r) => r[1] === 1);
    return index < 0 ? null : queues[index];
  }

  async listQueues(): Promise<QueueInfo[]> {
    const names = await this.queueNames();
    const infos = await Promise.all(names.map((name) => this.getQueue(name)));
    return infos.filter((info): info is QueueInfo => info !== null);
  }

  async getQueue(queue: string): Promise<QueueInfo | null> {
    const known = await this.call(() => this.redis.sismember(this.keys.queues, queue));
    if (known !== 1) return null;
    const r = (await this.runScript('queue-info', queue, [])) as number[];
    const counts = emptyCounts();
    counts.queued = r[0];
    counts.scheduled = r[1];
    counts.running = r[2];
    counts.retrying = r[3];
    counts.completed = r[4];
    counts.dead = r[5];
    counts.cancelled = r[6];
    const bound = (n: number) => (n < 0 ? null : n);
    return {
      name: queue, paused: r[7] === 1, keep: { completed: bound(r[12]), dead: bound(r[13]), cancelled: bound(r[14]) },
      counts, processed: r[8], failed: r[9], latency: r[10] < 0 ? 0 : Math.max(0, r[11] - r[10]),
    };
  }

  async listTasks(queue: string, state: TaskState, page: { limit?: number; cursor?: string } = {}): Promise<TaskPage> {
    const limit = pageLimit(page.limit);
    // The position is an offset into the state's list or zset.
    const [offset] = decodeCursor(page.cursor, queue, state, isOffset) ?? [0];
    const key = this.keys.queueKey(queue, state);
    let ids: string[];
    if (state === 'queued') {
      // Oldest first: the oldest task is at the right end of the list.
      ids = (await this.call(() => this.redis.lrange(key, -(offset + limit), -(offset + 1)))).reverse();
    } else if (state === 'completed' || state === 'dead' || state === 'cancelled') {
      ids = await this.call(() => this.redis.zrevrange(key, offset, offset + limit - 1));
    } else {
      ids = await this.call(() => this.redis.zrange(key, offset, offset + limit - 1));
    }
    const tasks = await this.loadRecords(queue, ids, state);
    return { tasks, nextCursor: ids.length < limit ? null : encodeCursor(queue, state, [offset + ids.length]) };
  }

  /** The records of tasks of a queue, in order; `listed`: the state they were listed in, when known. */
  private async loadRecords(queue: string, ids: string[], listed: TaskState | null = null): Promise<TaskRecord[]> {
    if (ids.length === 0) return [];
    const k = (name: 'meta' | 'payload' | 'result' | 'attempts' | 'logs') => this.keys.queueKey(queue, name);
    const replies =
      (await this.call(() =>
        this.redis
          .pipeline()
          .hmget(k('meta'), ...ids)
          .hmget(k('payload'), ...ids)
          .hmget(k('result'), ...ids)
          .hmget(k('attempts'), ...ids)
          .hmget(k('logs'), ...ids)
          .exec(),
      )) ?? [];
    const [metas, payloads, results, attempts, logs] = replies.map((r) => r[1] as (string | null)[]);
    const records: TaskRecord[] = [];
    for (const [i, id] of ids.entries()) {
      const meta = metas[i];
      if (!meta) continue;
      // A corrupt record does not say its state; the structure that holds the id does.
      const state = listed ?? (readableMeta(meta) ? null : await this.storedState(queue, id));
      records.push(decodeRecord(queue, id, meta, { payload: payloads[i], result: results[i], attempts: attempts[i], logs: logs[i] }, state));
    }
    return records;
  }

  /** The state whose list or set holds a task id, or null. */
  private async storedState(queue: string, id: string): Promise<TaskState | null> {
    const pipeline = this.redis.pipeline().lpos(this.keys.queueKey(queue, 'queued'), id);
    for (const state of ZSET_STATES) pipeline.zscore(this.keys.queueKey(queue, state), id);
    const replies = (await this.call(() => pipeline.exec())) ?? [];
    if (replies[0]?.[1] !== null && replies[0]?.[1] !== undefined) return 'queued';
    const at = replies.slice(1).findIndex((r) => r[1] !== null && r[1] !== undefined);
    return at < 0 ? null : ZSET_STATES[at];
  }

  async getTask(id: string): Promise<TaskRecord | null> {
    const queue = await this.findQueue(id);
    if (queue === null) return null;
    const [record] = await this.loadRecords(queue, [id]);
    return record ?? null;
  }

  async dailyStats(queue: string, days: number): Promise<DailyStat[]> {
    countWithin('days', days, MAX_STAT_DAYS);
    const today = Math.floor((await this.now()) / 86_400_000);
    const dayNumbers = Array.from({ length: days }, (_, i) => today - days + 1 + i);
    const fields = dayNumbers.flatMap((d) => [`pd:${d}`, `fd:${d}`]);
    const values = await this.call(() => this.redis.hmget(this.keys.queueKey(queue, 'stats'), ...fields));
    return dayNumbers.map((d, i) => ({ day: dayString(d), processed: Number(values[2 * i] ?? 0), failed: Number(values[2 * i + 1] ?? 0) }));
  }

  async minuteStats(queue: string, minutes: number): Promise<MinuteStat[]> {
    countWithin('minutes', minutes, MAX_STAT_MINUTES);
    const current = Math.floor((await this.now()) / 60_000);
    const numbers = Array.from({ length: minutes }, (_, i) => current - minutes + 1 + i);
    const fields = numbers.flatMap((m) => [`pm:${m}`, `fm:${m}`]);
    const values = await this.call(() => this.redis.hmget(this.keys.queueKey(queue, 'stats'), ...fields));
    return numbers.map((m, i) => ({ at: m * 60_000, processed: Number(values[2 * i] ?? 0), failed: Number(values[2 * i + 1] ?? 0) }));
  }

  // ── schedules and locks (schedule-store.ts) ─────────────────────────────────

  createSchedule(definition: ScheduleDefinition): Promise<Schedule> {
    return this.scheduling.createSchedule(definition);
  }

  updateSchedule(definition: ScheduleDefinition): Promise<Schedule> {
    return this.scheduling.updateSchedule(definition);
  }

  upsertSchedule(definition: ScheduleDefinition): Promise<Schedule> {
    return this.scheduling.upsertSchedule(definition);
  }

  deleteSchedule(id: string): Promise<boolean> {
    return this.scheduling.deleteSchedule(id);
  }

  getSchedule(id: string): Promise<Schedule | null> {
    return this.scheduling.getSchedule(id);
  }

  listSchedules(): Promise<Schedule[]> {
    return this.scheduling.listSchedules();
  }

  listScheduleChanges(since: number): Promise<ScheduleChanges> {
    return this.scheduling.listScheduleChanges(since);
  }

  pauseSchedule(id: string, options?: { note?: string | null; until?: number | null }): Promise<Schedule> {
    return this.scheduling.pauseSchedule(id, options);
  }

  resumeSchedule(id: string): Promise<Schedule> {
    return this.scheduling.resumeSchedule(id);
  }

  acquireLeadership(holder: string, ttlMs: number): Promise<number | null> {
    return this.scheduling.acquireLeadership(holder, ttlMs);
  }

  releaseLeadership(holder: string): Promise<void> {
    return this.scheduling.releaseLeadership(holder);
  }

  checkInScheduler(instance: SchedulerInstance, options: { leaseMs: number; bid: boolean }): Promise<SchedulerCheckIn> {
    return this.scheduling.checkInScheduler(instance, options);
  }

  leaveSchedulers(id: string): Promise<void> {
    return this.scheduling.leaveSchedulers(id);
  }

  listSchedulers(): Promise<SchedulerList> {
    return this.scheduling.listSchedulers();
  }

  fire(batches: FireBatch[]): Promise<FireResult[][]> {
    return this.scheduling.fire(batches);
  }

  advanceSchedules(holder: string, epoch: number, updates: ScheduleUpdate[], firedThrough?: number): Promise<boolean> {
    return this.scheduling.advanceSchedules(holder, epoch, updates, firedThrough);
  }

  listFires(scheduleId: string, queue: string, limit: number): Promise<FireRecord[]> {
    return this.scheduling.listFires(scheduleId, queue, limit);
  }

  acquireLock(key: string, owner: string, ttlMs: number): Promise<number | null> {
    return this.scheduling.acquireLock(key, owner, ttlMs);
  }

  extendLock(key: string, owner: string, token: number, ttlMs: number): Promise<boolean> {
    return this.scheduling.extendLock(key, owner, token, ttlMs);
  }

  releaseLock(key: string, owner: string, token: number): Promise<boolean> {
    return this.scheduling.releaseLock(key, owner, token);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.listeners.clear();
    this.lifecycleListeners.clear();
    this.cancelListeners.clear();
    const connections = [this.redis, this.blocking, this.subscriber].filter((c): c is Redis => c !== null);
    // QUIT where a command of ioredis's own may be in flight — the subscriber re-subscribes by
    // itself after a reconnect, and a disconnect would reject that command with no one to hear
    // it (an unhandled rejection). Not the blocking connection: QUIT would wait out its BZPOPMIN.
    await Promise.all(
      connections.map(async (c) => {
        if (c !== this.blocking && c.status === 'ready') await c.quit().catch(() => c.disconnect());
        else c.disconnect();
      }),
    );
  }
}

/**
 * Most items one script call takes: a script unpacks a batch into one Redis call, and Redis's
 * Lua unpacks at most ~8,000 values (two per item in an HSET).
 */
const SCRIPT_BATCH = 1000;
/** Tasks per enqueue script call (see enqueueNow). */
const ENQUEUE_CALL = 250;

/**
 * ack.lua's arguments for some of `acks` (all of one queue), and the order of its results (the
 * indexes into `acks`). A completion without a result — what a busy worker sends most — goes
 * short, 2 arguments instead of 6, grouped with the others of its lease token (a claim's tasks
 * share one); the other acks go in full first, so two acks of one attempt in a batch (which the
 * worker never sends) do not keep their order: one applies, the other is stale.
 */
function ackArgs(acks: Ack[], indexes: number[]): { args: (string | number)[]; order: number[] } {
  const full: number[] = [];
  const short = new Map<string, number[]>();
  for (const index of indexes) {
    const ack = acks[index];
    if (ack.kind === 'complete' && ack.result === '') {
      const group = short.get(ack.token);
      if (group) group.push(index);
      else short.set(ack.token, [index]);
    } else full.push(index);
  }
  const args: (string | number)[] = [full.length, DEFAULT_RETENTION.completed, DEFAULT_RETENTION.dead, DEFAULT_RETENTION.cancelled];
  for (const index of full) {
    const ack = acks[index];
    let kind: string = ack.kind;
    let data = '';
    let delay = 0;
    if (ack.kind === 'complete') data = ack.result;
    else if (ack.kind === 'retry') {
      kind = ack.consumed ? 'retry' : 'retry-free';
      data = ack.error;
      delay = ack.delay;
    } else if (ack.kind === 'dead' || ack.kind === 'cancelled') data = ack.error;
    else if (ack.kind === 'hand-back') delay = ack.delay;
    // A completing attempt is not stored, only its finish time: the record says the rest (lua/ack.lua).
    args.push(kind, ack.id, ack.token, data, delay, ack.kind === 'complete' ? finishTime(ack.attempt) : encodeAttempt(ack.attempt));
  }
  args.push(short.size);
  const order = full;
  for (const [token, group] of short) {
    args.push(token, group.length);
    for (const index of group) {
      args.push(acks[index].id, finishTime(acks[index].attempt));
      order.push(index);
    }
  }
  return { args, order };
}

/** A completing attempt's finish time as ack.lua takes it ('' for the store's time). */
function finishTime(attempt: Ack['attempt']): number | '' {
  return attempt.finishedAt === null ? '' : Math.round(attempt.finishedAt);
}

/** claim.lua's reply, starting at `start` of `reply`. */
function decodeClaimReply(reply: (string | number)[], start: number, queue: string, leaseMs: number): ClaimResult {
  const tasks = [];
  const token = String(reply[start + 4]);
  const now = Number(reply[start + 3]);
  for (let j = start + 5; j < reply.length; j += 3) {
    tasks.push(decodeClaimed(queue, String(reply[j]), String(reply[j + 1]), String(reply[j + 2]), token, leaseMs, now));
  }
  const nextDue = Number(reply[start + 1]);
  return { queue, tasks, paused: reply[start] === 1, more: reply[start + 2] === 1, nextDueAt: nextDue < 0 ? null : nextDue, now };
}

/**
 * The indexes of `items` (all, or those given) grouped by queue, each queue's in calls of at
 * most SCRIPT_BATCH, in order (pipelined, so still in order in Redis).
 */
function chunksByQueue(items: readonly { queue: string }[], indexes: readonly number[] = items.map((_, i) => i), size = SCRIPT_BATCH): [string, number[]][] {
  const byQueue = new Map<string, number[]>();
  for (const index of indexes) {
    const list = byQueue.get(items[index].queue);
    if (list) list.push(index);
    else byQueue.set(items[index].queue, [index]);
  }
  const chunks: [string, number[]][] = [];
  for (const [queue, indexes] of byQueue) {
    for (let start = 0; start < indexes.length; start += size) chunks.push([queue, indexes.slice(start, start + size)]);
  }
  return chunks;
}

function parseEvent(message: string): BackendEvent | null {
  const parts = message.split('\t');
  if (parts[0] === 'f' && (parts.length === 4 || parts.length === 5)) {
    const event: BackendEvent = { kind: 'finished', queue: parts[1], id: parts[2], state: parts[3] as 'completed' | 'dead' | 'cancelled' };
    if (parts.length === 5 && parts[4] !== '') event.type = parts[4];
    return event;
  }
  if (parts[0] === 'c' && parts.length === 3) return { kind: 'cancel-requested', queue: parts[1], id: parts[2] };
  return null;
}

/** A batch of lifecycle lines (lua/_lib.lua note_lifecycle): kind, queue, id, type, detail. */
function parseLifecycle(message: string): LifecycleEvent[] {
  const events: LifecycleEvent[] = [];
  for (const line of message.split('\n')) {
    const [kind, queue, id, type, detail] = line.split('\t');
    if (detail === undefined) continue;
    if (kind === 'e') events.push({ kind: 'enqueued', queue, id, type, state: detail === 'scheduled' ? 'scheduled' : 'queued' });
    else if (kind === 's') events.push({ kind: 'started', queue, id, type, attempt: Number(detail) });
    else if (kind === 'r') {
      const [attempt, due] = detail.split(',');
      events.push({ kind: 'retrying', queue, id, type, attempt: Number(attempt), nextRunAt: Number(due) });
    }
  }
  return events;
}

/** A listing offset (Redis takes 64-bit indexes: any safe integer is one). */
function isOffset(position: unknown[]): position is [number] {
  return position.length === 1 && Number.isSafeInteger(position[0]) && (position[0] as number) >= 0;
}

function redactUrl(url: string): string {
  return url.replace(/\/\/([^@/]*)@/, '//***@');
}

function storeError(error: unknown): TasklineError {
  if (error instanceof TasklineError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const unavailable =
    /Command timed out|Connection is closed|ECONNREFUSED|ECONNRESET|ETIMEDOUT|MaxRetriesPerRequest|Stream isn't writeable|enableOfflineQueue|EPIPE|LOADING/i.test(message);
  return new TasklineError(unavailable ? 'TL_STORE_UNAVAILABLE' : 'TL_STORE_ERROR', `Redis: ${message}`, { cause: error });
}

/** The database number of a Redis URL (`redis://host:6379/2` → 2; none → 0). */
function databaseOf(url: string): number {
  let path = '';
  try {
    path = new URL(url).pathname;
  } catch {
    return 0; // ioredis reports an unparsable URL itself
  }
  const match = /^\/?(\d*)$/.exec(path);
  if (!match) throw new TasklineError('TL_INVALID_CONFIG', `${redactUrl(url)}: the database must be a whole number (redis://host:port/2), got ${JSON.stringify(path.slice(1, 40))}`);
  return match[1] === '' ? 0 : Number(match[1]);
}
