/** Tasks: enqueue (one, a batch, or with the body as payload), status with `?wait=`, operations. */
import { z } from 'zod';
import { TasklineError, isTasklineError } from '../../core/errors.js';
import { validateTaskId, type EnqueueOptions } from '../../core/options.js';
import type { TaskInfo } from '../../core/task.js';
import { acceptedStatesText } from '../../core/transitions.js';
import type { ServerContext } from '../context.js';
import { taskViews } from '../task-views.js';
import { defineRoute, type AnyRoute } from '../route.js';
import {
  CancelResult, Done, Enqueued, EnqueuedBatch, EnqueueBody, EnqueueItem, EnqueueQuery, TaskIdParams, TaskStatus, TaskTypeParams, WaitQuery,
} from '../schemas.js';
import { notKeptError } from '../../client/client.js';
import { waitForTask } from '../wait.js';

type Item = z.infer<typeof EnqueueItem>;
type QueryOptions = z.infer<typeof EnqueueQuery>;

function enqueueOptions(item: Omit<Item, 'type' | 'payload'> | QueryOptions): EnqueueOptions {
  const options: EnqueueOptions = {};
  if (item.queue !== undefined) options.queue = item.queue;
  if (item.id !== undefined) options.id = item.id;
  if (item.maxRetries !== undefined) options.maxRetries = item.maxRetries;
  if (item.timeout !== undefined) options.timeout = item.timeout;
  if (item.deadline !== undefined) options.deadline = item.deadline;
  if (item.delay !== undefined) options.delay = item.delay;
  if (item.runAt !== undefined) options.runAt = item.runAt;
  if (item.uniqueFor !== undefined) options.uniqueFor = item.uniqueFor;
  if (item.uniqueKey !== undefined) options.uniqueKey = item.uniqueKey;
  if (item.retention !== undefined) options.retention = item.retention;
  if ('headers' in item && item.headers !== undefined) options.headers = item.headers;
  if (item.group !== undefined) options.group = item.group;
  return options;
}

function enqueued(info: TaskInfo) {
  return { task_id: info.id, queue: info.queue, status: info.state === 'scheduled' ? ('scheduled' as const) : ('enqueued' as const) };
}

/** An outcome of a batch enqueue, as the client's error details hold it. */
interface BatchOutcome {
  ok: boolean;
  info?: TaskInfo;
  id?: string;
  reason?: string;
  /** The queue that refused it (queue-full). */
  queue?: string;
}

/** A task of a batch that was not stored: refused by its queue's maxLength (naming the queue, as a stored one does), or a conflict. */
function notEnqueued(o: BatchOutcome) {
  return o.reason === 'queue-full' ? { task_id: o.id, queue: o.queue, status: 'refused', reason: o.reason } : { task_id: o.id, status: 'conflict', reason: o.reason };
}

function notFound(id: string): TasklineError {
  return new TasklineError('TL_TASK_NOT_FOUND', `no task with id ${JSON.stringify(id)}`);
}

const taskErrors = {
  400: { description: 'invalid input' },
  401: { description: 'no valid token' },
  403: { description: 'read-only token' },
  404: { description: 'no such task' },
  409: { description: 'not possible in the task’s state' },
  503: { description: 'store unreachable' },
};

