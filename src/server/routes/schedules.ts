/** Schedules: CRUD, pause/resume, trigger, backfill, fire history, preview. */
import type { z } from 'zod';
import { scheduleService, type ServerContext } from '../context.js';
import { fireView, iso, scheduleView } from '../present.js';
import { defineRoute, type AnyRoute } from '../route.js';
import {
  BackfillBody, Done, FireList, FiresQuery, PauseBody, Preview, PreviewBody, ScheduleBody, ScheduleList, ScheduleParams, ScheduleUpdateBody, ScheduleView,
} from '../schemas.js';

const errors = {
  400: { description: 'invalid input' },
  401: { description: 'no valid token' },
  403: { description: 'read-only token' },
  404: { description: 'no such schedule' },
  422: { description: 'invalid cron expression, time zone or schedule' },
  503: { description: 'store unreachable' },
};

const FireResultView = { description: 'the fires', schema: FireList };

export function scheduleRoutes(ctx: ServerContext): AnyRoute[] {
  const announce = (what: string, id: string, extra: Record<string, unknown> = {}) =>
    ctx.hub.publish({ name: `schedule.${what}`, queue: null, type: null, data: { schedule: id, ...extra, at: Date.now() } });
  return [
    defineRoute({
      method: 'GET',
      url: '/api/v1/schedules',
      summary: 'Every schedule',
      tag: 'schedules',
      access: 'read',
      responses: { 200: { description: 'schedules', schema: ScheduleList }, ...errors },
      handler: async () => ({ schedules: (await scheduleService(ctx).list()).map(scheduleView) }),
    }),
    defineRoute({
      method: 'POST',
      url: '/api/v1/schedules',
      summary: 'Create a schedule',
      tag: 'schedules',
      access: 'admin',
      body: ScheduleBody,
      responses: { 201: { description: 'created', schema: ScheduleView }, 409: { description: 'the id exists' }, ...errors },
      handler: async ({ body, reply }) => {
        const schedule = await scheduleService(ctx).create(body);
        announce('created', schedule.id);
        return reply.status(201).send(scheduleView(schedule));
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/api/v1/schedules/preview',
      summary: 'The next fire times of an expression, in UTC and in its time zone',
      tag: 'schedules',
      access: 'read',
      body: PreviewBody,
      responses: { 200: { description: 'fire times', schema: Preview }, ...errors },
      handler: async ({ body }) => {
        const times = await scheduleService(ctx).preview({ cron: body.cron, timezone: body.timezone, count: body.count ?? 5 });
        return { times: times.map((t) => ({ utc: t.utc, local: t.local })) };
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/api/v1/schedules/:id',
      summary: 'One schedule with its run state',
      tag: 'schedules',
      access: 'read',
      params: ScheduleParams,
      responses: { 200: { description: 'the schedule', schema: ScheduleView }, ...errors },
      handler: async ({ params }) => scheduleView(await scheduleService(ctx).get(params.id)),
    }),
    defineRoute({
      method: 'PUT',
      url: '/api/v1/schedules/:id',
      summary: 'Replace a schedule’s definition (applies to fires after now)',
      tag: 'schedules',
      access: 'admin',
      params: ScheduleParams,
      body: ScheduleUpdateBody,
      responses: { 200: { description: 'updated', schema: ScheduleView }, ...errors },
      handler: async ({ params, body }) => {
        const schedule = await scheduleService(ctx).update(params.id, body);
        announce('updated', schedule.id);
        return scheduleView(schedule);
      },
    }),
    defineRoute({
      method: 'DELETE',
      url: '/api/v1/schedules/:id',
      summary: 'Delete a schedule',
      tag: 'schedules',
      access: 'admin',
      params: ScheduleParams,
      responses: { 200: { description: 'deleted', schema: Done }, ...errors },
      handler: async ({ params }) => {
        await scheduleService(ctx).delete(params.id);
        announce('deleted', params.id);
        return { ok: true };
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/api/v1/schedules/:id/pause',
      summary: 'Pause, with an optional note and until time',
      tag: 'schedules',
      access: 'admin',
      params: ScheduleParams,
      body: PauseBody,
      responses: { 200: { description: 'paused', schema: ScheduleView }, ...errors },
      handler: async ({ params, body }) => {
        const schedule = await scheduleService(ctx).pause(params.id, { note: body?.note ?? null, until: body?.until ?? null });
        announce('paused', schedule.id);
        return scheduleView(schedule);
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/api/v1/schedules/:id/resume',
      summary: 'Resume',
      tag: 'schedules',
      access: 'admin',
      params: ScheduleParams,
      responses: { 200: { description: 'resumed', schema: ScheduleView }, ...errors },
      handler: async ({ params }) => {
        const schedule = await scheduleService(ctx).resume(params.id);
        announce('resumed', schedule.id);
        return scheduleView(schedule);
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/api/v1/schedules/:id/trigger',
      summary: 'Enqueue a run now (also while paused; the watermark stays)',
      tag: 'schedules',
      access: 'admin',
      params: ScheduleParams,
      responses: { 200: FireResultView, ...errors },
      handler: async ({ params }) => {
        const result = await scheduleService(ctx).trigger(params.id);
        announce('triggered', params.id, { fire_id: result.fireId, task_id: result.taskId });
        return { fires: [firedView(result)] };
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/api/v1/schedules/:id/backfill',
      summary: 'Fire every nominal time in [from, to] that has not fired (at most 1,000)',
      tag: 'schedules',
      access: 'admin',
      params: ScheduleParams,
      body: BackfillBody,
      responses: { 200: FireResultView, ...errors },
      handler: async ({ params, body }) => {
        const results = await scheduleService(ctx).backfill(params.id, body);
        announce('backfilled', params.id, { fires: results.length });
        return { fires: results.map(firedView) };
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/api/v1/schedules/:id/fires',
      summary: 'Fire history, newest first',
      tag: 'schedules',
      access: 'read',
      params: ScheduleParams,
      query: FiresQuery,
      responses: { 200: FireResultView, ...errors },
      handler: async ({ params, query }) => ({ fires: (await scheduleService(ctx).fires(params.id, { limit: query.limit ?? 50 })).map(fireView) }),
    }),
  ];
}

type FireResultShape = { fireId: string; outcome: string; taskId: string | null };

/** A fire just made: its nominal time is the last part of its id (`schedule:<id>:<gen>:<ms>[:manual]`). */
function firedView(result: FireResultShape): z.infer<typeof FireList>['fires'][number] {
  const match = /:(\d+)(?::manual)?$/.exec(result.fireId);
  return {
    fire_id: result.fireId,
    nominal_at: iso(match ? Number(match[1]) : Date.now()),
    enqueued_at: result.outcome === 'enqueued' ? new Date().toISOString() : null,
    lag_ms: null,
    outcome: result.outcome,
    task_id: result.taskId,
    task_state: null,
  };
}
