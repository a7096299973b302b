/** Scheduler instances and which one leads. */
import type { ServerContext } from '../context.js';
import { leaseView, schedulerView } from '../present.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { SchedulerList } from '../schemas.js';

export function schedulerRoutes(ctx: ServerContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      url: '/api/v1/schedulers',
      summary: 'Live scheduler instances (their check-ins) and the leader',
      tag: 'schedules',
      access: 'read',
      responses: { 200: { description: 'scheduler instances, oldest first; `leader` is the valid lease (null while none is)', schema: SchedulerList } },
      handler: async () => {
        const { instances, lease } = await ctx.backend.listSchedulers();
        return { schedulers: instances.map(schedulerView), leader: leaseView(lease) };
      },
    }),
  ];
}
