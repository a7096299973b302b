/**
 * Bearer-token auth: an admin token may do everything, a read-only token may only
 * read. Tokens are compared in constant time (SHA-256 digests of equal length through
 * crypto.timingSafeEqual, so neither the content nor the length leaks). With no token
 * configured every request is allowed — and the server binds to loopback only (bindAddress),
 * and answers only requests addressed to a loopback name (openModeGuard): a web page on another
 * origin whose DNS name rebinds to 127.0.0.1 sends its own name as Host, and a page that posts
 * across origins sends its Origin.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { TasklineError } from '../core/errors.js';

/** What a route needs: `public` (health, OpenAPI), `read` or `admin`. */
export type Access = 'public' | 'read' | 'admin';

export interface AuthOptions {
  /** Admin bearer token (TASKLINE_API_TOKEN). Default: none. */
  apiToken?: string;
  /** Read-only bearer token (TASKLINE_READ_TOKEN). Default: none. */
  readToken?: string;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

function same(a: Buffer, b: Buffer): boolean {
  return timingSafeEqual(a, b);
}

export class Auth {
  private readonly admin: Buffer | null;
  private readonly read: Buffer | null;

  constructor(options: AuthOptions) {
    this.admin = options.apiToken ? digest(options.apiToken) : null;
    this.read = options.readToken ? digest(options.readToken) : null;
  }

  /** True when at least one token is configured. */
  get enabled(): boolean {
    return this.admin !== null || this.read !== null;
  }

  /**
   * Which token the request carries: `admin`, `read`, `invalid` (one no configured token
   * matches), `missing`, or `open` when no token is configured (everything is allowed).
   */
  tokenOf(request: FastifyRequest): 'admin' | 'read' | 'invalid' | 'missing' | 'open' {
    if (!this.enabled) return 'open';
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) return 'missing';
    const given = digest(match[1]);
    // Both comparisons always run, so timing does not tell which token matched.
    const isAdmin = this.admin !== null && same(given, this.admin);
    const isRead = this.read !== null && same(given, this.read);
    return isAdmin ? 'admin' : isRead ? 'read' : 'invalid';
  }

  /** Throws TL_UNAUTHORIZED (no or unknown token) or TL_FORBIDDEN (read token on a write). */
  check(request: FastifyRequest, access: Access): void {
    if (access === 'public') return;
    const token = this.tokenOf(request);
    if (token === 'open' || token === 'admin') return;
    if (token === 'missing') throw new TasklineError('TL_UNAUTHORIZED', 'this route needs a bearer token: Authorization: Bearer <token>');
    if (token === 'invalid') throw new TasklineError('TL_UNAUTHORIZED', 'the bearer token is not valid');
    if (access === 'admin') throw new TasklineError('TL_FORBIDDEN', 'the read-only token cannot change anything; use the admin token');
  }
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost', '::ffff:127.0.0.1']);

export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || /^127\./.test(host);
}

/**
 * Where to listen: without a token only loopback is allowed (a host given explicitly that is not
 * loopback is refused unless `insecure`); returns the host and a note to log.
 */
export function bindAddress(options: { host?: string; auth: Auth; insecure: boolean }): { host: string; note: string | null } {
  if (options.auth.enabled) return { host: options.host ?? '0.0.0.0', note: null };
  if (options.host === undefined) {
    return { host: '127.0.0.1', note: 'no API token configured (TASKLINE_API_TOKEN): listening on 127.0.0.1 only' };
  }
  if (isLoopback(options.host)) return { host: options.host, note: 'no API token configured: the API is open to local users' };
  if (options.insecure) {
    return { host: options.host, note: `--insecure: listening on ${options.host} WITHOUT authentication; anyone who can reach it can change tasks and schedules` };
  }
  throw new TasklineError(
    'TL_INVALID_CONFIG',
    `refusing to listen on ${options.host} without an API token: set TASKLINE_API_TOKEN (and optionally TASKLINE_READ_TOKEN), bind 127.0.0.1, or pass --insecure`,
    { details: { setting: '--host', source: 'flag' } },
  );
}

/** A strict loopback name or address as a Host names it: localhost, 127.a.b.c, ::1 (and the IPv4-mapped one). */
function isLoopbackName(name: string): boolean {
  return name === 'localhost' || name === '::1' || name === '::ffff:127.0.0.1' || /^127(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/.test(name);
}

/** A Host header (or URL host) as [name, port]: `[::1]:8080` → ['::1', '8080'], `localhost` → ['localhost', default]. */
function splitHost(host: string, defaultPort: string): [string, string] {
  const match = /^(?:\[([^\]]*)\]|([^:]*))(?::(\d*))?$/.exec(host.trim().toLowerCase());
  if (!match) return [host.toLowerCase(), defaultPort];
  return [match[1] ?? match[2], match[3] || defaultPort];
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Without a token (auth not enabled): refuses a request whose Host is not a loopback name —
 * unless it is one of `allowedHosts` ('any': every Host, for `--insecure` on every interface) —
 * and a state-changing one whose Origin is present and not this server's own. Throws TL_FORBIDDEN.
 */
export function openModeGuard(request: FastifyRequest, allowedHosts: readonly string[] | 'any' = []): void {
  const host = request.headers.host;
  if (host === undefined) return; // HTTP/1.0 without Host: not a browser
  const [name, port] = splitHost(host, '80');
  if (allowedHosts !== 'any' && !isLoopbackName(name) && !allowedHosts.includes(name)) {
    throw new TasklineError(
      'TL_FORBIDDEN',
      `refusing a request for Host ${JSON.stringify(host)}: without an API token the task center answers only requests addressed to a loopback name (a page on another site could otherwise reach it through DNS rebinding); use http://127.0.0.1:<port> or http://localhost:<port>, or set TASKLINE_API_TOKEN`,
    );
  }
  const origin = request.headers.origin;
  if (origin === undefined || SAFE_METHODS.has(request.method)) return;
  let own = false;
  try {
    const url = new URL(origin);
    const [originName, originPort] = splitHost(url.host, url.protocol === 'https:' ? '443' : '80');
    own = (url.protocol === 'http:' || url.protocol === 'https:') && originName === name && originPort === port;
  } catch {
    own = false; // `null` (a sandboxed page, a file) or junk
  }
  if (!own) {
    throw new TasklineError(
      'TL_FORBIDDEN',
      `refusing a ${request.method} from Origin ${JSON.stringify(origin)}: without an API token the task center takes changes only from its own origin (a page on another site must not act through it); call it from http://${host} or without an Origin header, or set TASKLINE_API_TOKEN`,
    );
  }
}
