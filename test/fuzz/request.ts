/** One fuzz request: built valid from an operation (then maybe mutated), and put on the wire. */
import { validValue, type GenContext } from './generate.js';
import { encodeJson } from './json-text.js';
import type { Operation } from './openapi.js';

export interface FuzzRequest {
  method: string;
  /** Path segments as sent (each already percent-encoded, or deliberately not). */
  segments: string[];
  /** Query pairs, each already encoded. */
  query: [string, string][];
  /** Appended to the query string as is. */
  rawQuery: string;
  headers: Record<string, string>;
  /** A JSON value (may hold Raw fragments); undefined: no body. */
  body: unknown;
  /** Sent instead of `body` when set. */
  rawBody?: string | Buffer;
  /** The operation it was made for, e.g. `POST /api/v1/tasks`. */
  route: string;
  /** Names of the mutations applied. */
  mutations: string[];
}

export interface Wire {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
}

/** encodeURIComponent, except that a lone surrogate goes out as its WTF-8 bytes instead of throwing. */
export function encodeSegment(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    let out = '';
    for (const ch of text) {
      const code = ch.codePointAt(0)!;
      if (code >= 0xd800 && code <= 0xdfff) {
        out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
      } else out += encodeURIComponent(ch);
    }
    return out;
  }
}

/** A path or query value as text: parameters are primitives; anything else goes as JSON. */
function text(value: unknown): string {
  return typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
}

export function validRequest(op: Operation, ctx: GenContext): FuzzRequest {
  const { rng, world } = ctx;
  const values = new Map<string, unknown>();
  // A task listing that continues a page seen earlier: that page's queue, state and cursor.
  if (op.route === 'GET /api/v1/queues/{queue}/tasks' && world.cursors.length > 0 && rng.chance(0.5)) {
    const c = rng.pick(world.cursors);
    values.set('queue', c.queue).set('state', c.state).set('cursor', c.cursor);
  }
  const segments = op.path.split('/').map((segment) => {
    const name = /^\{(\w+)\}$/.exec(segment)?.[1];
    if (!name) return segment;
    const param = op.parameters.find((p) => p.in === 'path' && p.name === name);
    const value = values.has(name) ? values.get(name) : validValue(param?.schema ?? { type: 'string' }, ctx, name, 'path');
    return encodeSegment(text(value));
  });
  const query: [string, string][] = [];
  for (const param of op.parameters) {
    if (param.in !== 'query') continue;
    if (!values.has(param.name) && !param.required && !rng.chance(0.3)) continue;
    const value = values.has(param.name) ? values.get(param.name) : validValue(param.schema, ctx, param.name, 'query');
    if (value !== undefined) query.push([encodeSegment(param.name), encodeSegment(text(value))]);
  }
  const headers: Record<string, string> = {};
  let body: unknown;
  if (op.body && (op.body.required || rng.chance(0.7))) body = validValue(op.body.schema, ctx, 'body', 'body');
  else if (!op.body && op.method === 'POST' && rng.chance(0.2)) body = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  return { method: op.method, segments, query, rawQuery: '', headers, body, route: op.route, mutations: [] };
}

/** The longest `?wait=` the fuzzer lets a request hold for, seconds: a task no worker runs waits it all. */
const MAX_WAIT_S = 0.5;

export function toWire(request: FuzzRequest): Wire {
  const query = request.query.map(([k, v]) => {
    const wait = Number(decodeSafely(v));
    return k === 'wait' && wait > MAX_WAIT_S && wait <= 300 ? [k, String(MAX_WAIT_S)] : [k, v];
  });
  let search = query.map(([k, v]) => `${k}=${v}`).join('&');
  if (request.rawQuery) search = search ? `${search}&${request.rawQuery}` : request.rawQuery;
  // A mutation may drop the leading segments; a URL still starts with '/'.
  const path = request.segments.join('/');
  const url = (path.startsWith('/') ? path : `/${path}`) + (search ? `?${search}` : '');
  const payload = request.rawBody ?? (request.body === undefined ? undefined : encodeJson(request.body));
  return { method: request.method, url, headers: request.headers, ...(payload === undefined ? {} : { payload }) };
}

export function decodeSafely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
