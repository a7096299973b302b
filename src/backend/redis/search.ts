/**
 * Task search (Backend.searchTasks; search-scope.ts has what both stores share). A search walks
 * its scope through the state indexes — each queue's `queued` list and state zsets, in their
 * listing order — reading records in chunks only when the filter tests more than the queue and
 * state. `id:` is a direct lookup. Reads only: no script.
 */
import { testsRecords, type TaskFilter } from '../../core/task-query.js';
import type { TaskRecord } from '../../core/task.js';
import type { SearchPageOptions, TaskSearchPage } from '../search-contract.js';
import {
  encodeSearchCursor, matchesFields, matchesPayload, matchesPayloadText, matchesPayloadValue, newestFirst, resumeIndex, searchBounds, searchSegments, type Segment,
} from '../search-scope.js';
import { parseStoredObject } from '../shared.js';
import type { StoredMeta } from './codec.js';
import type { PipelinedCommand, RedisConnection } from './connection.js';
import { findQueue, loadRecords, queueNames } from './inspect.js';
import { queuedLines, queuedOffset, queuedTotal, readQueued, type QueuedLines } from './queued-lines.js';

/** Ids read (and records fetched) per round trip. */
const CHUNK = 1000;

/**
 * A place in a segment: the offset in its listing order, the id found there when known (the
 * anchor), and in a state zset the anchor's score. A later page finds the anchor again (ZRANK,
 * LPOS), so tasks that left the segment before it — those a bulk action just moved — do not
 * shift the place. When the anchor itself has left, the stored offset may be past tasks not yet
 * seen (those before it may have left too), so the page goes on from where the anchor's score
 * begins in a zset (ZCOUNT), and from the start of a `queued` list (it has no scores): it may
 * repeat tasks (those of equal score, or the list's), but never skips one that stayed.
 */
type Position = [offset: number, anchor: string | null, score: number | null];

function isPosition(position: unknown[]): position is Position {
  const [offset, anchor, score = null] = position;
  return (position.length === 2 || position.length === 3) && Number.isSafeInteger(offset) && (offset as number) >= 0 && (anchor === null || typeof anchor === 'string')
    && (score === null || (typeof score === 'number' && Number.isFinite(score)));
}

export async function searchTasks(c: RedisConnection, filter: TaskFilter, page: SearchPageOptions = {}): Promise<TaskSearchPage> {
  const { limit, scanLimit, resume } = searchBounds(filter, page, isPosition);
  if (filter.id !== null) return searchById(c, filter.id, filter);
  const segments = searchSegments(filter.queue !== null ? [filter.queue] : await queueNames(c), filter);
  const first = resumeIndex(segments, resume);
  const resumed = resume !== null && segments[first]?.queue === resume.queue && segments[first]?.state === resume.state ? (resume.position as Position) : null;

  // The queued tasks' lines (queued-lines.ts) of the queues searched from the first segment on.
  const queuedQueues = segments.slice(first).filter((s) => s.state === 'queued').map((s) => s.queue);
  const lines = new Map(await Promise.all(queuedQueues.map(async (queue) => [queue, await queuedLines(c, queue)] as const)));
  // One round trip: each state zset's size, and where the anchor of the page before is now.
  const zsets = segments.filter((s) => s.state !== 'queued');
  const commands: PipelinedCommand[] = zsets.map((s) => ['zcard', key(c, s)]);
  let anchor = resumed?.[1] ?? null;
  const score = resumed?.[2] ?? null;
  if (anchor !== null && segments[first].state !== 'queued') {
    const s = segments[first];
    commands.push([newestFirst(s.state) ? 'zrevrank' : 'zrank', key(c, s), anchor]);
    // Where the anchor's score begins now, should the anchor be gone.
    if (score !== null) {
      if (newestFirst(s.state)) commands.push(['zcount', key(c, s), `(${score}`, '+inf']);
      else commands.push(['zcount', key(c, s), '-inf', `(${score}`]);
    }
  }
  const replies = await c.pipelined(commands);
  const failed = replies.find(([error]) => error);
  if (failed) throw failed[0] as Error;
  const zsetSizes = replies.slice(0, zsets.length).map(([, n]) => Number(n));
  let z = 0;
  const sizes = segments.map((s) => {
    if (s.state !== 'queued') return zsetSizes[z++];
    // Lines are read from the first segment on: the sizes before it count only in a first page's total.
    const queued = lines.get(s.queue);
    return queued ? queuedTotal(queued) : 0;
  });
  const total = resume?.total ?? sizes.reduce((a, b) => a + b, 0);
  let offset = resumed?.[0] ?? 0;
  if (anchor !== null) {
    const queuedFirst = segments[first].state === 'queued';
    const at = queuedFirst ? await queuedOffset(c, segments[first].queue, lines.get(segments[first].queue)!, anchor) : (replies[zsets.length][1] as number | null);
    if (at !== null) offset = at;
    else {
      // The anchor left too: the stored offset may be past tasks not yet seen (see Position).
      anchor = null;
      const before = queuedFirst ? 0 : replies[zsets.length + 1]?.[1];
      offset = typeof before === 'number' ? before : 0;
    }
  }

  const hits: (Segment & { ids: string[] })[] = [];
  let found = 0;
  let scanned = 0;
  let next: { index: number; position: Position } | null = null;
  const full = () => found >= limit || scanned >= scanLimit;
  for (let index = first; index < segments.length && next === null; index++, offset = 0) {
    const segment = segments[index];
    // The id at `offset` and its score, when known: the anchor of a cursor that stops there.
    let at = index === first ? anchor : null;
    let atScore = index === first && anchor !== null ? score : null;
    let more = sizes[index] > offset;
    while (more) {
      if (full()) {
        next = { index, position: [offset, at, atScore] };
        break;
      }
      const want = Math.min(CHUNK, scanLimit - scanned, testsRecords(filter) ? CHUNK : limit - found);
      // One id past the chunk: the anchor of the place after it.
      const { ids, scores } = await readIds(c, segment, offset, want + 1, lines.get(segment.queue));
      const look = ids.slice(0, want);
      const matches = await matching(c, segment.queue, look, filter);
      let taken = look.length;
      const group: string[] = [];
      for (const [i, id] of look.entries()) {
        scanned += 1;
        if (matches[i]) group.push(id);
        if (found + group.length >= limit) {
          taken = i + 1;
          break;
        }
      }
      if (group.length > 0) hits.push({ ...segment, ids: group });
      found += group.length;
      offset += taken;
      at = ids[taken] ?? null;
      atScore = scores[taken] ?? null;
      more = at !== null;
    }
    if (next === null && full()) {
      // The segment ended as the page filled: go on from the start of the next one that holds tasks.
      const rest = sizes.findIndex((size, j) => j > index && size > 0);
      if (rest >= 0) next = { index: rest, position: [0, null, null] };
      break;
    }
  }
  const tasks = await recordsOf(c, hits);
  const nextCursor = next === null ? null : encodeSearchCursor(filter, { ...segments[next.index], total, position: next.position });
  return { tasks, nextCursor, scanned, total };
}

