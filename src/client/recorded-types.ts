/**
 * Payload checks for the types workers recorded in the store (typed at every door).
 * The task center and the CLI have no `defineTask` of their own; they check a payload of a type
 * with a recorded JSON Schema before storing it, so a bad payload is a 422 at the door, not a
 * task that dies in the worker.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Backend, TaskTypeInfo, WorkerInfo } from '../backend/contract.js';
import { TasklineError } from '../core/errors.js';
import { FreshRead } from '../core/fresh-read.js';
import { handlesType } from '../core/task.js';
import { quote } from '../core/validate.js';

/** How long a listing of the recorded types is reused. */
const FRESH_MS = 2_000;
/** At most this many schemas are kept compiled. */
const MAX_COMPILED = 500;

// ajv-formats is CommonJS with a default export; under NodeNext the import is its namespace.
type AddFormats = (ajv: Ajv) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ?? addFormatsModule) as unknown as AddFormats;

export class RecordedTypes {
  // verbose: a union's error carries its branches' schemas, for the accepted forms in words.
  private readonly ajv = new Ajv({ allErrors: true, strict: false, verbose: true });
  /** Compiled schemas by listing entry (the hot path), and by schema text (at most MAX_COMPILED). */
  private readonly byEntry = new WeakMap<TaskTypeInfo, ValidateFunction | null>();
  private readonly byText = new Map<string, ValidateFunction | null>();
  private readonly types: FreshRead<Map<string, TaskTypeInfo>>;

  constructor(backend: Backend) {
    addFormats(this.ajv);
    this.types = new FreshRead(async () => new Map((await backend.listTaskTypes()).map((t) => [t.type, t])), FRESH_MS);
  }

  /**
   * Throws TL_VALIDATION_FAILED when the type has a recorded schema the payload does not match.
   * `json` is the payload as it will be stored (and as the worker will see it).
   */
  async check(type: string, json: string): Promise<void> {
    const info = (await this.types.get()).get(type);
    if (!info?.schema) return;
    const validate = this.compile(info, info.schema);
    if (validate === null || validate(JSON.parse(json))) return;
    throw new TasklineError('TL_VALIDATION_FAILED', `payload of ${quote(type)} does not match the schema its workers recorded: ${describe(validate.errors ?? [])}`, {
      details: { type, schema: info.schema },
    });
  }

  /** A type's compiled schema; null when the recorded schema does not compile (it is then not enforced). */
  private compile(info: TaskTypeInfo, schema: Record<string, unknown>): ValidateFunction | null {
    const known = this.byEntry.get(info);
    if (known !== undefined) return known;
    // By text as well: each listing brings new objects, and ajv keeps what it compiled.
    const key = JSON.stringify(schema);
    let validate = this.byText.get(key);
    if (validate === undefined) {
      try {
        validate = this.ajv.compile(schema);
      } catch {
        validate = null;
      }
      if (this.byText.size >= MAX_COMPILED) {
        const [oldest, compiled] = this.byText.entries().next().value!;
        this.byText.delete(oldest);
        if (compiled) this.ajv.removeSchema(compiled.schema);
      }
      this.byText.set(key, validate);
    }
    this.byEntry.set(info, validate);
    return validate;
  }

}

/** A task type known to the store: as recorded, with the live workers that handle it now. */
export interface KnownTaskType extends TaskTypeInfo {
  /** Live workers whose handlers match the type (for a pattern: that have the same pattern). */
  workers: Pick<WorkerInfo, 'id' | 'host' | 'queues'>[];
}

/**
 * Every type recorded in the store, and every type a live worker announces without a record
 * yet, by type; each with the live workers that handle it.
 */
export async function knownTaskTypes(backend: Backend): Promise<KnownTaskType[]> {
  const [recorded, workers] = await Promise.all([backend.listTaskTypes(), backend.listWorkers()]);
  const types = new Map<string, TaskTypeInfo>(recorded.map((t) => [t.type, t]));
  for (const worker of workers) {
    for (const type of worker.types ?? []) if (!types.has(type)) types.set(type, { type, schema: null, queues: worker.queues });
  }
  return [...types.values()]
    .sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0))
    .map((info) => ({
      ...info,
      workers: workers
        .filter((w) => (info.type.endsWith('*') ? (w.types ?? []).includes(info.type) : handlesType(w.types ?? [], info.type)))
        .map((w) => ({ id: w.id, host: w.host, queues: w.queues })),
    }));
}

/** `payload.to is required; payload.width must be integer`: at most five problems. */
function describe(errors: ErrorObject[]): string {
  const listed = withoutBranches(errors);
  const problems = listed
    .slice(0, 5)
    .map((error) => {
      const at = `payload${error.instancePath.replace(/\/([^/]*)/g, (_m, part: string) => (/^\d+$/.test(part) ? `[${part}]` : `.${part.replace(/~1/g, '/').replace(/~0/g, '~')}`))}`;
      const params = error.params as Record<string, unknown>;
      switch (error.keyword) {
        case 'required':
          return `${at}.${String(params.missingProperty)} is required`;
        case 'additionalProperties':
          return `${at}.${String(params.additionalProperty)} is not an accepted field`;
        case 'enum':
          return `${at} must be one of ${quote(params.allowedValues)}`;
        case 'anyOf':
        case 'oneOf':
          return `${at} must be ${(Array.isArray(error.schema) ? (error.schema as unknown[]) : []).map(form).join(' or ')}`;
        default:
          return `${at} ${error.message ?? 'is not accepted'}`;
      }
    });
  const more = listed.length > 5 ? ` (and ${listed.length - 5} more)` : '';
  return problems.join('; ') + more;
}

/** The errors, with those of each branch of a failed anyOf/oneOf left out (the union's own error says it all). */
function withoutBranches(errors: ErrorObject[]): ErrorObject[] {
  const unions = errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf');
  return errors.filter((e) => !unions.some((u) => u !== e && e.schemaPath.startsWith(`${u.schemaPath}/`)));
}

/** One accepted form of a JSON Schema, in words: `an email address`, `a list of 1–50 email addresses`. */
function form(schema: unknown): string {
  if (typeof schema !== 'object' || schema === null) return 'a value';
  const s = schema as { type?: unknown; format?: unknown; items?: unknown; minItems?: unknown; maxItems?: unknown; enum?: unknown };
  if (Array.isArray(s.enum)) return `one of ${quote(s.enum)}`;
  if (s.type === 'string' && s.format === 'email') return 'an email address';
  if (s.type === 'string') return typeof s.format === 'string' ? `a string (${s.format})` : 'a string';
  if (s.type === 'array') {
    const min = typeof s.minItems === 'number' ? s.minItems : 0;
    const max = typeof s.maxItems === 'number' ? String(s.maxItems) : '…';
    const bounds = min > 0 || max !== '…' ? ` of ${min}–${max}` : '';
    const item = form(s.items);
    return `a list${bounds} ${item === 'an email address' ? 'email addresses' : `of ${item}`}`;
  }
  if (s.type === 'integer') return 'a whole number';
  if (typeof s.type === 'string') return `${/^[aeiou]/.test(s.type) ? 'an' : 'a'} ${s.type}`;
  return 'a value';
}
