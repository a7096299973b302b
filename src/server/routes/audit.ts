/** `GET /api/v1/audit`: the audit log of mutating calls, newest first (audit.ts records it). */
import { z } from 'zod';
import type { ServerContext } from '../context.js';
import { iso } from '../present.js';
import { defineRoute, type AnyRoute } from '../route.js';

const AuditQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(1000).describe('entries per page, 1–1000 (default 50)').optional(),
    cursor: z.string().max(200).describe('the next_cursor of the page before').optional(),
  })
  .strict();

const AuditList = z.object({
  entries: z.array(
    z.object({
      at: z.string().datetime().nullable(),
      token: z.enum(['admin', 'read', 'none']).describe('the token the call carried; none: no configured token matched, or the server has none'),
      method: z.string(),
      route: z.string().describe('the route pattern, e.g. /api/v1/tasks/{id}/run'),
      target: z.string().nullable().describe('the id, queue or type the path names'),
      status: z.number().int(),
      code: z.string().nullable().describe('the error code answered, or null'),
      detail: z
        .record(z.union([z.string(), z.number(), z.boolean()]).nullable())
        .nullable()
        .describe('what the call did beyond its target: every path parameter, and for POST /api/v1/bulk its action, q and dryRun, for POST /api/v1/schedules the id, for POST /api/v1/workflows its id and name, for a backfill from and to (at most 16 members, texts cut to 500 characters); null for none'),
    }),
  ),
  next_cursor: z.string().nullable(),
});

export function auditRoutes(ctx: ServerContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      url: '/api/v1/audit',
      summary: 'The audit log: every call to a route that changes something but those refused for no or an unknown token (the newest 10,000), newest first',
      tag: 'audit',
      access: 'read',
      query: AuditQuery,
      responses: { 200: { description: 'a page of entries', schema: AuditList } },
      handler: async ({ query }) => {
        const page = await ctx.backend.listAudit({ limit: query.limit ?? 50, cursor: query.cursor });
        return { entries: page.entries.map((e) => ({ ...e, at: iso(e.at), detail: e.detail ?? null })), next_cursor: page.nextCursor };
      },
    }),
  ];
}
