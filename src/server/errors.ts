/**
 * How the HTTP API fails: every error is `{"error":{"code","message"}}` with a status
 * that fits its stable code. This file is the one place that maps codes to statuses; bad input is
 * always a 4xx, never a 500. Every door answers so: a route's error, Fastify's own (bad URL,
 * limits, content type), no route (404) or a wrong method (405), a store that cannot be reached
 * (503), and what Node's HTTP parser refuses before Fastify sees a request (clientError).
 */
import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isTasklineError, TasklineError, type ErrorCode } from '../core/errors.js';
import { clip, quote } from '../core/validate.js';
import type { RouteTable } from './route.js';

export const HTTP_STATUS: Partial<Record<ErrorCode, number>> = {
  TL_INVALID_ARGUMENT: 400,
  TL_INVALID_OPTION: 400,
  TL_INVALID_REQUEST: 400,
  TL_PAYLOAD_NOT_JSON: 400,
  TL_UNAUTHORIZED: 401,
  TL_FORBIDDEN: 403,
  TL_NOT_FOUND: 404,
  TL_TASK_NOT_FOUND: 404,
  TL_SCHEDULE_NOT_FOUND: 404,
  TL_WORKFLOW_NOT_FOUND: 404,
  TL_METHOD_NOT_ALLOWED: 405,
  TL_REQUEST_TIMEOUT: 408,
  TL_TASK_CONFLICT: 409,
  TL_SCHEDULE_CONFLICT: 409,
  TL_WORKFLOW_CONFLICT: 409,
  TL_WORKFLOW_FAILED: 409,
  TL_INVALID_STATE: 409,
  TL_TASK_FAILED: 409,
  TL_LOCK_NOT_HELD: 409,
  TL_PAYLOAD_TOO_LARGE: 413,
  TL_QUEUE_FULL: 429,
  TL_URI_TOO_LONG: 414,
  TL_VALIDATION_FAILED: 422,
  TL_INVALID_CRON: 422,
  TL_INVALID_TIMEZONE: 422,
  TL_INVALID_SCHEDULE: 422,
  TL_INVALID_WORKFLOW: 422,
  TL_HEADERS_TOO_LARGE: 431,
  TL_NOT_SUPPORTED: 501,
  TL_STORE_UNAVAILABLE: 503,
  TL_CLOSED: 503,
  TL_TIMEOUT: 504,
};

export interface ErrorBody {
  error: { code: string; message: string };
}

/** What error messages may say about this server. */
export interface HttpErrorContext {
  /** How outage messages name the store: `redis 127.0.0.1:6379`, `sqlite`. */
  store: string;
  /** The largest request body, bytes. */
  bodyLimit: number;
  /** The longest path parameter, characters. */
  maxParamLength: number;
}

/** No message is longer, whatever the input (a 1 MB mistake gives a short error). */
const MAX_MESSAGE = 1000;
/** Characters of a URL path shown in a message. */
const MAX_PATH = 100;
/** How long a refused connection may stay open for the client to read the answer. */
const LINGER_MS = 1000;

function shownPath(url: string): string {
  return clip(url.split('?')[0], MAX_PATH);
}

// ── store outages ─────────────────────────────────────────────────────────────

interface Outage {
  reason: string;
  /** `host:port` when the error names it. */
  address: string | null;
  /** The store may answer on the next request (a lock), rather than after a reconnect. */
  busy: boolean;
}

const OUTAGE_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'connection timed out',
  EPIPE: 'connection broken',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

const OUTAGE_MESSAGES: [RegExp, string][] = [
  [/max retries per request/i, 'no connection'],
  [/Connection is closed/, 'the connection is closed'],
  [/Stream isn't writeable/, 'no connection'],
  [/Command timed out/, 'no answer in time'],
  [/^(Redis: )?LOADING\b/, 'Redis is loading its data'],
  [/database connection is not open/, 'the database is closed'],
];

/** The connection-level failure an error (or one of its causes) reports, or null. */
function findOutage(error: unknown): Outage | null {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const { code, address, port } = current as { code?: unknown; address?: unknown; port?: unknown };
    const where = typeof address === 'string' ? `${address}${typeof port === 'number' ? `:${port}` : ''}` : null;
    if (typeof code === 'string') {
      if (code in OUTAGE_CODES) return { reason: OUTAGE_CODES[code], address: where, busy: false };
      if (/^SQLITE_(BUSY|LOCKED)/.test(code)) return { reason: 'the database is locked by another writer', address: null, busy: true };
      if (code.startsWith('SQLITE_CANTOPEN')) return { reason: 'the database file cannot be opened', address: null, busy: false };
      if (code.startsWith('SQLITE_IOERR')) return { reason: 'a disk I/O error', address: null, busy: false };
    }
    if (current.name === 'MaxRetriesPerRequestError') return { reason: 'no connection', address: null, busy: false };
    for (const [pattern, reason] of OUTAGE_MESSAGES) if (pattern.test(current.message)) return { reason, address: where, busy: false };
    current = current.cause;
  }
  return null;
}

