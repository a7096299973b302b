/**
 * Reading a queue's queued tasks, which wait in lines (lua/lib/groups.lua): the queue's own list
 * of tasks without a group, then one list per group with queued tasks. A listing reads them as
 * one sequence: the queue's line, then the groups' lines by group name, each oldest first. The
 * order is not the order they start in (groups take turns), but it is stable between pages.
 */
import { parseStoredObject } from '../shared.js';
import type { StoredMeta } from './codec.js';
import type { RedisConnection } from './connection.js';

/** The lines of a queue's queued tasks, in listing order, with their lengths. */
export interface QueuedLines {
  keys: string[];
  sizes: number[];
}

/** The `gq:<group>` key of a queue's group (keys.ts). */
function groupKey(queuedKey: string, group: string): string {
  return `${queuedKey.slice(0, -'queued'.length)}gq:${group}`;
}

/** A queue's queued lines now: two round trips when it has groups waiting, one otherwise. */
export async function queuedLines(c: RedisConnection, queue: string): Promise<QueuedLines> {
  const queued = c.keys.queueKey(queue, 'queued');
  const tag = queued.slice(0, -'queued'.length);
  const [[, size], [, turns], [, parked]] = ((await c.call(() => c.redis.pipeline().llen(queued).lrange(`${tag}ring`, 0, -1).zrange(`${tag}gparked`, 0, -1).exec())) ??
    []) as [unknown, unknown][];
  // The groups with waiting tasks: those whose turn comes, and those parked at their limit.
  const groups = [...((turns as string[] | null) ?? []), ...((parked as string[] | null) ?? [])].filter((g) => g !== '').sort();
  const keys = [queued, ...groups.map((g) => groupKey(queued, g))];
  if (groups.length === 0) return { keys, sizes: [Number(size)] };
  const pipeline = c.redis.pipeline();
  for (const key of keys.slice(1)) pipeline.llen(key);
  const lengths = ((await c.call(() => pipeline.exec())) ?? []).map(([, n]) => Number(n));
  return { keys, sizes: [Number(size), ...lengths] };
}

export function queuedTotal(lines: QueuedLines): number {
  return lines.sizes.reduce((a, b) => a + b, 0);
}

/**
 * Up to `count` ids from `offset` of the sequence, in listing order (each line oldest first: from
 * its right end). A line that shrank since its length was read (a claim took some) gives fewer:
 * the page goes on from the lines after it, so it is not cut short.
 */
export async function readQueued(c: RedisConnection, lines: QueuedLines, offset: number, count: number): Promise<string[]> {
  const pipeline = c.redis.pipeline();
  let skip = offset;
  let want = count;
  let last = -1;
  for (const [i, key] of lines.keys.entries()) {
    if (want <= 0) break;
    if (skip >= lines.sizes[i]) {
      skip -= lines.sizes[i];
      continue;
    }
    const take = Math.min(want, lines.sizes[i] - skip);
    pipeline.lrange(key, -(skip + take), -(skip + 1));
    last = i;
    want -= take;
    skip = 0;
  }
  if (last < 0) return [];
  const replies = (await c.call(() => pipeline.exec())) ?? [];
  const ids = replies.flatMap(([, read]) => [...((read as string[] | null) ?? [])].reverse());
  if (ids.length >= count || last === lines.keys.length - 1) return ids;
  const rest: QueuedLines = { keys: lines.keys.slice(last + 1), sizes: lines.sizes.slice(last + 1) };
  return [...ids, ...(await readQueued(c, rest, 0, count - ids.length))];
}

/** Where an id is in the sequence (its offset), or null when no line holds it: looked for in its group's line. */
export async function queuedOffset(c: RedisConnection, queue: string, lines: QueuedLines, id: string): Promise<number | null> {
  let line = 0;
  if (lines.keys.length > 1) {
    const record = parseStoredObject<StoredMeta>(await c.call(() => c.redis.hget(c.keys.queueKey(queue, 'meta'), id)));
    if (typeof record.g === 'string') line = lines.keys.indexOf(groupKey(lines.keys[0], record.g));
    if (line < 0) return null;
  }
  const at = await c.call(() => c.redis.lpos(lines.keys[line], id, 'RANK', -1));
  if (at === null) return null;
  // LPOS counts from the list's head, the newest; the sequence runs oldest first.
  return lines.sizes.slice(0, line).reduce((a, b) => a + b, 0) + lines.sizes[line] - 1 - Number(at);
}
