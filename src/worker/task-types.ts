/**
 * What a worker tells the store about the types it handles (typed at every door):
 * each handled type or pattern with the JSON Schema of its defined payload, recorded at start
 * and every minute; and what it learns from the other live workers, so that a task it has no
 * handler for is handed back to a worker that has one rather than failed.
 */
import { zodToJsonSchema } from 'zod-to-json-schema';
import type { Backend, TaskTypeInfo, WorkerInfo } from '../backend/contract.js';
import type { PayloadSchema } from '../core/define-task.js';
import { FreshRead } from '../core/fresh-read.js';
import { handlesType } from '../core/task.js';
import type { HandlerRegistry } from './handlers.js';

/** The types and patterns of a registry, each with its payload's JSON Schema when one is known. */
export function describeTaskTypes(registry: HandlerRegistry, queues: string[]): TaskTypeInfo[] {
  return registry.registrations().map(({ pattern, definition }) => ({
    type: pattern,
    schema: definition?.schema ? jsonSchemaOf(definition.schema) : null,
    queues,
  }));
}

/**
 * The JSON Schema of a zod schema (what a producer may send: zod's input); null for a schema
 * that is not zod's (any `safeParse` object is accepted by defineTask) or cannot be described.
 */
export function jsonSchemaOf(schema: PayloadSchema<unknown>): Record<string, unknown> | null {
  if (typeof (schema as { _def?: unknown })._def !== 'object') return null;
  // Coercion and preprocessing accept more than their JSON Schema says: no schema is safer
  // than refusing at the door what the worker would take.
  if (acceptsMoreThanDescribed(schema, new Set(), 0)) return null;
  try {
    // 'strict': only a .strict() object refuses other fields, as zod itself does (it strips them).
    const { $schema: _ignored, ...rest } = zodToJsonSchema(schema as never, {
      target: 'jsonSchema7', $refStrategy: 'none', effectStrategy: 'input', removeAdditionalStrategy: 'strict',
    }) as Record<string, unknown>;
    return rest;
  } catch {
    return null;
  }
}

/** Whether a zod schema holds a coercion (`z.coerce…`) or a preprocess step anywhere. */
function acceptsMoreThanDescribed(node: unknown, seen: Set<unknown>, depth: number): boolean {
  if (typeof node !== 'object' || node === null || seen.has(node) || depth > 50) return false;
  seen.add(node);
  const def = (node as { _def?: { coerce?: unknown; effect?: { type?: unknown } } })._def;
  if (def?.coerce === true || def?.effect?.type === 'preprocess') return true;
  const children = def ? Object.values(def) : Array.isArray(node) ? node : [];
  for (const child of children) {
    if (typeof child === 'function') continue;
    if (Array.isArray(child) ? child.some((c) => acceptsMoreThanDescribed(c, seen, depth + 1)) : acceptsMoreThanDescribed(child, seen, depth + 1)) return true;
  }
  // An object's fields live behind a shape() function.
  const shape = (def as { shape?: () => Record<string, unknown> } | undefined)?.shape;
  if (typeof shape === 'function') return Object.values(shape()).some((field) => acceptsMoreThanDescribed(field, seen, depth + 1));
  return false;
}

/** How long a listing of the live workers is reused when deciding where a task can run. */
const PEERS_FRESH_MS = 1_000;

/** The other live workers, as the store lists them, read at most once a second. */
export class Peers {
  private readonly workers: FreshRead<WorkerInfo[]>;

  constructor(
    backend: Backend,
    private readonly selfId: string,
  ) {
    this.workers = new FreshRead(() => backend.listWorkers(), PEERS_FRESH_MS);
  }

  /** The id of a live worker other than this one that serves `queue` and handles `type`, or null. */
  async handlerOf(type: string, queue: string): Promise<string | null> {
    const workers = await this.workers.get();
    const peer = workers.find((w) => w.id !== this.selfId && w.queues.includes(queue) && handlesType(w.types ?? [], type));
    return peer?.id ?? null;
  }
}
