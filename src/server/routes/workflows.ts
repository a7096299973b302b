/** Workflows (client/workflow-graph.ts has the body's graph form): create, list, one, cancel, retry. */
import { z } from 'zod';
import { WORKFLOW_STATES } from '../../backend/contract.js';
import { fromGraphForm } from '../../client/workflow-graph.js';
import { MAX_WORKFLOW_PAYLOAD_BYTES, type WorkflowInfo } from '../../client/workflow-plan.js';
import { TasklineError } from '../../core/errors.js';
import type { ServerContext } from '../context.js';
import { iso } from '../present.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { TaskState } from '../schemas.js';

const taskFields = {
  type: z.string().describe('the task type'),
  payload: z.unknown().optional(),
  queue: z.string().optional(),
  maxRetries: z.number().optional(),
  timeout: z.number().optional(),
  delay: z.number().optional().describe('ms after the node can start'),
  runAt: z.union([z.number(), z.string()]).optional(),
  deadline: z.union([z.number(), z.string()]).optional(),
  retention: z.number().optional(),
  headers: z.record(z.string()).optional(),
  group: z.string().optional().describe('the task\'s group in its queue (the enqueue option group)'),
};

const GraphNode = z
  .object({
    id: z.string().describe('the node id, unique in the workflow'),
    ...taskFields,
    dependsOn: z.array(z.string()).optional().describe('the nodes it waits on; their results reach it in this order'),
    runOnFailure: z.boolean().optional().describe('run even when a parent failed'),
  })
  .strict();

const WorkflowBody = z
  .object({
    id: z.string().optional(),
    name: z.string().optional(),
    failFast: z.boolean().optional().describe('a failed node cancels the rest (default true)'),
    retention: z.number().optional().describe('ms the finished workflow is kept (default 7 days)'),
    nodes: z.array(GraphNode).min(1).describe('the nodes, at most 10,000'),
    onFinish: z.object(taskFields).omit({ payload: true }).strict().optional().describe('a task run once when the workflow ends, with {workflowId, state, completed, failed, cancelled} as payload'),
  })
  .strict();

const NodeState = z.union([TaskState, z.literal('pending')]);
const WorkflowState = z.enum(WORKFLOW_STATES);

const NodeView = z.object({
  id: z.string(),
  type: z.string(),
  queue: z.string(),
  state: NodeState,
  task_id: z.string().nullable().describe('its task; null while it has none: not started, cancelled before it started, or deleted by its retention'),
  depends_on: z.array(z.string()),
  waiting_on: z.array(z.string()).describe('why a pending node has not started: the parents it still waits on (not completed; for run_on_failure, not ended); empty otherwise'),
  run_on_failure: z.boolean(),
  result: z.unknown(),
  error: z.string().nullable(),
});

const WorkflowView = z.object({
  id: z.string(),
  name: z.string().nullable(),
  state: WorkflowState,
  fail_fast: z.boolean(),
  created_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  on_finish_task_id: z.string().nullable(),
  counts: z.record(z.number()).describe('nodes by state'),
  nodes: z.array(NodeView),
});

const WorkflowList = z.object({ workflows: z.array(WorkflowView.omit({ nodes: true })), next_cursor: z.string().nullable() });
const WorkflowParams = z.object({ id: z.string().min(1).max(200) }).strict();
const ListQuery = z
  .object({
    state: WorkflowState.optional(),
    limit: z.coerce.number().int().min(1).max(1000).optional(),
    cursor: z.string().max(500).optional(),
  })
  .strict();

const errors = {
  400: { description: 'invalid input' },
  401: { description: 'no valid token' },
  403: { description: 'read-only token' },
  404: { description: 'no such workflow' },
  503: { description: 'store unreachable' },
};

function header(wf: WorkflowInfo) {
  return {
    id: wf.id, name: wf.name, state: wf.state, fail_fast: wf.failFast, created_at: iso(wf.createdAt), finished_at: iso(wf.finishedAt),
    on_finish_task_id: wf.onFinishTaskId, counts: wf.counts,
  };
}

