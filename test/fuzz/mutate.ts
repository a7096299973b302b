/**
 * Mutations of a valid request: a wrong value somewhere in the body, a field dropped or added,
 * no JSON at all, another content type, junk query parameters and cursors, path segments that
 * are not one, another method, a bad Authorization header.
 */
import type { GenContext } from './generate.js';
import {
  AUTH_HEADERS, BAD_CRONS, BAD_ZONES, bigString, CONTENT_TYPES, HUGE_NUMBERS, hostileString, hostileValue, JUNK_KEYS, NUMERIC_TEXT, PATH_SEGMENTS,
  QUERY_JUNK, RAW_BODIES, RAW_NUMBERS, TIMES,
} from './hostile.js';
import { encodeJson, Raw, setKey } from './json-text.js';
import type { JsonSchema, Operation } from './openapi.js';
import { encodeSegment, type FuzzRequest } from './request.js';
import type { Rng } from './rng.js';

type Node = Record<string, unknown> | unknown[];

/** The objects and arrays in a JSON value, a few levels deep. */
function containers(value: unknown, depth = 0): Node[] {
  if (depth > 4 || value instanceof Raw || typeof value !== 'object' || value === null) return [];
  const node = value as Node;
  return [node, ...Object.values(node).flatMap((child) => containers(child, depth + 1))];
}

function replaceSomewhere(rng: Rng, body: unknown, make: (key: string) => unknown): boolean {
  const nodes = containers(body).filter((n) => Object.keys(n).length > 0);
  if (nodes.length === 0) return false;
  const node = rng.pick(nodes);
  const key = rng.pick(Object.keys(node));
  if (Array.isArray(node)) node[Number(key)] = make(key);
  else setKey(node, key, make(key));
  return true;
}

/** Every property a body schema declares, by its key path (through anyOf branches and array items). */
function declaredFields(schema: JsonSchema, path: string[] = [], out: { path: string[]; schema: JsonSchema }[] = []): { path: string[]; schema: JsonSchema }[] {
  if (path.length > 3) return out;
  for (const branch of schema.anyOf ?? []) declaredFields(branch, path, out);
  if (schema.items) declaredFields(schema.items, [...path, '0'], out);
  for (const [key, field] of Object.entries(schema.properties ?? {})) {
    out.push({ path: [...path, key], schema: field });
    declaredFields(field, [...path, key], out);
  }
  return out;
}

function accepts(schema: JsonSchema, test: (s: JsonSchema) => boolean): boolean {
  return test(schema) || (schema.anyOf ?? []).some((b) => accepts(b, test));
}

/** A value just past what the field's schema allows, or far past it: bad cron text for `cron`, far times for a time. */
function hostileForSchema(rng: Rng, key: string, schema: JsonSchema): unknown {
  if (key === 'cron' && rng.chance(0.7)) return rng.pick(BAD_CRONS);
  if (key === 'timezone' && rng.chance(0.7)) return rng.pick(BAD_ZONES);
  if (rng.chance(0.8)) {
    if (accepts(schema, (s) => s.format === 'date-time') && rng.chance(0.4)) return rng.pick(TIMES);
    if (accepts(schema, (s) => s.type === 'integer' || s.type === 'number')) return rng.chance(0.8) ? rng.pick(HUGE_NUMBERS) : new Raw(rng.pick(RAW_NUMBERS));
    if (accepts(schema, (s) => s.enum !== undefined)) return rng.pick(['', 'SKIP', '__proto__', 'constructor', 'queued ', 1]);
    if (accepts(schema, (s) => s.type === 'boolean')) return rng.pick(['true', 1, 0, 'false']);
    if (accepts(schema, (s) => s.type === 'string')) return hostileString(rng);
  }
  return hostileValue(rng);
}

const CURSOR_VALUES: readonly unknown[] = [[1, 'x'], [1e300, 'x'], ['a', 1], {}, null, [], [1], [1, 'x', 3], ['__proto__'], [-1, ''], [9007199254740992, 'fz-t-1'], 'x'];

function forgedCursor(rng: Rng, known: string[]): string {
  return rng.weighted<() => string>([
    [3, () => rng.pick(['', 'x', '-1', '1e300', 'NaN', '9007199254740993', '0', '-0', 'x'.repeat(500), 'x'.repeat(501), '%zz', 'AAAA', '=='])],
    [3, () => Buffer.from(JSON.stringify(rng.pick(CURSOR_VALUES))).toString('base64url')],
    [1, () => Buffer.from(rng.text(rng.int(1, 40), '\u0000\u00ff\u0080abc')).toString('base64url')],
    [3, () => {
      if (known.length === 0) return 'eyJ4IjoxfQ';
      const cursor = rng.pick(known);
      const at = rng.int(0, Math.max(cursor.length - 1, 0));
      return rng.pick([cursor.slice(0, at), cursor + cursor, `${cursor.slice(0, at)}~${cursor.slice(at + 1)}`, `${cursor}=`, cursor.toUpperCase()]);
    }],
  ])();
}

