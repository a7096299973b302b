/** `GET /api/v1/tasks?q=…`: search across queues and states, a bounded number of tasks per call (core/task-query.ts has the terms). */
import { z } from 'zod';
import { MAX_SEARCH_CURSOR_LENGTH } from '../../backend/search-scope.js';
import { MAX_QUERY_LENGTH, parseTaskQuery } from '../../core/task-query.js';
import type { ServerContext } from '../context.js';
import { taskViews } from '../task-views.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { TaskStatus } from '../schemas.js';

export const QUERY_HELP =
  'space-separated terms, all ANDed: id:<id> type:<type> queue:<name> state:<state> err:<text> after:<ISO time> before:<ISO time> ' +
  'payload.<key>.<key>:<JSON value or text> and bare words (in the id or type); quote values with spaces: err:"connection refused"';

export const SearchQuery = z
  .object({
    q: z.string().max(MAX_QUERY_LENGTH).describe(QUERY_HELP).optional(),
    limit: z.coerce.number().int().min(1).max(1000).describe('matching tasks per page, 1–1000 (default 50)').optional(),
    cursor: z.string().max(MAX_SEARCH_CURSOR_LENGTH).describe('the next_cursor of the page before, with the same q').optional(),
  })
  .strict();

export const SearchResult = z.object({
  tasks: z.array(TaskStatus),
  next_cursor: z.string().nullable().describe('pass back as cursor to go on; null when the whole scope was examined'),
  scanned: z.number().int().describe('tasks this call examined (at most 5,000)'),
  total: z.number().int().describe('tasks in the scope searched (the query’s queue and state, else every task) when the search began'),
});

export function searchRoutes(ctx: ServerContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      url: '/api/v1/tasks',
      summary: 'Search tasks across queues and states; each call examines at most 5,000 tasks and answers a cursor to go on (a page may hold fewer than limit)',
      tag: 'tasks',
      access: 'read',
      query: SearchQuery,
      responses: {
        200: { description: 'the matching tasks this call found', schema: SearchResult },
        400: { description: 'a term of q that is not accepted (the message names it and its form), a bad limit or cursor' },
      },
      handler: async ({ query }) => {
        const filter = parseTaskQuery(query.q ?? '', 'query.q');
        const page = await ctx.backend.searchTasks(filter, { limit: query.limit ?? 50, cursor: query.cursor });
        return { tasks: await taskViews(ctx.backend, page.tasks), next_cursor: page.nextCursor, scanned: page.scanned, total: page.total };
      },
    }),
  ];
}
