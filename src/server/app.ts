/**
 * The task center's HTTP API as a Fastify instance: routes/ (one file per resource),
 * auth, SSE, metrics, health and the OpenAPI document. `buildServer` makes the instance without
 * listening, so tests drive it in-process with `inject()`; `taskline server` listens.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { Registry } from 'prom-client';
import type { Backend, SchedulingBackend } from '../backend/contract.js';
import { Client } from '../client/client.js';
import { DEFAULT_MAX_PAYLOAD_BYTES } from '../core/options.js';
import { ScheduleService } from '../scheduler/service.js';
import { registerAudit } from './audit.js';
import { Auth, openModeGuard, type AuthOptions } from './auth.js';
import { BulkJobs } from './bulk-jobs.js';
import type { ServerContext } from './context.js';
import { registerDashboard } from './dashboard.js';
import { createClientErrorHandler, createErrorHandler, createNotFoundHandler, type HttpErrorContext } from './errors.js';
import { EventHub } from './events.js';
import { healthRoutes } from './health.js';
import { instrumentTaskCenter, type TaskCenterMetrics } from './metrics.js';
import { openApiDocument } from './openapi.js';
import { registerRoutes, RouteTable, type AnyRoute } from './route.js';
import { auditRoutes } from './routes/audit.js';
import { bulkRoutes } from './routes/bulk.js';
import { eventRoutes } from './routes/events.js';
import { queueRoutes } from './routes/queues.js';
import { schedulerRoutes } from './routes/schedulers.js';
import { scheduleRoutes } from './routes/schedules.js';
import { searchRoutes } from './routes/search.js';
import { taskRoutes } from './routes/tasks.js';
import { indexRoutes } from './routes/api-index.js';
import { typeRoutes } from './routes/types.js';
import { workerRoutes } from './routes/workers.js';
import { workflowRoutes } from './routes/workflows.js';
import { SseStreams, type SseOptions } from './sse.js';

export interface ServerOptions extends AuthOptions {
  backend: Backend;
  /** Largest request body, bytes. Default: the largest payload (1 MiB) + 64 KiB. */
  bodyLimit?: number;
  /** Largest task payload, bytes of JSON. Default 1 MiB. */
  maxPayloadBytes?: number;
  /** A pino logger, or Fastify's logger setting. Default false (no request logs). */
  logger?: FastifyServerOptions['logger'] | FastifyBaseLogger;
  /** Metrics registry; pass the worker's to serve both on one port (`taskline dev`). Default: a new one. */
  registry?: Registry;
  /**
   * Where the store is, without credentials (`127.0.0.1:6379`, a database file: what
   * `storeLocation` makes of a backend URL), named when it cannot be reached:
   * "the store is unreachable (redis 127.0.0.1:6379): …". Default: the address the error names, if any.
   */
  storeAddress?: string;
  sse?: SseOptions;
  /** The built dashboard's files; default: dist/dashboard/ (null serves a page saying to build it). */
  dashboardDirectory?: string | null;
  /**
   * Without a token, the Host names answered besides loopback ones ('any': every one). Default
   * none: see auth.ts openModeGuard. Ignored when a token is configured.
   */
  openHosts?: readonly string[] | 'any';
}

export interface TaskCenterServer {
  app: FastifyInstance;
  hub: EventHub;
  registry: Registry;
  metrics: TaskCenterMetrics;
  auth: Auth;
  routes: AnyRoute[];
}

function hasSchedules(backend: Backend): backend is SchedulingBackend {
  const b = backend as Partial<SchedulingBackend>;
  return typeof b.createSchedule === 'function' && typeof b.listFires === 'function' && typeof b.fire === 'function';
}

/** The longest path parameter (ids and types travel in the path); longer is a 414. */
const MAX_PARAM_LENGTH = 500;