export function taskRoutes(ctx: ServerContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      url: '/api/v1/tasks',
      summary: 'Enqueue a task, or a batch as {tasks:[…]}',
      tag: 'tasks',
      access: 'admin',
      body: EnqueueBody,
      responses: {
        201: { description: 'stored: {task_id, queue, status} or {tasks:[…]}', schema: Enqueued.or(EnqueuedBatch) },
        409: { description: 'the id or unique key exists' },
        413: { description: 'payload too large' },
        422: { description: 'payload fails the task schema' },
        429: { description: 'the queue is full (its maxLength): a batch is refused whole; Retry-After says when to try again' },
      },
      handler: async ({ body, reply }) => {
        if ('tasks' in body) {
          try {
            const infos = await ctx.client.enqueueMany(body.tasks.map(({ type, payload, ...rest }) => ({ type, payload, options: enqueueOptions(rest) })));
            return reply.status(201).send({ tasks: infos.map(enqueued) });
          } catch (error) {
            const full = isTasklineError(error, 'TL_QUEUE_FULL');
            if ((full || isTasklineError(error, 'TL_TASK_CONFLICT')) && Array.isArray(error.details)) {
              const outcomes = error.details as BatchOutcome[];
              if (full) void reply.header('retry-after', '1');
              return reply.status(full ? 429 : 409).send({
                error: { code: error.code, message: error.message },
                tasks: outcomes.map((o) => (o.ok && o.info ? enqueued(o.info) : notEnqueued(o))),
              });
            }
            throw error;
          }
        }
        const { type, payload, ...rest } = body;
        const info = await ctx.client.enqueue(type, payload, enqueueOptions(rest));
        return reply.status(201).send(enqueued(info));
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/api/v1/tasks/:type',
      summary: 'Enqueue a task of {type}: the body is the payload, options are query parameters',
      tag: 'tasks',
      access: 'admin',
      params: TaskTypeParams,
      query: EnqueueQuery,
      body: z.unknown(),
      responses: {
        201: { description: 'stored', schema: Enqueued }, ...taskErrors, 413: { description: 'payload too large' },
        429: { description: 'the queue is full (its maxLength); Retry-After says when to try again' },
      },
      handler: async ({ params, query, body, reply }) => {
        const info = await ctx.client.enqueue(params.type, body ?? null, enqueueOptions(query));
        return reply.status(201).send(enqueued(info));
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/api/v1/tasks/:id',
      summary: 'The task’s status; ?wait=N holds the request until it finishes or N s pass',
      tag: 'tasks',
      access: 'read',
      params: TaskIdParams,
      query: WaitQuery,
      responses: { 200: { description: 'the task', schema: TaskStatus }, ...taskErrors },
      handler: async ({ params, query, request }) => {
        const id = validateTaskId(params.id);
        let task;
        let finishedAs = null;
        if (query.wait !== undefined && query.wait > 0) {
          const gone = new AbortController();
          const onClose = () => gone.abort();
          request.raw.once('close', onClose);
          try {
            ({ task, finishedAs } = await waitForTask(ctx.backend, ctx.hub, id, query.wait * 1000, gone.signal));
          } finally {
            request.raw.off('close', onClose);
          }
        } else {
          task = await ctx.backend.getTask(id);
        }
        if (!task) throw finishedAs ? notKeptError(id, finishedAs) : notFound(id);
        const [view] = await taskViews(ctx.backend, [task]);
        return view;
      },
    }),
    defineRoute({
      method: 'DELETE',
      url: '/api/v1/tasks/:id',
      summary: 'Delete a task that is not running',
      tag: 'tasks',
      access: 'admin',
      params: TaskIdParams,
      responses: { 200: { description: 'deleted', schema: Done }, ...taskErrors },
      handler: async ({ params }) => {
        await ctx.backend.deleteTask(validateTaskId(params.id));
        return { ok: true };
      },
    }),
    ...(['run', 'archive'] as const).map((action) =>
      defineRoute({
        method: 'POST',
        url: `/api/v1/tasks/:id/${action}`,
        summary: action === 'run' ? `Run now (from ${acceptedStatesText('run')})` : `Move to dead (from ${acceptedStatesText('archive')})`,
        tag: 'tasks',
        access: 'admin',
        params: TaskIdParams,
        responses: { 200: { description: 'done', schema: Done }, ...taskErrors },
        handler: async ({ params }) => {
          const id = validateTaskId(params.id);
          if (action === 'run') await ctx.backend.runTask(id);
          else await ctx.backend.archiveTask(id);
          return { ok: true };
        },
      }),
    ),
    defineRoute({
      method: 'POST',
      url: '/api/v1/tasks/:id/cancel',
      summary: 'Cancel: at once when waiting; a running task’s signal is aborted',
      tag: 'tasks',
      access: 'admin',
      params: TaskIdParams,
      responses: { 200: { description: 'cancelled or cancel requested', schema: CancelResult }, ...taskErrors },
      handler: async ({ params }) => {
        const id = validateTaskId(params.id);
        return { id, status: await ctx.backend.cancelTask(id) };
      },
    }),
  ];
}
