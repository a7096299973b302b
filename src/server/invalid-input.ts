/**
 * Why a request's body, query or path does not match its zod schema, in words a caller can act
 * on: each problem names the field and the accepted form — `body.delay must be a whole number of
 * milliseconds >= 0, got "5m"`, `body.type is required: …`, `body.foo is not an accepted field;
 * accepted: …`. The accepted form is the schema's `.describe()` text, else read from the schema
 * itself. Bad values are quoted with core's `quote` (at most 100 characters), and the whole
 * message stays short however large the input.
 */
import {
  ZodArray, ZodBoolean, ZodDefault, ZodEffects, ZodEnum, ZodLiteral, ZodNull, ZodNullable, ZodNumber, ZodObject, ZodOptional, ZodRecord,
  ZodString, ZodUnion, type ZodError, type ZodIssue, type ZodTypeAny,
} from 'zod';
import { clip, quote } from '../core/validate.js';

/** Problems listed in one message; the rest are counted. */
const MAX_PROBLEMS = 3;
/** Characters of a key name shown in a field path. */
const MAX_KEY = 50;
/** Unknown keys named in one problem. */
const MAX_UNKNOWN_KEYS = 5;
/** Keys of an object listed when describing its form. */
const MAX_LISTED_KEYS = 6;

type Path = (string | number)[];

function fieldName(where: string, path: Path): string {
  return path.reduce<string>((name, key) => (typeof key === 'number' ? `${name}[${key}]` : `${name}.${clip(key, MAX_KEY)}`), where);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The schema without the wrappers that do not change what a value must look like. */
function unwrap(schema: ZodTypeAny): ZodTypeAny {
  let inner = schema;
  for (;;) {
    if (inner instanceof ZodOptional || inner instanceof ZodNullable) inner = inner.unwrap() as ZodTypeAny;
    else if (inner instanceof ZodDefault) inner = inner.removeDefault() as ZodTypeAny;
    else if (inner instanceof ZodEffects) inner = inner.innerType() as ZodTypeAny;
    else return inner;
  }
}

function requiredKeys(object: ZodObject<Record<string, ZodTypeAny>>): string[] {
  return Object.entries(object.shape).filter(([, field]) => !field.isOptional()).map(([key]) => key);
}

/**
 * Which branch of a union an object value meant, among the union's object forms: the first with
 * one of its required keys in the value, else the last — so list the specific forms first and the
 * general one last (`{tasks:[…]}` before a single task). Null when the value is no object or the
 * union has no object form (`{limit, intervalMs} | "none"` given an object: the object form).
 */
export function chooseBranch(union: ZodUnion<[ZodTypeAny, ...ZodTypeAny[]]>, value: unknown): number | null {
  if (!isPlainObject(value)) return null;
  const objects = union.options
    .map((option, index) => ({ option: unwrap(option), index }))
    .filter((o): o is { option: ZodObject<Record<string, ZodTypeAny>>; index: number } => o.option instanceof ZodObject);
  if (objects.length === 0) return null;
  const chosen = objects.find(({ option }) => requiredKeys(option).some((key) => key in value));
  return (chosen ?? objects[objects.length - 1]).index;
}

function valueAt(value: unknown, path: Path): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}

/** The schema that checks the value at `path`, or null when the path leaves the schema. */
function schemaAt(schema: ZodTypeAny, value: unknown, path: Path): ZodTypeAny | null {
  let current = schema;
  let here = value;
  for (const key of path) {
    let inner = unwrap(current);
    if (inner instanceof ZodUnion) {
      const branch = chooseBranch(inner, here);
      if (branch === null) return null;
      inner = unwrap(inner.options[branch] as ZodTypeAny);
    }
    if (inner instanceof ZodObject && typeof key === 'string') current = (inner.shape as Record<string, ZodTypeAny>)[key];
    else if (inner instanceof ZodArray) current = inner.element as ZodTypeAny;
    else if (inner instanceof ZodRecord) current = inner.valueSchema as ZodTypeAny;
    else return null;
    if (current === undefined) return null;
    here = valueAt(here, [key]);
  }
  return current;
}

function numberForm(schema: ZodNumber): string {
  let min: { value: number; inclusive: boolean } | null = null;
  let max: { value: number; inclusive: boolean } | null = null;
  for (const check of schema._def.checks) {
    if (check.kind === 'min' && (min === null || check.value > min.value)) min = check;
    if (check.kind === 'max' && (max === null || check.value < max.value)) max = check;
  }
  const noun = schema.isInt ? 'a whole number' : 'a number';
  if (max?.value === Number.MAX_SAFE_INTEGER) max = null;
  if (min && max && min.inclusive && max.inclusive) return `${noun} from ${min.value} to ${max.value}`;
  const bounds = [min && `${min.inclusive ? '>=' : '>'} ${min.value}`, max && `${max.inclusive ? '<=' : '<'} ${max.value}`].filter(Boolean);
  return bounds.length > 0 ? `${noun} ${bounds.join(' and ')}` : noun;
}