export function workflowView(wf: WorkflowInfo) {
  return {
    ...header(wf),
    nodes: wf.nodes.map((n) => ({
      id: n.id, type: n.type, queue: n.queue, state: n.state, task_id: n.taskId, depends_on: n.dependsOn, waiting_on: n.waitingOn, run_on_failure: n.runOnFailure,
      result: n.result, error: n.error,
    })),
  };
}

export function workflowRoutes(ctx: ServerContext): AnyRoute[] {
  const announce = (what: string, id: string) => ctx.hub.publish({ name: `workflow.${what}`, queue: null, type: null, data: { id, at: Date.now() } });
  const get = async (id: string) => {
    const wf = await ctx.client.getWorkflow(id);
    if (wf === null) throw new TasklineError('TL_WORKFLOW_NOT_FOUND', `no workflow with id ${JSON.stringify(id)}`);
    return wf;
  };
  return [
    defineRoute({
      method: 'POST',
      url: '/api/v1/workflows',
      summary: 'Create a workflow from its graph form and start its first nodes (atomically)',
      tag: 'workflows',
      access: 'admin',
      body: WorkflowBody,
      // Up to 10,000 nodes with their payloads.
      bodyLimit: MAX_WORKFLOW_PAYLOAD_BYTES + 4 * 1024 * 1024,
      responses: {
        201: { description: 'created', schema: WorkflowView },
        409: { description: 'the id exists' },
        413: { description: 'body too large' },
        422: { description: 'a bad graph or payload (TL_INVALID_WORKFLOW, naming the node)' },
        ...errors,
      },
      handler: async ({ body, reply }) => {
        const { root, options } = fromGraphForm(body);
        const { id } = await ctx.client.enqueueWorkflow(root, options);
        return reply.status(201).send(workflowView(await get(id)));
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/api/v1/workflows',
      summary: 'Workflows, newest first, optionally of one state, a page at a time',
      tag: 'workflows',
      access: 'read',
      query: ListQuery,
      responses: { 200: { description: 'a page of workflows (without their nodes)', schema: WorkflowList }, ...errors },
      handler: async ({ query }) => {
        const page = await ctx.client.listWorkflows({ state: query.state, limit: query.limit, cursor: query.cursor });
        return { workflows: page.workflows.map(header), next_cursor: page.nextCursor };
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/api/v1/workflows/:id',
      summary: 'One workflow with every node’s state, task id, result and error',
      tag: 'workflows',
      access: 'read',
      params: WorkflowParams,
      responses: { 200: { description: 'the workflow', schema: WorkflowView }, ...errors },
      handler: async ({ params }) => workflowView(await get(params.id)),
    }),
    defineRoute({
      method: 'POST',
      url: '/api/v1/workflows/:id/cancel',
      summary: 'Cancel every node not finished: waiting ones at once, running ones get their signal aborted',
      tag: 'workflows',
      access: 'admin',
      params: WorkflowParams,
      responses: { 200: { description: 'the workflow after the cancel', schema: WorkflowView }, 409: { description: 'the workflow has finished' }, ...errors },
      handler: async ({ params }) => {
        const wf = await ctx.client.cancelWorkflow(params.id);
        announce('cancel-requested', params.id);
        return workflowView(wf);
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/api/v1/workflows/:id/retry',
      summary: 'Run a failed or cancelled workflow’s dead and cancelled nodes again, keeping completed results',
      tag: 'workflows',
      access: 'admin',
      params: WorkflowParams,
      responses: { 200: { description: 'the workflow, running again', schema: WorkflowView }, 409: { description: 'the workflow is running or completed' }, ...errors },
      handler: async ({ params }) => workflowView(await ctx.client.retryWorkflow(params.id)),
    }),
  ];
}
