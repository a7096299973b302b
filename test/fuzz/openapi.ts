/** The parts of the task center's OpenAPI document the fuzzer reads: operations, parameters, schemas. */

/** A JSON schema as zod-to-json-schema writes it for OpenAPI 3 (the subset the routes use). */
export interface JsonSchema {
  type?: string;
  nullable?: boolean;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  not?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  format?: string;
}

export interface Parameter {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  schema: JsonSchema;
}

export interface Operation {
  method: string;
  /** The OpenAPI path, e.g. `/api/v1/tasks/{id}`. */
  path: string;
  /** `METHOD path`, how findings are grouped. */
  route: string;
  parameters: Parameter[];
  body: { required: boolean; schema: JsonSchema } | null;
  /** Status → the JSON schema of that response (null: none documented, or not JSON). */
  responses: Map<number, JsonSchema | null>;
  /** A text response (SSE, Prometheus): never checked against a schema. */
  streams: boolean;
}

interface RawOperation {
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema: JsonSchema }> };
  responses?: Record<string, { content?: Record<string, { schema: JsonSchema }> }>;
}

export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, RawOperation>>;
}

export function listOperations(document: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, raw] of Object.entries(methods)) {
      const responses = new Map<number, JsonSchema | null>();
      let streams = false;
      for (const [status, response] of Object.entries(raw.responses ?? {})) {
        const json = response.content?.['application/json'];
        if (response.content && !json) streams = true;
        responses.set(Number(status), json?.schema ?? null);
      }
      const json = raw.requestBody?.content?.['application/json'];
      operations.push({
        method: method.toUpperCase(),
        path,
        route: `${method.toUpperCase()} ${path}`,
        parameters: raw.parameters ?? [],
        body: json ? { required: raw.requestBody?.required === true, schema: json.schema } : null,
        responses,
        streams,
      });
    }
  }
  return operations;
}

/** The path a URL reaches: dot segments (`.`, `%2e`, `..`) resolved, as inject's URL parsing does. */
export function requestPath(url: string): string {
  try {
    return new URL(url, 'http://localhost').pathname;
  } catch {
    return url.split('?')[0];
  }
}

/**
 * The operation a request reaches, as the router would pick it: same method (HEAD counts as
 * GET), same number of segments, static segments equal; the most static segments win.
 */
export function matchOperation(operations: Operation[], method: string, url: string): Operation | null {
  const wanted = method === 'HEAD' ? 'GET' : method;
  const segments = requestPath(url).split('/');
  let best: Operation | null = null;
  let bestStatic = -1;
  for (const op of operations) {
    if (op.method !== wanted) continue;
    const template = op.path.split('/');
    if (template.length !== segments.length) continue;
    let statics = 0;
    let ok = true;
    for (let i = 0; i < template.length && ok; i++) {
      if (template[i].startsWith('{')) ok = segments[i] !== '';
      else if (template[i] === segments[i]) statics += 1;
      else ok = false;
    }
    if (ok && statics > bestStatic) {
      best = op;
      bestStatic = statics;
    }
  }
  return best;
}
