/**
 * Valid values from the OpenAPI schemas, steered by field names so that requests reach deep:
 * ids the server handed out, cron text that parses, times near now, small pages that need a
 * cursor. Mutations (mutate.ts) then break some of them.
 */
import { GOOD_CRONS, GOOD_ZONES } from './hostile.js';
import { setKey } from './json-text.js';
import type { JsonSchema, Operation } from './openapi.js';
import type { Rng } from './rng.js';
import type { World } from './world.js';

export interface GenContext {
  rng: Rng;
  world: World;
  op: Operation;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

function asTime(ctx: GenContext, ms: number): number | string {
  return ctx.rng.chance(0.5) ? ms : new Date(ms).toISOString();
}

function nearTime(ctx: GenContext, before: number, after: number): number | string {
  return asTime(ctx, ctx.world.now + ctx.rng.int(-before, after));
}

function taskId(ctx: GenContext): string {
  const { rng, world } = ctx;
  return world.taskIds.length > 0 && rng.chance(0.85) ? rng.pick(world.taskIds) : world.freshId('fz-t');
}

function scheduleId(ctx: GenContext): string {
  const { rng, world } = ctx;
  return world.scheduleIds.length > 0 && rng.chance(0.85) ? rng.pick(world.scheduleIds) : world.freshId('fz-s');
}

function jobId(ctx: GenContext): string {
  const { rng, world } = ctx;
  return world.jobIds.length > 0 && rng.chance(0.85) ? rng.pick(world.jobIds) : world.freshId('fz-j');
}

/** A small JSON payload. */
export function payload(rng: Rng, depth = 0): unknown {
  return rng.weighted<() => unknown>([
    [3, () => ({ n: rng.int(0, 1000), s: rng.text(rng.int(0, 12)) })],
    [1, () => rng.text(rng.int(0, 20))],
    [1, () => rng.int(-5, 5)],
    [1, () => null],
    [1, () => (depth < 2 ? [payload(rng, depth + 1), payload(rng, depth + 1)] : [])],
    [1, () => (depth < 2 ? { nested: payload(rng, depth + 1), flag: rng.chance(0.5) } : {})],
  ])();
}

/**
 * Values the validation accepts that a store, a URL or a presenter may still trip on: ids that
 * are dot segments or hold a slash, names at their longest, types in any script.
 */
const EDGE_VALID: Record<string, readonly unknown[]> = {
  taskId: ['..', '.', 'a/b', '/', '//', 'a+b', '=', '@', ':', '-', '_', 'x'.repeat(200), 'a/../b', '%2e', 'constructor', '__proto__', 'toString'],
  scheduleId: ['a..', 'a.', 'a@b', 'x'.repeat(128), 'constructor', '__proto__', 'toString', 'a-', '0'],
  queue: ['a..', 'a:', 'a.b:c-d_e', 'q'.repeat(100), 'constructor', '__proto__', '0', 'Default', 'DEFAULT'],
  type: ['..', '.', 'a/b', '%zz', '😀'.repeat(100), 'é'.repeat(200), '‮evil', '﻿', ' ', '*', 'email:*', '__proto__', 'constructor', 'x'.repeat(200), '"', '\\', '<b>'],
  uniqueKey: ['x'.repeat(500), '__proto__', ' ', '😀', 'k'],
};

function edgeValue(name: string, ctx: GenContext): unknown {
  const onSchedules = ctx.op.path.startsWith('/api/v1/schedules');
  const kind = name === 'id' ? (onSchedules ? 'scheduleId' : 'taskId') : name;
  const values = EDGE_VALID[kind];
  return values ? ctx.rng.pick(values) : undefined;
}

/** A value chosen by the field's name and route, or undefined to fall back on the schema. */
function hinted(name: string, where: 'path' | 'query' | 'body', ctx: GenContext): unknown {
  const { rng, world, op } = ctx;
  const onSchedules = op.path.startsWith('/api/v1/schedules');
  // Now and then a value at the edge of what is valid (for a new thing, not a lookup).
  if (rng.chance(0.06) && !(where === 'path' && name === 'id')) {
    const edge = edgeValue(name, ctx);
    if (edge !== undefined) return edge;
  }
  switch (name) {
    case 'id':
      if (op.path.startsWith('/api/v1/bulk/')) return jobId(ctx);
      if (onSchedules) return where === 'body' && op.method === 'POST' && rng.chance(0.7) ? world.freshId('fz-s') : scheduleId(ctx);
      return where === 'path' ? taskId(ctx) : rng.chance(0.7) ? world.freshId('fz-t') : taskId(ctx);
    case 'type':
      return rng.chance(0.9) ? rng.pick(world.types) : `fz type ${rng.int(0, 9)}`;
    case 'queue':
      return rng.pick(world.queues);
    case 'state':
      if (where === 'path') return rng.pick(['scheduled', 'queued', 'retrying', 'completed', 'dead', 'cancelled', 'running']);
      // Where tasks are (no worker runs them): listings long enough to page.
      return rng.weighted([[4, 'queued'], [3, 'scheduled'], [1, 'dead'], [1, 'cancelled'], [0.5, 'completed'], [0.5, 'running'], [0.5, 'retrying']]);
    case 'cursor':
      return world.cursors.length > 0 ? rng.pick(world.cursors).cursor : undefined;
    case 'limit':
      return rng.weighted([[6, rng.int(1, 5)], [1, rng.int(6, 100)], [1, 1000]]);
    case 'wait':
      return rng.pick([0, 0, 0.05, 0.1]);
    case 'cron':
      return rng.pick(GOOD_CRONS);
    case 'timezone':
      return rng.pick(GOOD_ZONES);
    case 'runAt':
    case 'deadline':
      return nearTime(ctx, 0, 7 * DAY);
    case 'startAt':
      return nearTime(ctx, 7 * DAY, 7 * DAY);
    case 'endAt':
    case 'until':
      return nearTime(ctx, -HOUR, 30 * DAY);
    case 'from':
      return asTime(ctx, world.now - rng.weighted([[6, rng.int(1, 10) * MINUTE], [2, rng.int(1, 6) * HOUR], [0.3, 2 * DAY]]));
    case 'to':
      return asTime(ctx, world.now - rng.int(0, 2 * MINUTE));
    case 'delay':
      return rng.weighted([[3, rng.int(0, MINUTE)], [1, rng.int(MINUTE, DAY)]]);
    case 'timeout':
    case 'uniqueFor':
      return rng.int(1000, 10 * MINUTE);
    case 'retention':
      return rng.int(0, 7 * DAY);
    case 'uniqueKey':
      return `k${rng.int(0, 6)}`;
    case 'maxRetries':
      return rng.int(0, 10);
    case 'count':
      return rng.int(1, 10);
    case 'note':
    case 'pauseNote':
      return rng.chance(0.2) ? null : `paused by fuzz ${rng.int(0, 99)}`;
    case 'jitter':
    case 'window':
      return rng.chance(0.5) ? rng.int(0, 10 * MINUTE) : rng.pick(['5m', '30s', '1h']);
    case 'payload':
      return payload(rng);
    case 'paused':
      return rng.chance(0.3);
    case 'completed':
    case 'dead':
    case 'cancelled':
      return rng.weighted([[3, rng.int(0, 100)], [1, null], [0.5, 1_000_000_000]]);
    case 'headers':
      if (rng.chance(0.1)) {
        const odd: Record<string, unknown> = {};
        setKey(odd, rng.pick(['__proto__', '', 'é', 'x'.repeat(300), 'traceparent']), rng.pick(['', 'garbage', 'x'.repeat(5000), '😀']));
        return odd;
      }
      return { traceparent: `00-${rng.text(32, '0123456789abcdef')}-${rng.text(16, '0123456789abcdef')}-01` };
    case 'tasks':
      if (where !== 'body') return undefined;
      return Array.from({ length: rng.weighted([[80, rng.int(1, 4)], [10, rng.int(5, 40)], [1, 1000]]) }, () => ({ type: rng.pick(world.types), payload: payload(rng), ...(rng.chance(0.5) ? { id: world.freshId('fz-t') } : {}), ...(rng.chance(0.3) ? { queue: rng.pick(world.queues) } : {}) }));
    default:
      return undefined;
  }
}

/** A valid value for `schema`; `name` is the field's name, which may steer the choice. */
export function validValue(schema: JsonSchema, ctx: GenContext, name: string, where: 'path' | 'query' | 'body'): unknown {
  const hint = hinted(name, where, ctx);
  if (hint !== undefined) return hint;
  const { rng } = ctx;
  if (schema.nullable && rng.chance(0.1)) return null;
  if (schema.anyOf) {
    const branches = schema.anyOf.filter((b) => !b.not);
    // The second branch of EnqueueBody is one task; a batch is the rarer case.
    const branch = branches.length === 2 && branches[0].properties?.tasks ? (rng.chance(0.2) ? branches[0] : branches[1]) : rng.pick(branches);
    return validValue(branch, ctx, name, where);
  }
  if (schema.enum) return rng.pick(schema.enum);
  switch (schema.type) {
    case 'string':
      if (schema.format === 'date-time') return new Date(ctx.world.now + rng.int(0, DAY)).toISOString();
      return rng.text(rng.int(Math.max(schema.minLength ?? 1, 1), Math.min(schema.maxLength ?? 12, 12)));
    case 'integer':
    case 'number': {
      const min = (schema.minimum ?? 0) + (schema.exclusiveMinimum ? 1 : 0);
      const max = Math.min(schema.maximum ?? min + 1000, min + 1000);
      return rng.int(min, max);
    }
    case 'boolean':
      return rng.chance(0.5);
    case 'array':
      return Array.from({ length: rng.int(schema.minItems ?? 0, Math.min(schema.maxItems ?? 4, 4)) }, () => validValue(schema.items ?? {}, ctx, name, where));
    case 'object': {
      const out: Record<string, unknown> = {};
      const required = new Set(schema.required ?? []);
      for (const [key, field] of Object.entries(schema.properties ?? {})) {
        if (required.has(key) || rng.chance(0.35)) setKey(out, key, validValue(field, ctx, key, where));
      }
      if (typeof schema.additionalProperties === 'object') {
        for (let i = rng.int(0, 2); i > 0; i--) setKey(out, rng.text(4), validValue(schema.additionalProperties, ctx, '', where));
      }
      return out;
    }
    default:
      return payload(rng);
  }
}
