import { TasklineError } from './errors.js';
import type { EnqueueOptions } from './options.js';

/**
 * A schema that validates a payload: zod's schemas fit (any object with `safeParse`). `P` is what
 * the handler receives (the parsed output), `I` what a producer may pass (zod's input type: a
 * field with `.default()` is optional here).
 */
export interface PayloadSchema<P, I = P> {
  safeParse(value: unknown): { success: true; data: P } | { success: false; error: { message: string; issues?: { path: (string | number)[]; message: string }[] } };
  /** zod's phantom input type; never read. */
  readonly _input?: I;
}

/** A task type declared once and used typed on both sides (client and worker). */
export interface TaskDefinition<P = unknown, R = unknown, I = P> {
  readonly type: string;
  readonly schema: PayloadSchema<P, I> | undefined;
  /** Enqueue options applied to every task of this type (overridden per call). */
  readonly defaults: EnqueueOptions;
  /** Phantom fields carrying the result and input types; never set. */
  readonly __result?: R;
  readonly __input?: I;
}

export interface DefineTaskOptions<P, I = P> {
  /** Validates the payload at enqueue and before the handler runs. Default: none. */
  schema?: PayloadSchema<P, I>;
  /** Default enqueue options for this type. Default: none. */
  defaults?: EnqueueOptions;
}

export function defineTask<P = unknown, R = unknown, I = P>(type: string, options: DefineTaskOptions<P, I> = {}): TaskDefinition<P, R, I> {
  if (typeof type !== 'string' || type.length === 0) {
    throw new TasklineError('TL_INVALID_ARGUMENT', `defineTask: type must be a non-empty string, got ${JSON.stringify(type)}`);
  }
  if (options.schema !== undefined && typeof options.schema?.safeParse !== 'function') {
    throw new TasklineError('TL_INVALID_ARGUMENT', `defineTask(${type}): schema must have a safeParse method (a zod schema)`);
  }
  return Object.freeze({ type, schema: options.schema, defaults: { ...options.defaults } });
}

export function isTaskDefinition(value: unknown): value is TaskDefinition {
  return typeof value === 'object' && value !== null && typeof (value as TaskDefinition).type === 'string' && 'defaults' in value;
}

/** Validates a payload against a definition's schema; returns the parsed payload. */
export function validatePayload<P>(definition: TaskDefinition<P, unknown>, payload: unknown): P {
  if (!definition.schema) return payload as P;
  const parsed = definition.schema.safeParse(payload);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues?.map((i) => `${i.path.length > 0 ? i.path.join('.') : '(payload)'}: ${i.message}`).join('; ');
  throw new TasklineError('TL_VALIDATION_FAILED', `payload of ${definition.type} does not match its schema: ${issues ?? parsed.error.message}`);
}