function stringForm(schema: ZodString): string {
  if (schema.isDatetime) return 'an ISO-8601 time with a UTC offset, e.g. 2026-03-01T09:00:00Z';
  const { minLength: min, maxLength: max } = schema;
  if (min !== null && min > 0 && max !== null) return `a string of ${min}–${max} characters`;
  if (max !== null) return `a string of at most ${max} characters`;
  if (min !== null && min > 0) return `a non-empty string`;
  return 'a string';
}

function objectForm(schema: ZodObject<Record<string, ZodTypeAny>>): string {
  const keys = Object.entries(schema.shape).map(([key, field]) => (field.isOptional() ? `${key}?` : key));
  const listed = keys.slice(0, MAX_LISTED_KEYS).join(', ');
  return `an object {${listed}${keys.length > MAX_LISTED_KEYS ? ', …' : ''}}`;
}

/** What a schema accepts, as a phrase: `a whole number from 0 to 1000`, `one of skip, allow`. */
export function acceptedForm(schema: ZodTypeAny): string {
  if (schema.description) return schema.description;
  if (schema instanceof ZodOptional) return acceptedForm(schema.unwrap() as ZodTypeAny);
  if (schema instanceof ZodNullable) return `${acceptedForm(schema.unwrap() as ZodTypeAny)} or null`;
  if (schema instanceof ZodDefault) return acceptedForm(schema.removeDefault() as ZodTypeAny);
  if (schema instanceof ZodEffects) return acceptedForm(schema.innerType() as ZodTypeAny);
  if (schema instanceof ZodNumber) return numberForm(schema);
  if (schema instanceof ZodString) return stringForm(schema);
  if (schema instanceof ZodBoolean) return 'true or false';
  if (schema instanceof ZodNull) return 'null';
  if (schema instanceof ZodLiteral) return quote(schema.value);
  if (schema instanceof ZodEnum) return `one of ${(schema.options as string[]).join(', ')}`;
  if (schema instanceof ZodUnion) return (schema.options as ZodTypeAny[]).map(acceptedForm).join(' or ');
  if (schema instanceof ZodRecord) return schema.valueSchema instanceof ZodString ? 'an object of string values' : 'an object';
  if (schema instanceof ZodObject) return objectForm(schema as ZodObject<Record<string, ZodTypeAny>>);
  if (schema instanceof ZodArray) {
    const min = schema._def.minLength?.value;
    const max = schema._def.maxLength?.value;
    const count = min !== undefined && max !== undefined ? `${min}–${max} ` : max !== undefined ? `at most ${max} ` : '';
    return `a list of ${count}values`;
  }
  return 'a JSON value';
}

interface Problem {
  field: string;
  text: string;
}

function describeIssue(issue: ZodIssue, schema: ZodTypeAny, value: unknown, where: string): Problem[] {
  const field = fieldName(where, issue.path);
  const here = valueAt(value, issue.path);
  const fieldSchema = schemaAt(schema, value, issue.path);
  if (issue.code === 'unrecognized_keys') {
    let object = fieldSchema && unwrap(fieldSchema);
    if (object instanceof ZodUnion) {
      const branch = chooseBranch(object, here);
      object = branch === null ? null : unwrap(object.options[branch] as ZodTypeAny);
    }
    const accepted = object instanceof ZodObject ? Object.keys(object.shape as object) : [];
    const noun = where.startsWith('body') ? 'field' : 'parameter';
    const named = issue.keys.slice(0, MAX_UNKNOWN_KEYS).map((key) => fieldName(field, [key]));
    const more = issue.keys.length > MAX_UNKNOWN_KEYS ? ` and ${issue.keys.length - MAX_UNKNOWN_KEYS} more` : '';
    const verb = issue.keys.length === 1 ? `is not an accepted ${noun}` : `are not accepted ${noun}s`;
    const list = accepted.length > 0 ? `; accepted: ${accepted.join(', ')}` : `; this takes no ${noun}s`;
    return [{ field, text: `${named.join(', ')}${more} ${verb}${list}` }];
  }
  if (issue.code === 'invalid_union' && fieldSchema) {
    const union = unwrap(fieldSchema);
    const branch = union instanceof ZodUnion ? chooseBranch(union, here) : null;
    if (branch !== null && issue.unionErrors[branch]) return issue.unionErrors[branch].issues.flatMap((inner) => describeIssue(inner, schema, value, where));
  }
  const form = fieldSchema ? acceptedForm(fieldSchema) : issue.message;
  if (here === undefined && (issue.code === 'invalid_type' || issue.code === 'invalid_union')) return [{ field, text: `${field} is required: ${form}` }];
  return [{ field, text: `${field} must be ${form}, got ${quote(here)}` }];
}

/** One short message for all of a parse's problems: the first few, each field once. */
export function describeInvalidInput(error: ZodError, schema: ZodTypeAny, value: unknown, where: string): string {
  const problems: Problem[] = [];
  const seen = new Set<string>();
  for (const issue of error.issues) {
    for (const problem of describeIssue(issue, schema, value, where)) {
      if (seen.has(problem.field)) continue;
      seen.add(problem.field);
      problems.push(problem);
    }
  }
  const shown = problems.slice(0, MAX_PROBLEMS).map((problem) => problem.text);
  const more = problems.length > MAX_PROBLEMS ? `; and ${problems.length - MAX_PROBLEMS} more` : '';
  return `${shown.join('; ')}${more}`;
}