/**
 * A store that cannot be reached, said in Taskline's words rather than the driver's ("Reached
 * the max retries per request limit …"): TL_STORE_UNAVAILABLE, 503. Null when the error is not
 * one, or is a Taskline error of another kind (its code already says what happened).
 */
export function storeOutage(error: unknown, store: string): TasklineError | null {
  if (isTasklineError(error) && error.code !== 'TL_STORE_UNAVAILABLE' && error.code !== 'TL_STORE_ERROR') return null;
  const outage = findOutage(error);
  if (!outage) return null;
  const where = outage.address && !store.includes(outage.address) ? `${store} ${outage.address}` : store;
  const message = outage.busy
    ? `the store is busy (${where}): ${outage.reason}; try again`
    : `the store is unreachable (${where}): ${outage.reason}; retrying`;
  return new TasklineError('TL_STORE_UNAVAILABLE', message, { cause: error });
}

// ── Fastify's own errors ──────────────────────────────────────────────────────

/** The body limit of the route a request reached (its own or the server's), or null when it reached none. */
function routeBodyLimit(request: FastifyRequest): number | null {
  try {
    const limit = request.routeOptions.bodyLimit;
    return typeof limit === 'number' && limit > 0 ? limit : null;
  } catch {
    return null;
  }
}

/** `POST /api/v1/workflows`: the route's method and path as declared. */
function routeName(request: FastifyRequest): string {
  const { method, url } = request.routeOptions;
  const shown = typeof url === 'string' ? url : shownPath(request.url);
  return `${typeof method === 'string' ? method : clip(request.method, 20)} ${shown}`;
}

/** Fastify's own request errors (URL, parsing, limits) as Taskline codes. */
function fromFastify(error: FastifyError, request: FastifyRequest | null, context: HttpErrorContext): TasklineError | null {
  const status = error.statusCode ?? 0;
  if (error.code === 'FST_ERR_BAD_URL') {
    const path = request ? shownPath(request.url) : 'the path';
    return new TasklineError('TL_INVALID_REQUEST', `the URL path ${path} has a malformed %-escape: write % as %25 and other bytes as %XX`);
  }
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH' || status === 414) {
    return new TasklineError('TL_URI_TOO_LONG', `a segment of the URL path is longer than ${context.maxParamLength} characters, the longest this server takes`);
  }
  if (status === 413 || error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    const routeLimit = request ? routeBodyLimit(request) : null;
    // A route with its own limit (POST /api/v1/workflows) is named: the server's is not its.
    const limit = routeLimit ?? context.bodyLimit;
    const whose = routeLimit !== null && routeLimit !== context.bodyLimit ? `the limit of ${routeName(request as FastifyRequest)}` : 'the limit of this server';
    return new TasklineError('TL_PAYLOAD_TOO_LARGE', `the request body is larger than ${limit} bytes, ${whose}`);
  }
  if (status === 415 || error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    const sent = request?.headers['content-type'];
    const what = typeof sent === 'string' && sent !== '' ? `unsupported content type ${quote(sent)}` : 'the body has no content type';
    return new TasklineError('TL_INVALID_REQUEST', `${what}: send the body as JSON with Content-Type: application/json`);
  }
  if (error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return new TasklineError('TL_INVALID_REQUEST', 'the body is empty; send a JSON document');
  if (error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return new TasklineError('TL_INVALID_REQUEST', `malformed JSON body: ${clip(error.message, 200)}`);
  }
  // Only Fastify's own refusals are the request's fault: any other error (a SyntaxError from
  // reading a stored value, say) is the server's, never a 400 with its message.
  const fastify = typeof error.code === 'string' && error.code.startsWith('FST_');
  if (fastify && status >= 400 && status < 500) return new TasklineError('TL_INVALID_REQUEST', clip(error.message, 200));
  return null;
}

/** The status and body for any error thrown while serving a request. */
export function describeHttpError(
  error: unknown,
  request: FastifyRequest | null,
  context: HttpErrorContext,
): { status: number; body: ErrorBody; internal: boolean } {
  let known = storeOutage(error, context.store);
  if (!known && isTasklineError(error)) known = error;
  else if (!known && error instanceof Error) known = fromFastify(error as FastifyError, request, context);
  if (known) {
    const status = HTTP_STATUS[known.code];
    return { status: status ?? 500, body: { error: { code: known.code, message: clip(known.message, MAX_MESSAGE) } }, internal: status === undefined };
  }
  return { status: 500, body: { error: { code: 'TL_INTERNAL', message: 'internal server error' } }, internal: true };
}

