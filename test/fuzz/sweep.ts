/**
 * After the fuzz: the store must still read cleanly. Every listing answers 200 and fits its
 * schema — queues, stats, schedules and their fires, each queue's tasks in every state paged
 * through to the end — and so does each task and schedule listed, and each id the server handed
 * out (or 404, once deleted). A failing read names the requests that made or changed the thing.
 */
import type { FastifyInstance } from 'fastify';
import { answerProblems, parseJson } from './check.js';
import { matchOperation, type Operation } from './openapi.js';
import type { Finding } from './report.js';
import { encodeSegment, type Wire } from './request.js';
import { finding } from './run.js';
import { send } from './send.js';
import type { World } from './world.js';

/** The largest page; pages past this many per listing mean the cursor never ends. */
const PAGE = 200;
const MAX_PAGES = 2_000;
/** Task reads in flight at once. */
const PARALLEL = 8;

export interface SweepResult {
  findings: Finding[];
  queues: number;
  schedules: number;
  tasks: number;
  requests: number;
}

export async function sweep(app: FastifyInstance, operations: Operation[], world: World): Promise<SweepResult> {
  const result: SweepResult = { findings: [], queues: 0, schedules: 0, tasks: 0, requests: 0 };
  /** GETs a URL; returns its JSON body when it answered 200 with no problem. `about`: what `world.touchedBy` knows of it. */
  const get = async (url: string, allowed: number[] = [200], about?: string): Promise<Record<string, unknown> | null> => {
    const wire: Wire = { method: 'GET', url, headers: {} };
    result.requests += 1;
    const answer = await send(app, wire);
    const op = matchOperation(operations, 'GET', url);
    // A stored id that is a dot segment reaches no route: name the read that was meant.
    const route = op?.route ?? `GET ${about?.startsWith('task:') ? '/api/v1/tasks/{id}' : about?.startsWith('schedule:') ? '/api/v1/schedules/{id}' : url} (reached no route)`;
    const problems = answerProblems(op, 'GET', answer);
    if (problems.length === 0 && !allowed.includes(answer.status)) problems.push(`read-back answered ${answer.status}, not ${allowed.join(' or ')}`);
    if (problems.length > 0) {
      result.findings.push({ ...finding('sweep', route, wire, answer, problems.join('; ')), touchedBy: about === undefined ? undefined : world.touchedBy.get(about) });
    }
    const parsed = parseJson(answer.body);
    return problems.length === 0 && answer.status === 200 && parsed.ok ? (parsed.value as Record<string, unknown>) : null;
  };
  const states = (operations.find((op) => op.route === 'GET /api/v1/queues/{queue}/tasks')?.parameters.find((p) => p.name === 'state')?.schema.enum ?? []) as string[];

  for (const url of ['/api/v1/stats', '/api/v1/workers', '/api/v1/schedulers', '/healthz', '/readyz']) await get(url);

  // Each schedule listed must read; each one handed out must read or be gone (and is read one
  // by one even when the listing fails, to find the one that breaks it).
  const schedules = new Map<string, number[]>();
  for (const { id } of ((await get('/api/v1/schedules'))?.schedules ?? []) as { id: string }[]) schedules.set(id, [200]);
  result.schedules = schedules.size;
  for (const id of world.everyScheduleId) if (!schedules.has(id)) schedules.set(id, [200, 404]);
  for (const [id, allowed] of schedules) {
    const schedule = await get(`/api/v1/schedules/${encodeSegment(id)}`, allowed, `schedule:${id}`);
    if (schedule) await get(`/api/v1/schedules/${encodeSegment(id)}/fires?limit=1000`, [200], `schedule:${id}`);
  }

  const listed = new Set<string>();
  const queueList = ((await get('/api/v1/queues'))?.queues ?? null) as { name: string }[] | null;
  const queues = queueList ?? world.queues.map((name) => ({ name }));
  result.queues = queueList?.length ?? 0;
  for (const { name } of queues) {
    const queue = encodeSegment(name);
    await get(`/api/v1/queues/${queue}`);
    for (const state of states) {
      const seen = new Set<string>();
      let cursor: string | null = null;
      for (let page = 0; page < MAX_PAGES; page++) {
        const url = `/api/v1/queues/${queue}/tasks?state=${state}&limit=${PAGE}${cursor === null ? '' : `&cursor=${encodeSegment(cursor)}`}`;
        const body = await get(url);
        if (!body) break;
        for (const task of body.tasks as { id: string }[]) listed.add(task.id);
        cursor = body.next_cursor as string | null;
        if (cursor === null) break;
        if (seen.has(cursor)) {
          result.findings.push(finding('sweep', 'GET /api/v1/queues/{queue}/tasks', { method: 'GET', url, headers: {} }, { status: 200, contentType: '', body: `next_cursor ${cursor} again`, ms: 0, timedOut: false, refused: null }, 'the cursor loops'));
          break;
        }
        seen.add(cursor);
      }
    }
  }
  result.tasks = listed.size;

  const reads: [string, number[]][] = [...listed].map((id) => [id, [200]]);
  for (const id of world.everyTaskId) if (!listed.has(id)) reads.push([id, [200, 404]]);
  for (let i = 0; i < reads.length; i += PARALLEL) {
    await Promise.all(reads.slice(i, i + PARALLEL).map(([id, allowed]) => get(`/api/v1/tasks/${encodeSegment(id)}`, allowed, `task:${id}`)));
  }
  return result;
}
