/**
 * The audit log of mutating calls: every request to an `admin` route (the API's writes) is
 * recorded in the store once its answer is sent — when, which token, the method, the route
 * pattern, its target (the path's id, queue or type), the status, the error code, and its detail:
 * every path parameter and, for the calls that name what they act on in the body, a whitelisted
 * summary of it (BODY_DETAIL). Refused calls (403, 400 …) are recorded too, but not those that
 * failed authentication (401: no token, or one that is not configured): anyone who can reach the
 * server could send those, and a flood of them would push the operators' trail out of the
 * entries kept. Recording never fails or delays a request: a write that fails is logged and
 * counted (`taskline_audit_write_failures_total`).
 *
 * Times are the host's clock, as everywhere in the task center's answers (bulk jobs, events).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Counter, type Registry } from 'prom-client';
import type { AuditDetail, AuditEntry, AuditToken, Backend } from '../backend/contract.js';
import type { Auth } from './auth.js';
import type { AnyRoute } from './route.js';

export interface AuditOptions {
  auth: Auth;
  backend: Backend;
  /** The API's routes: those with access `admin` are audited. */
  routes: AnyRoute[];
  registry: Registry;
}

/** Path parameters that name what a call acts on, in the order looked for. */
const TARGETS = ['id', 'queue', 'type'] as const;

/** The body members recorded in an entry's detail, by route: those that name what the call acts on. */
const BODY_DETAIL: Record<string, readonly string[]> = {
  'POST /api/v1/bulk': ['action', 'q', 'dryRun'],
  'POST /api/v1/schedules': ['id'],
  'POST /api/v1/schedules/:id/backfill': ['from', 'to'],
  'POST /api/v1/workflows': ['id', 'name'],
};

/** The path parameters, then the route's whitelisted body members (scalars only); null for none. */
function detailOf(request: FastifyRequest): AuditDetail | null {
  const detail: AuditDetail = {};
  for (const [name, value] of Object.entries((request.params ?? {}) as Record<string, unknown>)) {
    if (typeof value === 'string') detail[name] = value;
  }
  const body = request.body as Record<string, unknown> | null | undefined;
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    for (const name of BODY_DETAIL[`${request.method} ${request.routeOptions.url ?? ''}`] ?? []) {
      const value = body[name];
      if (Object.hasOwn(detail, name) || !Object.hasOwn(body, name)) continue;
      if (value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) detail[name] = value;
    }
  }
  return Object.keys(detail).length === 0 ? null : detail;
}

/** A route as the OpenAPI document and `GET /api/v1` write it: `/api/v1/tasks/{id}/run`. */
function routePattern(url: string): string {
  return url.replace(/:([A-Za-z_]+)/g, '{$1}');
}

function tokenKind(auth: Auth, request: FastifyRequest): AuditToken {
  const token = auth.tokenOf(request);
  return token === 'admin' || token === 'read' ? token : 'none';
}

/** The `code` of an error answer `{"error":{"code":…}}`, or null. */
function errorCode(payload: unknown): string | null {
  if (typeof payload !== 'string') return null;
  try {
    const code = (JSON.parse(payload) as { error?: { code?: unknown } } | null)?.error?.code;
    return typeof code === 'string' ? code : null;
  } catch {
    return null;
  }
}

export function registerAudit(app: FastifyInstance, options: AuditOptions): void {
  const audited = new Set(options.routes.filter((r) => r.access === 'admin').map((r) => `${r.method} ${r.url}`));
  const isAudited = (request: FastifyRequest) => request.routeOptions.url !== undefined && audited.has(`${request.method} ${request.routeOptions.url}`);
  const name = 'taskline_audit_write_failures_total';
  const failures =
    (options.registry.getSingleMetric(name) as Counter | undefined) ??
    new Counter({ name, help: 'Audit log entries the task center could not write to the store (the calls themselves were answered)', registers: [options.registry] });
  const codes = new WeakMap<FastifyRequest, string>();
  const pending = new Set<Promise<void>>();

  app.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode >= 400 && isAudited(request)) {
      const code = errorCode(payload);
      if (code !== null) codes.set(request, code);
    }
    return payload;
  });
  app.addHook('onResponse', async (request: FastifyRequest, reply: FastifyReply) => {
    // A call that failed authentication is not recorded (see the top of this file).
    if (!isAudited(request) || reply.statusCode === 401) return;
    const params = (request.params ?? {}) as Record<string, unknown>;
    const target = TARGETS.map((name) => params[name]).find((value): value is string => typeof value === 'string') ?? null;
    const entry: AuditEntry = {
      at: Math.round(Date.now() - reply.elapsedTime),
      token: tokenKind(options.auth, request),
      method: request.method,
      route: routePattern(request.routeOptions.url ?? request.url),
      target,
      status: reply.statusCode,
      code: codes.get(request) ?? null,
      detail: detailOf(request),
    };
    const write = options.backend.recordAudit(entry).catch((error: unknown) => {
      failures.inc();
      request.log.warn({ err: error, audit: entry }, 'the audit log entry of this call could not be written');
    });
    pending.add(write);
    await write;
    pending.delete(write);
  });
  // Writes still in flight finish before the store is closed.
  app.addHook('onClose', async () => {
    await Promise.all(pending);
  });
}