function key(c: RedisConnection, segment: Segment): string {
  return c.keys.queueKey(segment.queue, segment.state);
}

/** Up to `count` ids of a segment from `offset`, in its listing order (as inspect.ts listTasks), with their scores in a zset. */
async function readIds(c: RedisConnection, segment: Segment, offset: number, count: number, lines?: QueuedLines): Promise<{ ids: string[]; scores: (number | null)[] }> {
  const k = key(c, segment);
  if (segment.state === 'queued') return { ids: lines ? await readQueued(c, lines, offset, count) : [], scores: [] };
  const flat = newestFirst(segment.state)
    ? await c.call(() => c.redis.zrevrange(k, offset, offset + count - 1, 'WITHSCORES'))
    : await c.call(() => c.redis.zrange(k, offset, offset + count - 1, 'WITHSCORES'));
  const ids: string[] = [];
  const scores: (number | null)[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    ids.push(flat[i]);
    const n = Number(flat[i + 1]);
    scores.push(Number.isFinite(n) ? n : null);
  }
  return { ids, scores };
}

/** Which of a queue's tasks match the filter (queue and state are the segment's); one round trip when records are tested. */
async function matching(c: RedisConnection, queue: string, ids: string[], filter: TaskFilter): Promise<boolean[]> {
  if (!testsRecords(filter) || ids.length === 0) return ids.map(() => true);
  const pipeline = c.redis.pipeline().hmget(c.keys.queueKey(queue, 'meta'), ...ids);
  const readsPayload = filter.payload.length > 0 || filter.texts.length > 0;
  if (readsPayload) pipeline.hmget(c.keys.queueKey(queue, 'payload'), ...ids);
  const replies = (await c.call(() => pipeline.exec())) ?? [];
  const [metas, payloads] = replies.map(([, value]) => value as (string | null)[]);
  return ids.map((id, i) => {
    const raw = metas?.[i];
    if (raw === null || raw === undefined) return false; // gone since it was listed
    const m = parseStoredObject<StoredMeta>(raw);
    const fields = { id, type: m.t ?? '', createdAt: m.c ?? Number.NaN, lastError: m.le ?? null };
    return matchesFields(fields, filter) && (!readsPayload || (matchesPayload(payloads?.[i], filter.payload) && matchesPayloadText(payloads?.[i], filter.texts)));
  });
}

/** The records of the hits, in order; a task deleted since it matched is left out. */
async function recordsOf(c: RedisConnection, hits: (Segment & { ids: string[] })[]): Promise<TaskRecord[]> {
  const groups = await Promise.all(hits.map((hit) => loadRecords(c, hit.queue, hit.ids, hit.state)));
  return groups.flat();
}

/** `id:`: one lookup, then the other terms. */
async function searchById(c: RedisConnection, id: string, filter: TaskFilter): Promise<TaskSearchPage> {
  const queue = await findQueue(c, id);
  const [task] = queue === null || (filter.queue !== null && filter.queue !== queue) ? [] : await loadRecords(c, queue, [id]);
  if (!task) return { tasks: [], nextCursor: null, scanned: 0, total: 0 };
  const matches = (filter.states === null || filter.states.includes(task.state)) && matchesFields(task, filter) && matchesPayloadValue(task.payload, filter.payload) &&
    matchesPayloadText(task.payload === undefined ? null : JSON.stringify(task.payload), filter.texts);
  return { tasks: matches ? [task] : [], nextCursor: null, scanned: 1, total: 1 };
}
