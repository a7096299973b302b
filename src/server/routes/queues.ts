/** Queues: list, one queue, its tasks by state (paginated), pause/resume, keep bounds, bulk run/delete. */
import { TasklineError } from '../../core/errors.js';
import { validateQueueName } from '../../core/options.js';
import { accepts, acceptedStatesText, type OperatorAction } from '../../core/transitions.js';
import type { Backend, BulkState as BulkStateName } from '../../backend/contract.js';
import type { ServerContext } from '../context.js';
import { limitsView, queueView } from '../present.js';
import { taskViews } from '../task-views.js';
import { defineRoute, parseInput, type AnyRoute } from '../route.js';
import { BulkResult, BulkState, Done, QueueKeepBody, QueueKeepView, QueueLimitsBody, QueueLimitsView, QueueList, QueueParams, QueueStateParams, QueueView, TaskList, TaskListQuery } from '../schemas.js';

const errors = {
  400: { description: 'invalid queue name, state or cursor' },
  401: { description: 'no valid token' },
  403: { description: 'read-only token' },
  404: { description: 'no such queue' },
  503: { description: 'store unreachable' },
};

export function queueRoutes(ctx: ServerContext): AnyRoute[] {
  const getQueue = async (name: string) => {
    const queue = await ctx.backend.getQueue(validateQueueName(name));
    if (!queue) throw new TasklineError('TL_NOT_FOUND', `no queue ${JSON.stringify(name)}`);
    return queue;
  };
  return [
    defineRoute({
      method: 'GET',
      url: '/api/v1/queues',
      summary: 'Queues with counts per state, paused, processed/failed totals and latency',
      tag: 'queues',
      access: 'read',
      responses: { 200: { description: 'the queues', schema: QueueList }, ...errors },
      handler: async () => ({ queues: (await ctx.backend.listQueues()).map(queueView) }),
    }),
    defineRoute({
      method: 'GET',
      url: '/api/v1/queues/:queue',
      summary: 'One queue',
      tag: 'queues',
      access: 'read',
      params: QueueParams,
      responses: { 200: { description: 'the queue', schema: QueueView }, ...errors },
      handler: async ({ params }) => queueView(await getQueue(params.queue)),
    }),
    defineRoute({
      method: 'GET',
      url: '/api/v1/queues/:queue/tasks',
      summary: 'Tasks of the queue in a state, paginated (pass next_cursor back as cursor)',
      tag: 'queues',
      access: 'read',
      params: QueueParams,
      query: TaskListQuery,
      responses: { 200: { description: 'a page of tasks', schema: TaskList }, ...errors },
      handler: async ({ params, query }) => {
        const page = await ctx.backend.listTasks(validateQueueName(params.queue), query.state, { limit: query.limit ?? 50, cursor: query.cursor });
        return { tasks: await taskViews(ctx.backend, page.tasks), next_cursor: page.nextCursor };
      },
    }),
    ...(['pause', 'resume'] as const).map((action) =>
      defineRoute({
        method: 'POST',
        url: `/api/v1/queues/:queue/${action}`,
        summary: action === 'pause' ? 'Pause: tasks are accepted but none are claimed' : 'Resume a paused queue',
        tag: 'queues',
        access: 'admin',
        params: QueueParams,
        responses: { 200: { description: 'done', schema: Done }, ...errors },
        handler: async ({ params }) => {
          const queue = validateQueueName(params.queue);
          if (action === 'pause') await ctx.backend.pauseQueue(queue);
          else await ctx.backend.resumeQueue(queue);
          return { ok: true };
        },
      }),
    ),
    defineRoute({
      method: 'PATCH',
      url: '/api/v1/queues/:queue/keep',
      summary:
        'Bound how many completed, dead and cancelled tasks the queue keeps (0: delete each as it finishes; null: no bound, only retention); ' +
        'a state left out keeps its bound. Returns the bounds now in force',
      tag: 'queues',
      access: 'admin',
      params: QueueParams,
      body: QueueKeepBody,
      responses: { 200: { description: 'the bounds now in force', schema: QueueKeepView }, ...errors, 400: { description: 'invalid queue name or bound' } },
      handler: async ({ params, body }) => ctx.backend.setQueueKeep(validateQueueName(params.queue), body),
    }),
    defineRoute({
      method: 'PATCH',
      url: '/api/v1/queues/:queue/limits',
      summary:
        'Set the queue\'s controls, held by the store and applied by every worker and producer: rate (at most limit starts in any intervalMs), ' +
        'concurrency (running at once), groupConcurrency (running at once per enqueue group) and maxLength (waiting tasks; an enqueue past it gets 429). ' +
        'A limit left out keeps its value, null or "none" removes it. Returns the limits now in force',
      tag: 'queues',
      access: 'admin',
      params: QueueParams,
      body: QueueLimitsBody,
      responses: { 200: { description: 'the limits now in force', schema: QueueLimitsView }, ...errors, 400: { description: 'invalid queue name or limit' } },
      handler: async ({ params, body }) => limitsView(await ctx.backend.setQueueLimits(validateQueueName(params.queue), body)),
    }),
    ...Object.entries(BULK_ACTIONS).map(([action, { verb, operation, act }]) =>
      defineRoute({
        method: 'POST',
        url: `/api/v1/queues/:queue/tasks/:state/${action}`,
        summary: `${verb} every task of the queue in the state`,
        tag: 'queues',
        access: 'admin',
        params: QueueStateParams,
        responses: { 200: { description: 'how many tasks', schema: BulkResult }, ...errors },
        handler: async ({ params }) => {
          const queue = validateQueueName(params.queue);
          const state = parseInput(BulkState, params.state, 'path.state');
          // As the CLI does: a state the action never takes is a mistake, not "0 tasks".
          if (!accepts(operation, state)) {
            throw new TasklineError('TL_INVALID_REQUEST', `path.state must be ${acceptedStatesText(operation)} for ${action}, got ${JSON.stringify(state)}`);
          }
          return { count: await act(ctx.backend, queue, state) };
        },
      }),
    ),
  ];
}

/** The bulk routes: each one's verb, the operator action it is, and its store call. */
const BULK_ACTIONS: Record<string, { verb: string; operation: OperatorAction; act: (backend: Backend, queue: string, state: BulkStateName) => Promise<number> }> = {
  'run-all': { verb: 'Run', operation: 'run', act: (backend, queue, state) => backend.runAll(queue, state) },
  'delete-all': { verb: 'Delete', operation: 'delete', act: (backend, queue, state) => backend.deleteAll(queue, state) },
  'archive-all': { verb: 'Archive', operation: 'archive', act: (backend, queue, state) => backend.archiveAll(queue, state) },
};