interface Mutation {
  name: string;
  weight: number;
  applies: (r: FuzzRequest, op: Operation) => boolean;
  apply: (r: FuzzRequest, ctx: GenContext) => void;
}

const hasBody = (r: FuzzRequest) => r.body !== undefined && r.rawBody === undefined;
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'];

const MUTATIONS: Mutation[] = [
  {
    name: 'body.value',
    weight: 6,
    applies: hasBody,
    apply: (r, { rng }) => {
      if (!replaceSomewhere(rng, r.body, (key) => hostileForSchema(rng, key, {}))) r.body = hostileValue(rng);
    },
  },
  {
    // A declared field, present or not, set to a value its schema refuses or barely allows.
    name: 'body.field',
    weight: 8,
    applies: (r, op) => hasBody(r) && op.body !== null && typeof r.body === 'object' && r.body !== null && !(r.body instanceof Raw),
    apply: (r, { rng, op }) => {
      // Only fields whose container is in this body (a batch's item fields not on a single task).
      const parent = (path: string[]) => path.slice(0, -1).reduce<unknown>((node, key) => (typeof node === 'object' && node !== null && !(node instanceof Raw) ? (node as Record<string, unknown>)[key] : undefined), r.body);
      const fields = declaredFields(op.body!.schema).filter(({ path }) => {
        const node = parent(path);
        return typeof node === 'object' && node !== null && !(node instanceof Raw);
      });
      if (fields.length === 0) return;
      const { path, schema } = rng.pick(fields);
      const key = path[path.length - 1];
      const node = parent(path) as Record<string, unknown> | unknown[];
      const value = hostileForSchema(rng, key, schema);
      if (Array.isArray(node)) node[Number(key)] = value;
      else setKey(node, key, value);
    },
  },
  {
    // A declared query parameter, present or not, set to number text or a hostile string.
    name: 'query.field',
    weight: 4,
    applies: (_r, op) => op.parameters.some((p) => p.in === 'query'),
    apply: (r, { rng, op }) => {
      const param = rng.pick(op.parameters.filter((p) => p.in === 'query'));
      r.query = r.query.filter(([k]) => k !== param.name);
      r.query.push([param.name, encodeSegment(rng.chance(0.6) ? rng.pick(NUMERIC_TEXT) : rng.chance(0.5) ? rng.pick(TIMES) : hostileString(rng))]);
    },
  },
  {
    name: 'body.drop',
    weight: 2,
    applies: hasBody,
    apply: (r, { rng }) => {
      const objects = containers(r.body).filter((n) => !Array.isArray(n) && Object.keys(n).length > 0) as Record<string, unknown>[];
      if (objects.length === 0) return;
      const node = rng.pick(objects);
      delete node[rng.pick(Object.keys(node))];
    },
  },
  {
    name: 'body.extra',
    weight: 2,
    applies: hasBody,
    apply: (r, { rng }) => {
      const objects = containers(r.body).filter((n) => !Array.isArray(n)) as Record<string, unknown>[];
      if (objects.length > 0) setKey(rng.pick(objects), rng.chance(0.6) ? rng.pick(JUNK_KEYS) : rng.text(5), hostileValue(rng));
    },
  },
  {
    name: 'body.whole',
    weight: 1.5,
    applies: () => true,
    apply: (r, { rng }) => {
      r.body = hostileValue(rng);
      r.headers['content-type'] ??= 'application/json';
    },
  },
  {
    name: 'body.raw',
    weight: 2,
    applies: () => true,
    apply: (r, { rng }) => {
      const text = r.body === undefined ? '{"type":"t"}' : encodeJson(r.body);
      r.headers['content-type'] ??= 'application/json';
      r.rawBody = rng.weighted<() => string | Buffer>([
        [4, () => rng.pick(RAW_BODIES)],
        [2, () => text.slice(0, rng.int(0, Math.max(text.length - 1, 0)))],
        [1, () => `\ufeff${text}`],
        [1, () => text.replace(/^\{/, '{"type":"dup","type":1,')],
        // Bytes that are not UTF-8 inside the first string.
        [2, () => {
          const at = text.indexOf('"', 1) + 1 || 1;
          return Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from(rng.pick([[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x00]])), Buffer.from(text.slice(at))]);
        }],
        [0.3, () => `{"type":"t","payload":"${'x'.repeat(1_200_000)}"}`],
      ])();
    },
  },
  {
    name: 'body.big',
    weight: 0.4,
    applies: hasBody,
    apply: (r, { rng }) => {
      if (!replaceSomewhere(rng, r.body, () => bigString(rng))) r.body = bigString(rng);
    },
  },
  {
    name: 'content-type',
    weight: 2,
    applies: () => true,
    apply: (r, { rng }) => {
      const type = rng.pick(CONTENT_TYPES);
      if (type === null) delete r.headers['content-type'];
      else r.headers['content-type'] = type;
      if (r.body === undefined && r.rawBody === undefined && rng.chance(0.5)) r.rawBody = rng.pick(['type=t', '{}', '--x\r\n\r\n--x--', '']);
    },
  },
  {
    name: 'query.value',
    weight: 3,
    applies: (r) => r.query.length > 0,
    apply: (r, { rng }) => {
      const pair = rng.pick(r.query);
      pair[1] = encodeSegment(rng.chance(0.5) ? rng.pick(NUMERIC_TEXT) : hostileString(rng));
    },
  },
  {
    name: 'query.extra',
    weight: 1.5,
    applies: () => true,
    apply: (r, { rng }) => {
      r.query.push([encodeSegment(rng.chance(0.5) ? rng.pick(JUNK_KEYS) : rng.text(4)), encodeSegment(hostileString(rng))]);
    },
  },
  {
    name: 'query.dup',
    weight: 1,
    applies: (r) => r.query.length > 0,
    apply: (r, { rng }) => {
      const [k] = rng.pick(r.query);
      r.query.push([k, encodeSegment(rng.chance(0.5) ? rng.pick(NUMERIC_TEXT) : 'queued')]);
    },
  },
  {
    name: 'query.drop',
    weight: 1,
    applies: (r) => r.query.length > 0,
    apply: (r, { rng }) => {
      r.query.splice(rng.int(0, r.query.length - 1), 1);
    },
  },
  {
    name: 'query.raw',
    weight: 1,
    applies: () => true,
    apply: (r, { rng }) => {
      r.rawQuery = rng.pick(QUERY_JUNK);
    },
  },
  {
    name: 'query.cursor',
    weight: 3,
    applies: (_r, op) => op.parameters.some((p) => p.name === 'cursor'),
    apply: (r, { rng, world }) => {
      r.query = r.query.filter(([k]) => k !== 'cursor');
      r.query.push(['cursor', encodeSegment(forgedCursor(rng, world.cursors.map((c) => c.cursor)))]);
    },
  },
  {
    name: 'path.param',
    weight: 4,
    applies: (_r, op) => op.path.includes('{'),
    apply: (r, { rng, op }) => {
      const params = op.path.split('/').flatMap((s, i) => (s.startsWith('{') ? [i] : []));
      r.segments[rng.pick(params)] = rng.chance(0.6) ? rng.pick(PATH_SEGMENTS) : encodeSegment(hostileString(rng));
    },
  },
  {
    name: 'path.shape',
    weight: 1,
    applies: () => true,
    apply: (r, { rng }) => {
      const i = rng.int(1, r.segments.length - 1);
      rng.weighted<() => void>([
        [1, () => { r.segments.push(''); }],
        [1, () => { r.segments.splice(i, 0, ''); }],
        [1, () => { r.segments.splice(i, 0, rng.pick(['.', '..', '%2e', 'x'])); }],
        [1, () => { r.segments[i] = r.segments[i].toUpperCase(); }],
        [1, () => { r.segments.splice(i, 1); }],
        [1, () => { r.segments.push(rng.pick(['run', 'x', 'fires', 'tasks', '%2F'])); }],
      ])();
    },
  },
  {
    name: 'method',
    weight: 1,
    applies: () => true,
    apply: (r, { rng }) => {
      r.method = rng.pick(METHODS.filter((m) => m !== r.method));
    },
  },
  {
    name: 'auth',
    weight: 0.7,
    applies: () => true,
    apply: (r, { rng }) => {
      r.headers.authorization = rng.pick(AUTH_HEADERS);
    },
  },
  {
    name: 'header',
    weight: 0.7,
    applies: () => true,
    apply: (r, { rng }) => {
      const [name, value] = rng.pick([
        ['accept', 'text/event-stream'], ['accept', 'application/xml'], ['content-encoding', 'gzip'], ['x-http-method-override', 'DELETE'],
        ['accept-charset', 'utf-16'], ['transfer-encoding', 'chunked'], ['x-forwarded-for', '::1, 10.0.0.1'], ['cookie', 'a=b; __proto__=1'],
      ]);
      r.headers[name] = value;
    },
  },
];

/** Applies 1–3 mutations that fit the request, naming each in `request.mutations`. */
export function mutate(request: FuzzRequest, op: Operation, ctx: GenContext): void {
  const count = ctx.rng.weighted([[6, 1], [3, 2], [1, 3]]);
  for (let i = 0; i < count; i++) {
    const fitting = MUTATIONS.filter((m) => m.applies(request, op));
    const mutation = ctx.rng.weighted(fitting.map((m) => [m.weight, m] as const));
    mutation.apply(request, ctx);
    request.mutations.push(mutation.name);
  }
}
