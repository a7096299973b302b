/**
 * How both stores keep a recorded task type: one JSON document per type or pattern,
 * `{schema, queues, recordedAt}`, written whole by the last worker to record it. Reading is
 * defensive: a document that does not parse reads as a type without a schema, never as a
 * failed listing.
 */
import type { TaskTypeInfo } from './contract.js';
import { parseStoredObject } from './shared.js';

export function encodeTaskType(info: TaskTypeInfo, now: number): string {
  return JSON.stringify({ schema: info.schema, queues: info.queues, recordedAt: now });
}

export function decodeTaskType(type: string, text: string): TaskTypeInfo {
  const { schema, queues, recordedAt } = parseStoredObject<{ schema: unknown; queues: unknown; recordedAt: unknown }>(text);
  return {
    type,
    schema: typeof schema === 'object' && schema !== null && !Array.isArray(schema) ? (schema as Record<string, unknown>) : null,
    queues: Array.isArray(queues) ? queues.filter((q): q is string => typeof q === 'string') : [],
    recordedAt: typeof recordedAt === 'number' && Number.isFinite(recordedAt) ? recordedAt : 0,
  };
}
