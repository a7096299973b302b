/** `taskline types`: the task types workers handle, their payload schemas, queues and live workers. */
import type { Command } from 'commander';
import { knownTaskTypes } from '../../client/recorded-types.js';
import { withContext } from '../run.js';

interface FieldSchema {
  type?: unknown;
  format?: unknown;
  items?: FieldSchema;
  anyOf?: FieldSchema[];
}

/** `string (email)`, `string (email)[]`, `string (email) | string (email)[]`. */
function kindOf(p: FieldSchema): string {
  if (Array.isArray(p.anyOf)) return p.anyOf.map(kindOf).join(' | ');
  if (p.type === 'array' && p.items) return `${kindOf(p.items)}[]`;
  const kind = Array.isArray(p.type) ? p.type.join('|') : typeof p.type === 'string' ? p.type : 'any';
  return `${kind}${typeof p.format === 'string' ? ` (${p.format})` : ''}`;
}

/** A JSON Schema in one short line: `{to: string, subject: string, body?: string}`. */
export function schemaSummary(schema: Record<string, unknown> | null): string {
  if (schema === null) return '-';
  const properties = schema.properties;
  if (schema.type !== 'object' || typeof properties !== 'object' || properties === null) return typeof schema.type === 'string' ? schema.type : 'schema';
  const required = new Set(Array.isArray(schema.required) ? (schema.required as unknown[]) : []);
  const fields = Object.entries(properties as Record<string, FieldSchema>).map(([name, p]) => `${name}${required.has(name) ? '' : '?'}: ${kindOf(p)}`);
  const text = `{${fields.join(', ')}}`;
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
}

export function registerTypesCommand(program: Command): void {
  program
    .command('types')
    .description('task types workers handle: payload schema, queues, and the live workers that handle each (--json for the full JSON Schemas)')
    .action(async (_options: unknown, command: Command) =>
      withContext(command, async (ctx) => {
        const types = await knownTaskTypes(await ctx.backend());
        ctx.out.data({
          types: types.map((t) => ({ type: t.type, schema: t.schema, queues: t.queues, recordedAt: t.recordedAt ?? null, workers: t.workers })),
        });
        if (ctx.out.json) return;
        if (types.length === 0) {
          ctx.out.line('no task types recorded (a worker records the types it handles when it starts: taskline worker --handlers <module>, or taskline dev)');
          return;
        }
        ctx.out.table(
          ['TYPE', 'QUEUES', 'WORKERS', 'PAYLOAD'],
          types.map((t) => [t.type, t.queues.join(','), t.workers.length, schemaSummary(t.schema)]),
        );
      }),
    );
}
