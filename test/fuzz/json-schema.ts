/**
 * Checks a response body against the JSON schema its route documents: the subset of JSON Schema
 * that zod-to-json-schema emits for the API (types, nullable, enum, anyOf, properties, required,
 * additionalProperties, items, bounds, date-time). Returns the problems found, at most a few.
 */
import type { JsonSchema } from './openapi.js';

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function fitsType(type: string, value: unknown): boolean {
  const actual = typeOf(value);
  return actual === type || (type === 'number' && actual === 'integer');
}

export function validate(schema: JsonSchema, value: unknown, at = '$', problems: string[] = []): string[] {
  if (problems.length >= 5) return problems;
  if (value === null && schema.nullable) return problems;
  if (schema.anyOf) {
    const branches = schema.anyOf.map((branch) => validate(branch, value, at, []));
    if (!branches.some((p) => p.length === 0)) problems.push(`${at}: matches no alternative (${branches.map((p) => p[0]).join(' | ')})`);
    return problems;
  }
  if (schema.not) {
    if (validate(schema.not, value, at, []).length === 0) problems.push(`${at}: matches a schema it must not`);
    return problems;
  }
  if (schema.enum && !schema.enum.some((v) => v === value)) {
    problems.push(`${at}: not one of ${JSON.stringify(schema.enum).slice(0, 100)} (${JSON.stringify(value)?.slice(0, 60)})`);
    return problems;
  }
  if (schema.type === undefined) return problems;
  if (!fitsType(schema.type, value)) {
    problems.push(`${at}: expected ${schema.type}${schema.nullable ? ' or null' : ''}, got ${typeOf(value)}`);
    return problems;
  }
  if (typeof value === 'string') {
    if (schema.minLength !== undefined && value.length < schema.minLength) problems.push(`${at}: shorter than ${schema.minLength} (${value.length})`);
    if (schema.maxLength !== undefined && value.length > schema.maxLength) problems.push(`${at}: longer than ${schema.maxLength} (${value.length})`);
    if (schema.format === 'date-time' && (!DATE_TIME.test(value) || Number.isNaN(Date.parse(value)))) problems.push(`${at}: not a date-time (${JSON.stringify(value).slice(0, 60)})`);
  } else if (typeof value === 'number') {
    if (!Number.isFinite(value)) problems.push(`${at}: not finite`);
    if (schema.minimum !== undefined && (schema.exclusiveMinimum ? value <= schema.minimum : value < schema.minimum)) problems.push(`${at}: below ${schema.minimum} (${value})`);
    if (schema.maximum !== undefined && value > schema.maximum) problems.push(`${at}: above ${schema.maximum} (${value})`);
  } else if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) problems.push(`${at}: fewer than ${schema.minItems} items (${value.length})`);
    if (schema.maxItems !== undefined && value.length > schema.maxItems) problems.push(`${at}: more than ${schema.maxItems} items (${value.length})`);
    if (schema.items) value.forEach((item, i) => validate(schema.items!, item, `${at}[${i}]`, problems));
  } else if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    for (const key of schema.required ?? []) if (!(key in record)) problems.push(`${at}: missing ${key}`);
    for (const [key, field] of Object.entries(record)) {
      const declared = schema.properties?.[key];
      if (declared) validate(declared, field, `${at}.${key}`, problems);
      else if (schema.additionalProperties === false) problems.push(`${at}: unexpected property (${JSON.stringify(key)})`);
      else if (typeof schema.additionalProperties === 'object') validate(schema.additionalProperties, field, `${at}.${key}`, problems);
    }
  }
  return problems.slice(0, 5);
}
