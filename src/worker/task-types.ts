/**
 * What a worker tells the store about the types it handles (DESIGN §2: typed at every door):
 * each handled type or pattern with the JSON Schema of its defined payload, recorded at start
 * and every minute; and what it learns from the other live workers, so that a task it has no
 * handler for is handed back to a worker that has one rather than failed.
 */
import { zodToJsonSchema } from 'zod-to-json-schema';
import type { Backend, TaskTypeInfo, WorkerInfo } from '../backend/contract.js';
import type { PayloadSchema } from '../client/define-task.js';
import { handlesType } from '../client/recorded-types.js';
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
  try {
    const { $schema: _ignored, ...rest } = zodToJsonSchema(schema as never, { target: 'jsonSchema7', $refStrategy: 'none', effectStrategy: 'input' }) as Record<string, unknown>;
    return rest;
  } catch {
    return null;
  }
}

/** How long a listing of the live workers is reused when deciding where a task can run. */
const PEERS_FRESH_MS = 1_000;

/** The other live workers, as the store lists them, read at most once a second. */
export class Peers {
  private listing: { at: number; workers: WorkerInfo[] } | null = null;
  private loading: Promise<WorkerInfo[]> | null = null;

  constructor(
    private readonly backend: Backend,
    private readonly selfId: string,
  ) {}

  /** The id of a live worker other than this one that serves `queue` and handles `type`, or null. */
  async handlerOf(type: string, queue: string): Promise<string | null> {
    const workers = await this.workers();
    const peer = workers.find((w) => w.id !== this.selfId && w.queues.includes(queue) && handlesType(w.types ?? [], type));
    return peer?.id ?? null;
  }

  private async workers(): Promise<WorkerInfo[]> {
    if (this.listing !== null && Date.now() - this.listing.at < PEERS_FRESH_MS) return this.listing.workers;
    this.loading ??= this.backend
      .listWorkers()
      .then((workers) => {
        this.listing = { at: Date.now(), workers };
        return workers;
      })
      .finally(() => {
        this.loading = null;
      });
    return this.loading;
  }
}