/** The error handler for routes, and for Fastify's own errors (its `frameworkErrors` option). */
export function createErrorHandler(context: HttpErrorContext): (error: unknown, request: FastifyRequest, reply: FastifyReply) => void {
  return (error, request, reply) => {
    const { status, body, internal } = describeHttpError(error, request, context);
    if (internal) request.log.error({ err: error }, 'request failed');
    else if (status >= 500) request.log.warn({ code: body.error.code }, body.error.message);
    if (body.error.code === 'TL_STORE_UNAVAILABLE') void reply.header('retry-after', '1');
    // A full queue: workers take tasks out every moment; a second is a fair first wait.
    if (body.error.code === 'TL_QUEUE_FULL') void reply.header('retry-after', '1');
    void reply.status(status).send(body);
  };
}

// ── no route: 404, or 405 with Allow ─────────────────────────────────────────

/** A request no route takes: 405 with the path's methods when the path exists, else 404. */
export function unrouted(method: string, url: string, routes: RouteTable): { status: number; body: ErrorBody; allow: string[] } {
  const allow = routes.methodsFor(url);
  const path = shownPath(url);
  const shownMethod = clip(method, 20);
  const error =
    allow.length > 0
      ? new TasklineError('TL_METHOD_NOT_ALLOWED', `${shownMethod} is not allowed on ${path}; allowed: ${allow.join(', ')}`)
      : new TasklineError('TL_NOT_FOUND', `no route ${shownMethod} ${path}`);
  return { status: HTTP_STATUS[error.code] ?? 404, body: { error: { code: error.code, message: error.message } }, allow };
}

export function createNotFoundHandler(routes: RouteTable): (request: FastifyRequest, reply: FastifyReply) => void {
  return (request, reply) => {
    const { status, body, allow } = unrouted(request.method, request.url, routes);
    if (allow.length > 0) void reply.header('allow', allow.join(', '));
    void reply.status(status).send(body);
  };
}

// ── what Node's HTTP parser refuses ───────────────────────────────────────────

/** The request line of a refused request, when the bytes hold one: `FOO /api/v1/tasks HTTP/1.1`. */
function requestLine(raw: Buffer | undefined): { method: string; target: string } | null {
  if (!raw) return null;
  const head = raw.subarray(0, 8192).toString('latin1');
  const match = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\S+) HTTP\/\d\.\d\r?\n/.exec(head);
  return match ? { method: match[1], target: match[2] } : null;
}

/** The answer to a request Node's parser refused: the error's code says why. */
function refusal(error: NodeJS.ErrnoException & { rawPacket?: Buffer; reason?: string }, routes: RouteTable): { status: number; body: ErrorBody; allow: string[] } {
  const answer = (code: ErrorCode, message: string) => ({ status: HTTP_STATUS[code] ?? 400, body: { error: { code, message } }, allow: [] as string[] });
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return answer('TL_REQUEST_TIMEOUT', 'the request did not arrive in time');
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    // The request line counts towards the limit: a line that never ends in it is a long URL.
    const head = error.rawPacket?.subarray(0, maxHeaderSize).toString('latin1') ?? '';
    if (/^[A-Za-z]+ \//.test(head) && !/\r?\n/.test(head.slice(0, maxHeaderSize / 2))) {
      return answer('TL_URI_TOO_LONG', `the request URL is too long: the request line and headers may have at most ${maxHeaderSize} bytes`);
    }
    return answer('TL_HEADERS_TOO_LARGE', `the request headers are larger than ${maxHeaderSize} bytes, the limit of this server`);
  }
  if (error.code === 'HPE_INVALID_METHOD') {
    const line = requestLine(error.rawPacket);
    if (line) return unrouted(line.method, line.target, routes);
  }
  const why = typeof error.reason === 'string' ? `: ${clip(error.reason, 100).toLowerCase()}` : '';
  return answer('TL_INVALID_REQUEST', `malformed HTTP request${why}`);
}

/**
 * Fastify's `clientErrorHandler`: Node's parser refused the bytes (headers too large, an unknown
 * method, a malformed request line), so there is no request to reply to. Writes a complete
 * HTTP/1.1 answer in the error shape to the socket and closes it; the client gets a moment to
 * read the answer before the socket is destroyed.
 */
export function createClientErrorHandler(routes: RouteTable): (error: Error, socket: Duplex) => void {
  const answered = new WeakSet<Duplex>();
  return (error, socket) => {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ECONNRESET' || socket.destroyed) return;
    // The parser goes on refusing the rest of what the client sends; answer once.
    if (answered.has(socket)) return;
    answered.add(socket);
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    const { status, body, allow } = refusal(error, routes);
    const json = JSON.stringify(body);
    const head = [
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
      'Content-Type: application/json',
      `Content-Length: ${Buffer.byteLength(json)}`,
      'Connection: close',
      ...(allow.length > 0 ? [`Allow: ${allow.join(', ')}`] : []),
    ];
    socket.end(`${head.join('\r\n')}\r\n\r\n${json}`);
    const linger = setTimeout(() => socket.destroy(), LINGER_MS);
    linger.unref();
    socket.once('close', () => clearTimeout(linger));
  };
}
