/**
 * Key names of the Redis backend. All keys of one queue share the hash tag `{prefix:queue}`, all
 * keys of one workflow `{prefix:wf:<id>}`.
 */

/**
 * The per-queue keys, in the order a Lua script receives them when it takes all (a hot script
 * takes only its SCRIPT_KEYS, scripts.ts); in Lua each is the local K_<NAME> (lua/lib/queue.lua).
 * - meta      hash   id -> task record (JSON, short field names: codec.ts)
 * - payload   hash   id -> payload (JSON text)
 * - queued    list   ids; LPUSH to enqueue, RPOP to claim (oldest first)
 * - scheduled, retrying  zset  id -> due time;  running  zset  id -> lease expiry
 * - completed, dead, cancelled  zset  id -> end of retention
 * - paused    string, present while the queue is paused
 * - marker    zset   one member; a blocked worker wakes when it is added
 * - stats     hash   processed/failed/refused totals (refused: enqueues its maxLength refused) and per-day/per-minute counters
 * - result, attempts, logs  hash  id -> result JSON, attempt records array, log lines array
 * - seq       string counter for lease tokens
 * - cancel    set    ids of running tasks an operator asked to cancel
 * - fires     hash   fire id -> fire record (JSON) of the schedules enqueueing here
 * - firefloor hash   schedule id -> nominal time up to which fire records were pruned;
 *                    run:<schedule id> -> the task of its latest run (lua/fire.lua)
 * - keep      hash   completed/dead/cancelled -> most tasks of that state kept (setQueueKeep);
 *                    nodes -> 1 once a workflow has a node in the queue (its ack batches look
 *                    for node tasks only then; read with the bounds, lua/lib/keep.lua);
 *                    the queue's limits (setQueueLimits): rate ('<limit> <interval ms>'),
 *                    concurrency, groupConcurrency, maxLength
 * - starts    zset   the starts inside the rate limit's window: score the start time (ms)
 * Named from the queued key, not passed to the scripts as keys (lua/lib/groups.lua):
 * - gq:<group> list  the queued tasks of a group (the enqueue option `group`), as `queued`
 * - ring       list  the groups with queued tasks, and '' for `queued`, in the order they take turns
 * - grouped    string how many tasks wait in the groups' lists
 * - gparked    zset  groups at their groupConcurrency, out of the ring: group -> earliest lease expiry
 * - grunning   zset  the tasks the claim started from the groups' lines, as '<group> <id>' (score 0)
 */
export const QUEUE_KEY_NAMES = [
  'meta', 'payload', 'queued', 'scheduled', 'retrying', 'running', 'completed', 'dead', 'cancelled',
  'paused', 'marker', 'stats', 'result', 'attempts', 'logs', 'seq', 'cancel', 'fires', 'firefloor', 'keep', 'starts',
] as const;
export type QueueKeyName = (typeof QUEUE_KEY_NAMES)[number];

/**
 * The keys of one workflow, all under the hash tag `{prefix:wf:<id>}` (lua/lib/workflow.lua
 * builds the same names from the prefix, for the workflow a node's task links to):
 * - meta      hash  what changes only as the workflow is made, finishes or is retried: name
 *                   (JSON), state, failFast (1 | 0), created, finished, retention (ms, the
 *                   default resolved at creation), onFinish (its task as it starts, JSON),
 *                   onFinishTask (its current run's id)
 * - order     list  the node ids in declared order
 * - state     hash  the workflow's nodes: all that a node's end reads and writes (one read and
 *                   one write, lua/lib/workflow.lua) and their records. Beside each node id,
 *                   fields that start with a control character, which no node id holds:
 *                   node -> pending (or no field: as created) | started | completed | dead |
 *                     cancelled (the state of a started node, as reads report it, is its
 *                     task's); a started node's value is 'started' TAB its task id TAB its
 *                     children (as its record lists them): all that its end needs
 *                   \x01 -> the flags: state, then failFast, failed, cancelling and fresh
 *                     (1 | 0), as 'running 1001'; they change only as the workflow fails, is
 *                     cancelled, finishes or is retried. fresh: the nodes' task ids are the
 *                     client's new uuids and no node ran twice, so a start need not look for
 *                     the id's earlier task
 *                   \x02 node -> the result JSON of a completed node; \x03 node -> the error of
 *                     one that failed or was cancelled
 *                   \x04 node -> how many of the parents of a pending node of two parents or
 *                     more have not finished (one of one parent waits for it alone); the
 *                     finishing parent whose HINCRBY reaches 0 starts it. Each parent releases a
 *                     child once per run (its own end, or its cancel, happens once), so the count
 *                     is exact; the field goes when the node is cancelled
 *                   \x05 node -> all of the node that does not change, as text cut at tabs:
 *                     task id, queue, when (r<runAt ms> | d<delay ms> | '' for now), its
 *                     parents (declared order) and its children (each list joined by
 *                     NODE_LIST), record fragment (codec.ts), runOnFailure (1 | 0), type,
 *                     payload (last: the only part that may hold a tab); read at its start
 *                     (workflows.ts encodeNodeRecord)
 *                   \x06 -> how many nodes are not final (HINCRBY -1 as each ends; the one that
 *                     takes it to 0 finishes the workflow)
 */
/** The separator of the lists of node ids in a node's record (no node id holds a control character). */
export const NODE_LIST = '\x01';

export const WORKFLOW_KEY_NAMES = ['meta', 'order', 'state'] as const;
export type WorkflowKeys = Record<(typeof WORKFLOW_KEY_NAMES)[number], string>;