/** Builds the API; the store subscription starts with `app.ready()` and ends with `app.close()`. */
export async function buildServer(options: ServerOptions): Promise<TaskCenterServer> {
  const maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
  const logger = options.logger ?? false;
  const isInstance = typeof logger === 'object' && typeof (logger as { child?: unknown }).child === 'function';
  const errorContext: HttpErrorContext = {
    store: options.storeAddress ? `${options.backend.kind} ${options.storeAddress}` : options.backend.kind,
    bodyLimit: options.bodyLimit ?? maxPayloadBytes + 64 * 1024,
    maxParamLength: MAX_PARAM_LENGTH,
  };
  const errorHandler = createErrorHandler(errorContext);
  // Every path and its methods, for 405 answers (and Allow) to requests no route takes.
  const routeTable = new RouteTable();
  const app = Fastify({
    ...(isInstance ? { loggerInstance: logger as FastifyBaseLogger } : { logger }),
    bodyLimit: errorContext.bodyLimit,
    // Keep the characters of ids and types as sent.
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // HEAD answers on every GET route, with the headers a GET would get.
    exposeHeadRoutes: true,
    // A bad %-escape in the URL or a path parameter too long: Fastify's errors, in our shape.
    frameworkErrors: errorHandler,
    // What Node's HTTP parser refuses (headers too large, an unknown method) never reaches Fastify.
    clientErrorHandler: createClientErrorHandler(routeTable),
    logController: new LogController({ disableRequestLogging: options.logger === undefined || options.logger === false }),
  });
  app.addHook('onRoute', (route) => routeTable.add(route.method, route.url));
  const auth = new Auth(options);
  const hub = new EventHub(options.backend);
  const registry = options.registry ?? new Registry();
  const metrics = instrumentTaskCenter(registry, options.backend, hub);
  const streams = new SseStreams();
  const ctx: ServerContext = {
    backend: options.backend,
    client: new Client(options.backend, { maxPayloadBytes, checkRecordedTypes: true }),
    hub,
    schedules: hasSchedules(options.backend) ? new ScheduleService(options.backend, { checkRecordedTypes: true }) : null,
  };

  app.setErrorHandler(errorHandler);
  // Open mode (no token): only requests addressed to loopback, changes only from its own origin.
  if (!auth.enabled) {
    const openHosts = options.openHosts ?? [];
    app.addHook('onRequest', async (request) => openModeGuard(request, openHosts));
  }
  app.setNotFoundHandler(createNotFoundHandler(routeTable));
  // JSON only: without Fastify's text/plain parser, any other body is refused with the type to send.
  app.removeAllContentTypeParsers();
  // A POST without a body (run, pause …) may still say application/json.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (error) {
      done(Object.assign(error as Error, { statusCode: 400, code: 'FST_ERR_CTP_INVALID_JSON_BODY' }), undefined);
    }
  });

  const bulkJobs = new BulkJobs(options.backend);
  const routes: AnyRoute[] = [
    ...indexRoutes(() => routes, auth),
    ...taskRoutes(ctx),
    ...workflowRoutes(ctx),
    ...searchRoutes(ctx),
    ...bulkRoutes(bulkJobs),
    ...auditRoutes(ctx),
    ...queueRoutes(ctx),
    ...scheduleRoutes(ctx),
    ...schedulerRoutes(ctx),
    ...workerRoutes(ctx),
    ...typeRoutes(ctx),
    ...eventRoutes(ctx, streams, options.sse ?? {}),
    ...healthRoutes(options.backend, errorContext.store),
  ];
  registerRoutes(app, auth, routes);
  registerAudit(app, { auth, backend: options.backend, routes, registry });

  app.get('/metrics', async (request, reply) => {
    auth.check(request, 'read');
    const text = await registry.metrics();
    return reply.type(registry.contentType).send(text);
  });
  const document = openApiDocument(routes, auth.enabled);
  app.get('/openapi.json', async () => document);
  registerDashboard(app, options.dashboardDirectory);

  app.addHook('onReady', async () => {
    await hub.start();
  });
  app.addHook('preClose', async () => {
    streams.endAll();
  });
  app.addHook('onClose', async () => {
    await bulkJobs.stop();
    await hub.stop();
    await ctx.client.close();
  });
  return { app, hub, registry, metrics, auth, routes };
}
