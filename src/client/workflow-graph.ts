/**
 * The graph form of a workflow — JSON, for the HTTP API and `taskline workflow run --file`:
 * `{ id?, name?, failFast?, retention?, nodes: [{ id, type, payload?, dependsOn?, runOnFailure?,
 * queue?, maxRetries?, timeout?, delay?, runAt?, deadline?, retention?, headers?, group? }], onFinish? }`.
 * Nodes keep the order of the array (their results arrive in dependsOn order).
 */
import { TasklineError } from '../core/errors.js';
import { quote } from '../core/validate.js';
import { task, type GraphPart, type TaskPart, type WorkflowTaskOptions } from '../core/workflow.js';
import type { WorkflowOptions } from './workflow-plan.js';

const NODE_FIELDS = ['id', 'type', 'payload', 'dependsOn', 'runOnFailure', 'queue', 'maxRetries', 'timeout', 'delay', 'runAt', 'deadline', 'retention', 'headers', 'group'] as const;
const TASK_FIELDS = ['type', 'payload', 'queue', 'maxRetries', 'timeout', 'delay', 'runAt', 'deadline', 'retention', 'headers', 'group'] as const;
const TOP_FIELDS = ['id', 'name', 'failFast', 'retention', 'nodes', 'onFinish'] as const;

function invalid(message: string): TasklineError {
  return new TasklineError('TL_INVALID_WORKFLOW', message);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkFields(value: Record<string, unknown>, accepted: readonly string[], where: string): void {
  for (const key of Object.keys(value)) {
    if (!accepted.includes(key)) throw invalid(`${where}: unknown field ${quote(key)}; accepted: ${accepted.join(', ')}`);
  }
}

function taskOf(value: Record<string, unknown>, where: string, extra: Partial<WorkflowTaskOptions>): TaskPart {
  if (typeof value.type !== 'string' || value.type === '') throw invalid(`${where}: type must be a non-empty string, got ${quote(value.type)}`);
  const options: Record<string, unknown> = { ...extra };
  for (const key of TASK_FIELDS) if (key !== 'type' && key !== 'payload' && value[key] !== undefined) options[key] = value[key];
  return task(value.type, value.payload ?? null, options as WorkflowTaskOptions);
}

/** Reads the graph form into a workflow part and its options; TL_INVALID_WORKFLOW names the field or node. */
export function fromGraphForm(document: unknown): { root: GraphPart; options: WorkflowOptions } {
  if (!isObject(document)) throw invalid(`a workflow is an object { nodes: [...] }, got ${quote(document)}`);
  checkFields(document, TOP_FIELDS, 'workflow');
  if (!Array.isArray(document.nodes) || document.nodes.length === 0) throw invalid('workflow: nodes must be a non-empty array of { id, type, … }');
  const nodes: Record<string, TaskPart> = Object.create(null) as Record<string, TaskPart>;
  const order: string[] = [];
  document.nodes.forEach((node: unknown, index) => {
    const where = `nodes[${index}]`;
    if (!isObject(node)) throw invalid(`${where}: a node is an object { id, type, … }, got ${quote(node)}`);
    checkFields(node, NODE_FIELDS, where);
    if (typeof node.id !== 'string') throw invalid(`${where}: id must be a string, got ${quote(node.id)}`);
    if (Object.prototype.hasOwnProperty.call(nodes, node.id)) throw invalid(`node id ${quote(node.id)} is used twice; each node needs its own id`);
    const extra: Partial<WorkflowTaskOptions> = {};
    if (node.dependsOn !== undefined) extra.dependsOn = node.dependsOn as string[];
    if (node.runOnFailure !== undefined) extra.runOnFailure = node.runOnFailure as boolean;
    nodes[node.id] = taskOf(node, `node ${quote(node.id)}`, extra);
    order.push(node.id);
  });
  const options: WorkflowOptions = {};
  if (document.id !== undefined) options.id = document.id as string;
  if (document.name !== undefined) options.name = document.name as string;
  if (document.failFast !== undefined) options.failFast = document.failFast as boolean;
  if (document.retention !== undefined) options.retention = document.retention as number;
  if (document.onFinish !== undefined) {
    if (!isObject(document.onFinish)) throw invalid(`onFinish is a task { type, payload?, queue?, … }, got ${quote(document.onFinish)}`);
    checkFields(document.onFinish, TASK_FIELDS.filter((f) => f !== 'payload'), 'onFinish');
    options.onFinish = taskOf(document.onFinish, 'onFinish', {});
  }
  return { root: { kind: 'workflow', nodes, order }, options };
}
