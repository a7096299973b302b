/**
 * The fuzz loop: pick an operation, build a valid request for it, mutate about half, send it,
 * check the answer, learn ids and cursors from it. One seed, one sequence of requests.
 */
import type { FastifyInstance } from 'fastify';
import { answerProblems, parseJson } from './check.js';
import type { GenContext } from './generate.js';
import { mutate } from './mutate.js';
import { matchOperation, requestPath, type Operation } from './openapi.js';
import { printable, type Finding } from './report.js';
import { decodeSafely, toWire, validRequest, type FuzzRequest, type Wire } from './request.js';
import { Rng } from './rng.js';
import { send, type Answer } from './send.js';
import { World } from './world.js';

export interface FuzzOptions {
  seed: number;
  requests: number;
  /** The open server (no tokens). */
  app: FastifyInstance;
  /** A server with tokens on the same store: requests with a bad Authorization header go there half the time. */
  guarded: FastifyInstance;
  operations: Operation[];
}

export interface RouteStats {
  sent: number;
  ok: number;
  statuses: Map<number, number>;
}

export interface FuzzRun {
  findings: Finding[];
  world: World;
  /** Per operation reached (or `(no route) METHOD`). */
  routes: Map<string, RouteStats>;
  /** Statuses an operation answered that its OpenAPI entry does not list. */
  undocumented: Map<string, Set<number>>;
  /** Requests inject itself refused, by its message: how many, and the first one's URL. */
  refused: Map<string, { count: number; url: string }>;
  ms: number;
}

/** How often each operation is picked: creating things first makes later requests reach deeper. */
function weight(op: Operation): number {
  if (op.route === 'POST /api/v1/tasks' || op.route === 'POST /api/v1/tasks/{type}') return 4;
  if (op.route === 'POST /api/v1/schedules') return 3;
  if (op.route === 'GET /api/v1/queues/{queue}/tasks') return 2;
  if (op.path === '/api/v1/events' || op.path === '/healthz' || op.path === '/readyz') return 0.3;
  return 1;
}

/** One line naming a request: index, method, URL and body, each clipped. */
export function describe(index: number, wire: Wire): string {
  const body = wire.payload === undefined ? '' : typeof wire.payload === 'string' ? wire.payload : wire.payload.toString('latin1');
  const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}…` : text);
  return `#${index} ${wire.method} ${clip(printable(wire.url), 200)}${body ? ` ${clip(printable(body), 200)}` : ''}`;
}

export function finding(index: Finding['index'], route: string, wire: Wire, answer: Answer, problem: string): Finding {
  const body = wire.payload === undefined ? '' : typeof wire.payload === 'string' ? wire.payload : wire.payload.toString('latin1');
  return { index, route, method: wire.method, url: wire.url, body, headers: wire.headers, status: answer.status, response: answer.body, problem };
}

export async function fuzz(options: FuzzOptions): Promise<FuzzRun> {
  const rng = new Rng(options.seed);
  const world = new World(rng, Date.now());
  const choices = options.operations.map((op) => [weight(op), op] as const);
  const run: FuzzRun = { findings: [], world, routes: new Map(), undocumented: new Map(), refused: new Map(), ms: 0 };
  const started = performance.now();
  let previous: { request: FuzzRequest; wire: Wire } | null = null;
  for (let index = 0; index < options.requests; index++) {
    let request: FuzzRequest;
    let wire: Wire;
    if (previous && rng.chance(0.03)) {
      // The same request again: a create that now conflicts, a delete of what is gone.
      ({ request, wire } = previous);
    } else {
      const op = rng.weighted(choices);
      const ctx: GenContext = { rng, world, op };
      request = validRequest(op, ctx);
      if (rng.chance(0.5)) mutate(request, op, ctx);
      wire = toWire(request);
    }
    previous = { request, wire };
    const guarded = wire.headers.authorization !== undefined && rng.chance(0.5);
    const answer = await send(guarded ? options.guarded : options.app, wire);
    if (answer.refused !== null) {
      const seen = run.refused.get(answer.refused) ?? { count: 0, url: wire.url };
      run.refused.set(answer.refused, { ...seen, count: seen.count + 1 });
      continue;
    }
    const reached = matchOperation(options.operations, wire.method, wire.url);
    const route = reached?.route ?? `(no route) ${wire.method}`;
    const problems = answerProblems(reached, wire.method, answer);
    const ok = answer.status >= 200 && answer.status < 300;
    const path = requestPath(wire.url);
    if (guarded && ok && (path.startsWith('/api/') || path === '/metrics')) problems.push(`a bad token was let through (${answer.status})`);
    if (problems.length > 0) run.findings.push({ ...finding(index, route, wire, answer, problems.join('; ')), mutations: request.mutations });

    const stats = run.routes.get(route) ?? { sent: 0, ok: 0, statuses: new Map<number, number>() };
    stats.sent += 1;
    if (ok) stats.ok += 1;
    stats.statuses.set(answer.status, (stats.statuses.get(answer.status) ?? 0) + 1);
    run.routes.set(route, stats);
    if (reached && !reached.responses.has(answer.status) && answer.status !== 404 && wire.method !== 'HEAD') {
      run.undocumented.set(route, (run.undocumented.get(route) ?? new Set()).add(answer.status));
    }
    if (ok && !guarded && reached) {
      const parsed = parseJson(answer.body);
      const search = wire.url.includes('?') ? wire.url.slice(wire.url.indexOf('?') + 1) : '';
      const queue = decodeSafely(path.split('/')[4] ?? '');
      if (parsed.ok) world.learn(reached.route, new URLSearchParams(search), queue, parsed.value, describe(index, wire));
    }
  }
  run.ms = performance.now() - started;
  return run;
}
