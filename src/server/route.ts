/**
 * One route = one declaration: method, path, access, zod schemas for params, query and body, and
 * the handler. The same schemas validate each request (before the handler runs) and describe the
 * route in the OpenAPI document (openapi.ts), so the two cannot drift apart.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z, ZodOptional, ZodUnion, type ZodTypeAny } from 'zod';
import { TasklineError } from '../core/errors.js';
import type { Access, Auth } from './auth.js';
import { chooseBranch, describeInvalidInput } from './invalid-input.js';

export interface RouteResponse {
  description: string;
  schema?: ZodTypeAny;
  /** Media type when not JSON (SSE, Prometheus text). */
  mediaType?: string;
}

export interface RouteSpec<P extends ZodTypeAny = ZodTypeAny, Q extends ZodTypeAny = ZodTypeAny, B extends ZodTypeAny = ZodTypeAny> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Fastify path, e.g. `/api/v1/tasks/:id`. */
  url: string;
  summary: string;
  tag: string;
  access: Access;
  params?: P;
  query?: Q;
  body?: B;
  responses: Record<number, RouteResponse>;
  /** Bytes this route's body may have, when not the server's limit. */
  bodyLimit?: number;
  handler: (input: { params: z.infer<P>; query: z.infer<Q>; body: z.infer<B>; request: FastifyRequest; reply: FastifyReply }) => Promise<unknown>;
}

export type AnyRoute = RouteSpec<ZodTypeAny, ZodTypeAny, ZodTypeAny>;

/** Keeps the generic types of a route declaration (for inference) while storing it untyped. */
export function defineRoute<P extends ZodTypeAny, Q extends ZodTypeAny, B extends ZodTypeAny>(spec: RouteSpec<P, Q, B>): AnyRoute {
  return spec as unknown as AnyRoute;
}

/**
 * Parses a value with a schema; a mismatch is TL_INVALID_REQUEST naming each wrong field and
 * what it accepts (invalid-input.ts). A union of objects (a task or `{tasks:[…]}`) is parsed as
 * the branch the value meant, so the errors are that branch's and not zod's "Invalid input".
 * `where` names the input in messages: `body`, `query`, `path`, or a field such as `path.state`.
 */
export function parseInput<T extends ZodTypeAny>(schema: T, value: unknown, where: string): z.infer<T> {
  let meant: ZodTypeAny = schema;
  const outer = schema instanceof ZodOptional && value !== undefined ? (schema.unwrap() as ZodTypeAny) : schema;
  if (outer instanceof ZodUnion) {
    const branch = chooseBranch(outer, value);
    if (branch !== null) meant = outer.options[branch] as ZodTypeAny;
  }
  const result = meant.safeParse(value);
  if (result.success) return result.data as z.infer<T>;
  throw new TasklineError('TL_INVALID_REQUEST', describeInvalidInput(result.error, meant, value, where), { details: result.error.issues.slice(0, 20) });
}

export function registerRoutes(app: FastifyInstance, auth: Auth, routes: AnyRoute[]): void {
  for (const route of routes) {
    app.route({
      method: route.method,
      url: route.url,
      ...(route.bodyLimit === undefined ? {} : { bodyLimit: route.bodyLimit }),
      handler: async (request, reply) => {
        auth.check(request, route.access);
        const params = route.params ? parseInput(route.params, request.params, 'path') : {};
        const query = route.query ? parseInput(route.query, request.query ?? {}, 'query') : {};
        const body = route.body ? parseInput(route.body, request.body, 'body') : undefined;
        const result = await route.handler({ params, query, body, request, reply });
        // A handler that sent the reply itself (SSE, text) returns the reply.
        if (result === reply) return reply;
        return result;
      },
    });
  }
}

/**
 * The methods each registered path answers (fed by Fastify's onRoute hook), so that a request
 * no route takes can be told apart: a known path with another method is a 405 with `Allow`,
 * an unknown path a 404.
 */
export class RouteTable {
  private readonly paths: { segments: string[]; methods: Set<string> }[] = [];

  add(methods: string | string[], url: string): void {
    const segments = url.split('/');
    let entry = this.paths.find((p) => p.segments.join('/') === segments.join('/'));
    if (!entry) {
      entry = { segments, methods: new Set() };
      this.paths.push(entry);
    }
    for (const method of Array.isArray(methods) ? methods : [methods]) {
      entry.methods.add(method);
      if (method === 'GET') entry.methods.add('HEAD');
    }
  }

  /** The methods some route takes on this path (as sent, without the query), sorted; [] when none. */
  methodsFor(path: string): string[] {
    const segments = path.split('?')[0].split('/');
    const methods = new Set<string>();
    for (const entry of this.paths) {
      if (matches(entry.segments, segments)) for (const method of entry.methods) methods.add(method);
    }
    return [...methods].sort();
  }
}

/** find-my-way's matching for the patterns the routes use: static segments, `:param`, a trailing `*`. */
function matches(pattern: string[], segments: string[]): boolean {
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === '*') return true;
    if (i >= segments.length) return false;
    if (!pattern[i].startsWith(':') && pattern[i] !== segments[i]) return false;
  }
  return pattern.length === segments.length;
}
