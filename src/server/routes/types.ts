/** Task types known to the store (typed at every door). */
import { knownTaskTypes, type KnownTaskType } from '../../client/recorded-types.js';
import type { ServerContext } from '../context.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { TypeList } from '../schemas.js';
import { iso } from '../present.js';

function typeView(t: KnownTaskType) {
  const at = t.recordedAt ?? 0;
  return {
    type: t.type,
    schema: t.schema,
    queues: t.queues,
    recorded_at: at > 0 ? iso(at) : null,
    workers: t.workers.map((w) => ({ id: w.id, host: w.host, queues: w.queues })),
  };
}

export function typeRoutes(ctx: ServerContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      url: '/api/v1/types',
      summary: 'Task types workers handle: payload schema, queues and the live workers that handle each',
      tag: 'tasks',
      access: 'read',
      responses: {
        200: {
          description:
            'types by name; `schema` is the JSON Schema of the payload a worker recorded (null when none), which POST /api/v1/tasks enforces (422); a type ending in `*` is a prefix pattern',
          schema: TypeList,
        },
      },
      handler: async () => ({ types: (await knownTaskTypes(ctx.backend)).map(typeView) }),
    }),
  ];
}
