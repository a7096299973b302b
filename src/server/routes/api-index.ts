/** `GET /api/v1`: what this API offers, so the URL the banners print answers. */
import { z } from 'zod';
import { VERSION } from '../../version.js';
import type { Auth } from '../auth.js';
import { defineRoute, type AnyRoute } from '../route.js';

const ApiIndex = z.object({
  name: z.literal('taskline'),
  version: z.string(),
  openapi: z.string(),
  routes: z.array(z.string()),
  access: z.enum(['admin', 'read']).describe('what the caller may do: admin (everything; also when no token is configured) or read'),
  auth: z.boolean().describe('whether the server asks for a token'),
});

/** The index of `routes` (the API's routes, this one included). */
export function indexRoutes(routes: () => AnyRoute[], auth: Auth): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      url: '/api/v1',
      summary: 'The API: its version, the OpenAPI document and every route',
      tag: 'health',
      access: 'read',
      responses: { 200: { description: 'every route as "METHOD path"; the OpenAPI document describes each', schema: ApiIndex } },
      handler: async ({ request }) => ({
        name: 'taskline' as const,
        version: VERSION,
        openapi: '/openapi.json',
        routes: routes().map((r) => `${r.method} ${r.url.replace(/:([A-Za-z_]+)/g, '{$1}')}`),
        access: auth.tokenOf(request) === 'read' ? ('read' as const) : ('admin' as const),
        auth: auth.enabled,
      }),
    }),
  ];
}
