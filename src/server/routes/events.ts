/** `GET /api/v1/events` (SSE). */
import type { ServerContext } from '../context.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { EventsQuery } from '../schemas.js';
import { streamEvents, type SseOptions, type SseStreams } from '../sse.js';

export function eventRoutes(ctx: ServerContext, streams: SseStreams, options: SseOptions): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      url: '/api/v1/events',
      summary: 'Server-Sent Events of task and schedule lifecycle events; filter with queue, type (prefix with *) and kinds',
      tag: 'events',
      access: 'read',
      query: EventsQuery,
      responses: { 200: { description: 'an event stream (task.enqueued, task.started, task.retrying, task.completed, task.dead, task.cancelled, schedule.*)', mediaType: 'text/event-stream' } },
      handler: async ({ query, request, reply }) =>
        streamEvents(ctx.hub, streams, request, reply, {
          queue: query.queue,
          type: query.type,
          kinds: query.kinds === undefined ? undefined : query.kinds.split(',').map((k) => k.trim()).filter(Boolean),
        }, options),
    }),
  ];
}
