/** Shared pieces of the workflow conformance tests: workflows sketched as the client makes them, and nodes moved along. */
import { expect } from 'vitest';
import { uuidv7 } from '../../core/ids.js';
import type { Backend, ClaimedTask, NewWorkflow, NewWorkflowNode } from '../contract.js';
import { ackOk, claimTask, completeAck, listAll, newTask } from './harness.js';

export interface NodeSketch {
  id: string;
  type?: string;
  queue?: string;
  dependsOn?: string[];
  runOnFailure?: boolean;
  maxRetries?: number;
  retention?: number;
  group?: string;
}

/**
 * A workflow as the client would make it, from a sketch of its nodes: its task ids new uuids
 * (generatedTaskIds, unless `generatedTaskIds: false`, for ids a test will give to other tasks).
 */
export function newWorkflow(
  nodes: NodeSketch[],
  options: { id?: string; failFast?: boolean; onFinish?: string; retention?: number; generatedTaskIds?: boolean } = {},
): NewWorkflow {
  return {
    generatedTaskIds: options.generatedTaskIds ?? true,
    id: options.id ?? `wf-${uuidv7()}`,
    name: null,
    failFast: options.failFast ?? true,
    retention: options.retention ?? null,
    nodes: nodes.map((n): NewWorkflowNode => {
      const { id: _id, links: _links, uniqueKey: _k, uniqueFor: _f, generatedId: _g, ...task } = newTask(n.type ?? `node:${n.id}`, { node: n.id }, {
        queue: n.queue, maxRetries: n.maxRetries, retention: n.retention, group: n.group,
      });
      return { id: n.id, taskId: uuidv7(), task, dependsOn: n.dependsOn ?? [], runOnFailure: n.runOnFailure ?? false };
    }),
    onFinish: options.onFinish === undefined ? null : { taskId: uuidv7(), task: stripped(options.onFinish) },
  };
}

function stripped(type: string) {
  const { id: _id, links: _links, uniqueKey: _k, uniqueFor: _f, generatedId: _g, ...task } = newTask(type, null, { queue: 'finish' });
  return task;
}

/** The task ids of a workflow's nodes, by node id. */
export function taskIds(wf: NewWorkflow): Record<string, string> {
  return Object.fromEntries(wf.nodes.map((n) => [n.id, n.taskId]));
}

/**
 * Claims the queued task of a node, checking it is that node's, and that the parents' outcomes
 * a claim hands over (a store may, ClaimedTask.inputs) are what workflowInputs reads.
 */
export async function claimNode(backend: Backend, wf: NewWorkflow, node: string, queue = 'default'): Promise<ClaimedTask> {
  const claimed = await claimTask(backend, taskIds(wf)[node], queue);
  expect(claimed.links).toMatchObject({ workflowId: wf.id, workflowNode: node });
  if (claimed.inputs !== undefined) expect(claimed.inputs).toEqual((await backend.workflowInputs([{ workflowId: wf.id, node }]))[0]);
  return claimed;
}

export async function complete(backend: Backend, wf: NewWorkflow, node: string, result: unknown = node, queue = 'default'): Promise<void> {
  await ackOk(backend, completeAck(await claimNode(backend, wf, node, queue), result));
}

export async function nodeStates(backend: Backend, id: string): Promise<Record<string, string>> {
  const record = (await backend.getWorkflow(id))!;
  return Object.fromEntries(record.nodes.map((n) => [n.id, n.state]));
}

/** Tasks of a type in a queue and state. */
export async function tasksOfType(backend: Backend, type: string, state: 'queued' | 'completed' = 'queued', queue = 'default'): Promise<string[]> {
  const ids = await listAll(backend, queue, state);
  const types = await Promise.all(ids.map(async (id) => (await backend.getTask(id))?.type));
  return ids.filter((_, i) => types[i] === type);
}

