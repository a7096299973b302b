/** `GET /api/v1`: what this API offers, so the URL the banners print answers. */
import { z } from 'zod';
import { VERSION } from '../../version.js';
import { defineRoute, type AnyRoute } from '../route.js';

const ApiIndex = z.object({
  name: z.literal('taskline'),
  version: z.string(),
  openapi: z.string(),
  routes: z.array(z.string()),
});

/** The index of `routes` (the API's routes, this one included). */
export function indexRoutes(routes: () => AnyRoute[]): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      url: '/api/v1',
      summary: 'The API: its version, the OpenAPI document and every route',
      tag: 'health',
      access: 'read',
      responses: { 200: { description: 'every route as "METHOD path"; the OpenAPI document describes each', schema: ApiIndex } },
      handler: async () => ({
        name: 'taskline' as const,
        version: VERSION,
        openapi: '/openapi.json',
        routes: routes().map((r) => `${r.method} ${r.url.replace(/:([A-Za-z_]+)/g, '{$1}')}`),
      }),
    }),
  ];
}