export class RedisKeys {
  private readonly cache = new Map<string, string[]>();
  private readonly subsets = new WeakMap<readonly QueueKeyName[], Map<string, string[]>>();

  constructor(readonly prefix: string) {}

  /** All keys of a queue in script order. */
  queue(queue: string): string[] {
    let keys = this.cache.get(queue);
    if (!keys) {
      const tag = `{${this.prefix}:${queue}}`;
      keys = QUEUE_KEY_NAMES.map((name) => `${tag}:${name}`);
      this.cache.set(queue, keys);
    }
    return keys;
  }

  /** The named keys of a queue, in the given order (cached per list and queue). */
  subset(queue: string, names: readonly QueueKeyName[]): string[] {
    let byQueue = this.subsets.get(names);
    if (!byQueue) this.subsets.set(names, (byQueue = new Map()));
    let keys = byQueue.get(queue);
    if (!keys) {
      const all = this.queue(queue);
      keys = names.map((name) => all[QUEUE_KEY_NAMES.indexOf(name)]);
      byQueue.set(queue, keys);
    }
    return keys;
  }

  queueKey(queue: string, name: QueueKeyName): string {
    return this.queue(queue)[QUEUE_KEY_NAMES.indexOf(name)];
  }

  unique(queue: string, hash: string): string {
    return `{${this.prefix}:${queue}}:u:${hash}`;
  }

  /**
   * On a Redis Cluster, the workflow node ends a queue's scripts handed off (sorted set: entry
   * JSON by its number, lua/lib/node-ends.lua), and the starts the queue applied (sorted set:
   * '<workflow id> TAB <number>' by time, kept a day, lua/workflow-apply.lua).
   */
  queueHandoff(queue: string): string {
    return `{${this.prefix}:${queue}}:handoff`;
  }

  /** A schedule's fire history, kept in the slot of the queue its tasks go to. */
  fireHistory(queue: string, scheduleId: string): string {
    return `{${this.prefix}:${queue}}:sfires:${scheduleId}`;
  }

  /** Schedule keys, in script order: defs, meta, state, generations, leader, version, changes. */
  get schedules(): string[] {
    const tag = `{${this.prefix}:schedules}`;
    return [`${tag}:defs`, `${tag}:meta`, `${tag}:state`, `${tag}:generations`, `${tag}:leader`, `${tag}:version`, `${tag}:changes`];
  }

  /** The scheduler instances' keys (lua/schedulers.lua), in script order: leader, registry, seen, downtime, version. */
  get schedulers(): string[] {
    const tag = `{${this.prefix}:schedules}`;
    return [`${tag}:leader`, `${tag}:schedulers`, `${tag}:schedulers-seen`, `${tag}:downtime`, `${tag}:version`];
  }

  /** A lock's keys: owner, fence counter. */
  lock(key: string): string[] {
    const tag = `{${this.prefix}:lock:${key}}`;
    return [`${tag}:owner`, `${tag}:fence`];
  }

  /** Set of all queue names. */
  get queues(): string {
    return `${this.prefix}:queues`;
  }

  /** A workflow's keys (see WORKFLOW_KEY_NAMES). */
  workflow(id: string): WorkflowKeys {
    const tag = `{${this.prefix}:wf:${id}}`;
    return Object.fromEntries(WORKFLOW_KEY_NAMES.map((name) => [name, `${tag}:${name}`])) as WorkflowKeys;
  }

  /** On a Redis Cluster, what a workflow's steps handed off to other slots (sorted set: entry JSON by its number, lib/workflow.lua). */
  workflowHandoff(id: string): string {
    return `{${this.prefix}:wf:${id}}:handoff`;
  }

  /** On a Redis Cluster, the workflows whose hand-offs a client is carrying (set), for a sweep to finish those a crash left. */
  get handoffWorkflows(): string {
    return `${this.prefix}:handoffs`;
  }

  /** Sorted set: workflow id -> created time, every workflow kept (listWorkflows, newest first). */
  get workflows(): string {
    return `${this.prefix}:workflows`;
  }

  /** Sorted set: workflow id -> created time, the workflows in one state. */
  workflowsIn(state: string): string {
    return `${this.prefix}:workflows:${state}`;
  }

  /** Sorted set: finished workflow id -> end of its retention (cleanupWorkflows). */
  get workflowExpiry(): string {
    return `${this.prefix}:workflows:expiry`;
  }

  /**
   * Pub/sub channel of lifecycle events. lua/lib/workflow.lua takes the key prefix from it
   * (`<prefix>:events`), to name the keys of other queues and of workflows.
   */
  get events(): string {
    return `${this.prefix}:events`;
  }

  /** Pub/sub channel of enqueued/started/retrying events (lua/lib/events.lua derives it from `events`). */
  get lifecycle(): string {
    return `${this.events}:lifecycle`;
  }

  /** Pub/sub channel of cancel requests for running tasks (lua/lib/operations.lua derives it from `events`). */
  get cancels(): string {
    return `${this.events}:cancel`;
  }

  /** Sorted set: worker id -> heartbeat expiry. */
  get workers(): string {
    return `${this.prefix}:workers`;
  }

  worker(id: string): string {
    return `${this.prefix}:worker:${id}`;
  }

  /** Stream: the audit log, one entry per mutating API call (field `e`: the entry's JSON), trimmed to its bound. */
  get audit(): string {
    return `${this.prefix}:audit`;
  }

  /** Hash: task type or pattern -> its recorded document (backend/task-types.ts). */
  get taskTypes(): string {
    return `${this.prefix}:types`;
  }
}
