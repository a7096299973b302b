/** Key names of the Redis backend. All keys of one queue share the hash tag `{prefix:queue}`. */

/** The per-queue keys, in the order every Lua script receives them (see lua/_lib.lua). */
export const QUEUE_KEY_NAMES = [
  'meta', 'payload', 'queued', 'scheduled', 'retrying', 'running', 'completed', 'dead', 'cancelled',
  'lease', 'paused', 'marker', 'stats', 'result', 'attempts', 'logs', 'seq', 'cancel',
] as const;
export type QueueKeyName = (typeof QUEUE_KEY_NAMES)[number];

export class RedisKeys {
  private readonly cache = new Map<string, string[]>();

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

  queueKey(queue: string, name: QueueKeyName): string {
    return this.queue(queue)[QUEUE_KEY_NAMES.indexOf(name)];
  }

  unique(queue: string, hash: string): string {
    return `{${this.prefix}:${queue}}:u:${hash}`;
  }

  /** Set of all queue names. */
  get queues(): string {
    return `${this.prefix}:queues`;
  }

  /** Pub/sub channel of lifecycle events. */
  get events(): string {
    return `${this.prefix}:events`;
  }

  /** Sorted set: worker id -> heartbeat expiry. */
  get workers(): string {
    return `${this.prefix}:workers`;
  }

  worker(id: string): string {
    return `${this.prefix}:worker:${id}`;
  }
}
