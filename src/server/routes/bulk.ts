/** Bulk actions by filter: a dry-run count, jobs done in batches with progress, cancel, recent jobs (bulk-jobs.ts). */
import { z } from 'zod';
import { TasklineError } from '../../core/errors.js';
import { MAX_QUERY_LENGTH, emptyFilter, filterKey, parseTaskQuery } from '../../core/task-query.js';
import { OPERATOR_ACTIONS, acceptedStatesText } from '../../core/transitions.js';
import type { BulkJob, BulkJobs } from '../bulk-jobs.js';
import { iso } from '../present.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { QUERY_HELP } from './search.js';

const BulkBody = z
  .object({
    action: z.enum(OPERATOR_ACTIONS).describe(`one of ${OPERATOR_ACTIONS.join(', ')}`),
    q: z.string().max(MAX_QUERY_LENGTH).describe(`the tasks to act on, as GET /api/v1/tasks?q= finds them (at least one term): ${QUERY_HELP}`),
    dryRun: z.boolean().describe('true: only count the tasks the action would take').optional(),
  })
  .strict();

const time = z.string().datetime().nullable();
const JobView = z.object({
  id: z.string(),
  action: z.enum(OPERATOR_ACTIONS),
  q: z.string(),
  state: z.enum(['running', 'done', 'cancelled', 'failed']),
  matched: z.number().int().describe('tasks the query matched in a state the action takes'),
  done: z.number().int().describe('tasks acted on so far'),
  failed: z.number().int().describe('matched tasks the action could no longer take (moved or deleted since)'),
  started_at: time,
  finished_at: time,
  error: z.string().nullable().describe('why a failed job stopped'),
});
const JobResult = z.object({ job: JobView });
const JobList = z.object({ jobs: z.array(JobView) });
const Count = z.object({ count: z.number().int() });
const JobParams = z.object({ id: z.string().min(1).max(200) }).strict();

function jobView(job: BulkJob): z.infer<typeof JobView> {
  return {
    id: job.id, action: job.action, q: job.q, state: job.state, matched: job.matched, done: job.done, failed: job.failed,
    started_at: iso(job.startedAt), finished_at: iso(job.finishedAt), error: job.error,
  };
}

function notFound(id: string): TasklineError {
  return new TasklineError('TL_NOT_FOUND', `no bulk job ${JSON.stringify(id)} (jobs live in this task center's memory; recent ones are listed by GET /api/v1/bulk)`);
}

/** The filter of a query with no term: every task. */
const NO_TERMS = filterKey(emptyFilter());

const STATES_TAKEN = OPERATOR_ACTIONS.map((action) => `${action}: ${acceptedStatesText(action)}`).join('; ');

export function bulkRoutes(jobs: BulkJobs): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      url: '/api/v1/bulk',
      summary: `Run, archive, delete or cancel every task a query matches in a state the action takes (${STATES_TAKEN}); dryRun counts them`,
      tag: 'bulk',
      access: 'admin',
      body: BulkBody,
      responses: {
        200: { description: 'dryRun: how many tasks the action would take', schema: Count },
        202: { description: 'the job, started: follow it with GET /api/v1/bulk/{id}', schema: JobResult },
        400: { description: 'an unknown action, a q with no term, or a term of q that is not accepted (the message names the field)' },
      },
      handler: async ({ body, reply }) => {
        const filter = parseTaskQuery(body.q, 'body.q');
        if (filterKey(filter) === NO_TERMS) {
          throw new TasklineError(
            'TL_INVALID_REQUEST',
            'body.q has no term, and a bulk action takes at least one (an empty query would act on every task in the store): ' +
              'to act on everything deliberately, send one request per state (q "state:dead", "state:queued", …) or per queue (q "queue:<name>")',
          );
        }
        if (body.dryRun === true) return { count: await jobs.count(body.action, filter) };
        return reply.status(202).send({ job: jobView(await jobs.start(body.action, body.q, filter)) });
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/api/v1/bulk',
      summary: 'Recent bulk jobs, newest first (kept in this task center’s memory)',
      tag: 'bulk',
      access: 'read',
      responses: { 200: { description: 'the jobs', schema: JobList } },
      handler: async () => ({ jobs: jobs.list().map(jobView) }),
    }),
    defineRoute({
      method: 'GET',
      url: '/api/v1/bulk/:id',
      summary: 'One bulk job and its progress',
      tag: 'bulk',
      access: 'read',
      params: JobParams,
      responses: { 200: { description: 'the job', schema: JobResult }, 404: { description: 'no such job' } },
      handler: async ({ params }) => {
        const job = jobs.get(params.id);
        if (!job) throw notFound(params.id);
        return { job: jobView(job) };
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/api/v1/bulk/:id/cancel',
      summary: 'Stop a running bulk job before its next batch; the tasks not yet reached stay as they are (a finished job is answered as it is)',
      tag: 'bulk',
      access: 'admin',
      params: JobParams,
      responses: { 200: { description: 'the job', schema: JobResult }, 404: { description: 'no such job' } },
      handler: async ({ params }) => {
        const job = jobs.cancel(params.id);
        if (!job) throw notFound(params.id);
        return { job: jobView(job) };
      },
    }),
  ];
}
