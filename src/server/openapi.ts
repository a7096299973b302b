/** The OpenAPI 3 document, generated from the routes' zod schemas (the ones that validate requests). */
import { zodToJsonSchema } from 'zod-to-json-schema';
import { ZodObject, ZodOptional, type ZodTypeAny } from 'zod';
import { VERSION } from '../version.js';
import type { AnyRoute } from './route.js';
import { ErrorSchema } from './schemas.js';

type JsonSchema = Record<string, unknown>;

function jsonSchema(schema: ZodTypeAny): JsonSchema {
  const { $schema: _ignored, ...rest } = zodToJsonSchema(schema, { target: 'openApi3', $refStrategy: 'none' }) as JsonSchema;
  return rest;
}

function parameters(schema: ZodTypeAny | undefined, where: 'path' | 'query'): JsonSchema[] {
  if (!(schema instanceof ZodObject)) return [];
  return Object.entries(schema.shape as Record<string, ZodTypeAny>).map(([name, field]) => ({
    name,
    in: where,
    required: where === 'path' || !(field instanceof ZodOptional),
    schema: jsonSchema(field instanceof ZodOptional ? (field.unwrap() as ZodTypeAny) : field),
  }));
}

/** The errors any route of its kind may answer, unless it describes them itself. */
function commonErrors(route: AnyRoute, security: boolean): AnyRoute['responses'] {
  const errors: AnyRoute['responses'] = {};
  if (route.params || route.query || route.body) errors[400] = { description: 'the path, query or body does not match the schema (the message names the field and the accepted form)' };
  if (security && route.access !== 'public') {
    errors[401] = { description: 'no valid bearer token' };
    errors[403] = { description: 'the token does not allow this operation' };
  }
  // Any request with a body may exceed the limit, described or not.
  if (route.body || route.method !== 'GET') errors[413] = { description: 'the body is larger than the limit' };
  if (route.params) errors[414] = { description: 'a path parameter is longer than 500 characters' };
  if (route.access !== 'public') errors[503] = { description: 'the store is unreachable (Retry-After: 1)' };
  return errors;
}

export function openApiDocument(routes: AnyRoute[], security: boolean): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const path = route.url.replace(/:([A-Za-z_]+)/g, '{$1}');
    const responses: Record<string, JsonSchema> = {};
    for (const [status, response] of Object.entries({ ...commonErrors(route, security), ...route.responses })) {
      const entry: JsonSchema = { description: response.description };
      const isError = Number(status) >= 400;
      if (response.mediaType) entry.content = { [response.mediaType]: { schema: { type: 'string' } } };
      else if (response.schema || isError) entry.content = { 'application/json': { schema: jsonSchema(response.schema ?? ErrorSchema) } };
      responses[status] = entry;
    }
    const operation: JsonSchema = {
      summary: route.summary,
      tags: [route.tag],
      operationId: `${route.method.toLowerCase()}${path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())}`,
      parameters: [...parameters(route.params, 'path'), ...parameters(route.query, 'query')],
      responses,
    };
    if (route.body) operation.requestBody = { required: !(route.body instanceof ZodOptional), content: { 'application/json': { schema: jsonSchema(route.body) } } };
    if (route.access !== 'public' && security) operation.security = [{ bearer: [] }];
    (paths[path] ??= {})[route.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.0.3',
    info: { title: 'Taskline task center', version: VERSION, description: 'Tasks, queues, schedules, scheduler instances, workers, statistics and live events of a Taskline task center.' },
    paths,
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
  };
}
