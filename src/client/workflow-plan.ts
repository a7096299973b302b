/**
 * From builders to a stored workflow: compiles the parts (core/workflow.ts), validates each
 * node's task as an enqueue (payload, options, a defined task's schema) and names the node in
 * every error, and gives each node the id its task will have. And back: a stored workflow as the
 * client shows it, results decoded.
 */
import { uuidv7 } from '../core/ids.js';
import { TasklineError } from '../core/errors.js';
import { normalizeEnqueue, validateTaskId, type NormalizeContext } from '../core/options.js';
import { isTaskDefinition, validatePayload } from '../core/define-task.js';
import { compileWorkflow, type TaskPart, type WorkflowPart, type WorkflowNodeSpec } from '../core/workflow.js';
import { duration, isWellFormed, quote } from '../core/validate.js';
import type { NewTask } from '../core/task.js';
import type { NewWorkflow, WorkflowNodeRecord, WorkflowNodeState, WorkflowRecord, WorkflowTaskSpec } from '../backend/contract.js';
import { parseStoredJson } from '../backend/shared.js';

/** Most bytes of JSON all the payloads of one workflow may have together. */
export const MAX_WORKFLOW_PAYLOAD_BYTES = 16 * 1024 * 1024;
const MAX_NAME_LENGTH = 200;

export interface WorkflowOptions {
  /** The workflow's id (the task id rules); default a new uuid. */
  id?: string;
  /** A name to show. */
  name?: string;
  /** A failed node cancels every node not started and aborts running ones. Default true. */
  failFast?: boolean;
  /** Runs once when the workflow ends, with `{ workflowId, state, completed, failed, cancelled }` as its payload. */
  onFinish?: TaskPart;
  /** ms the finished workflow (with its results) is kept. Default 7 days. */
  retention?: number;
}

/** Enqueue options a node (or onFinish) cannot take, and why: `option X is refused: why`. */
const NOT_FOR_NODES: Record<'id' | 'links' | 'uniqueFor' | 'uniqueKey', (onFinish: boolean) => string> = {
  id: (onFinish) => `the workflow gives ${onFinish ? 'its onFinish task' : 'each node'} its task id`,
  links: (onFinish) => `the workflow sets the links of ${onFinish ? 'its onFinish task' : 'each node'}`,
  uniqueFor: (onFinish) => `${onFinish ? "a workflow's onFinish task" : 'a workflow node'} cannot be unique (uniqueness is for single tasks)`,
  uniqueKey: (onFinish) => `${onFinish ? "a workflow's onFinish task" : 'a workflow node'} cannot be unique (uniqueness is for single tasks)`,
};
const NOT_FOR_NODES_LIST = Object.entries(NOT_FOR_NODES);

/**
 * A node's task as its handler will see it, checked like an enqueue, and the id made for it;
 * errors name the node (`where`: onFinish's name).
 */
function nodeTask(node: Pick<WorkflowNodeSpec, 'id' | 'type' | 'payload' | 'options' | 'definition'>, context: NormalizeContext, where?: string): { taskId: string; task: WorkflowTaskSpec } {
  try {
    for (const [key, why] of NOT_FOR_NODES_LIST) {
      if ((node.options as Record<string, unknown>)[key] !== undefined) throw new TasklineError('TL_INVALID_WORKFLOW', `option ${key} is refused: ${why(where !== undefined)}`);
    }
    const payload = node.definition ? validatePayload(node.definition, node.payload) : node.payload;
    const options = node.definition ? { ...node.definition.defaults, ...node.options } : node.options;
    const t: NewTask = normalizeEnqueue(node.type, payload, options, context);
    // Named one by one (a rest object is slow to read from: every node's record is made from it).
    // The id normalizeEnqueue made (uuidv7) is the node's; an id from defaults is not taken.
    const made = (options as { id?: unknown }).id === undefined && context.defaults.id === undefined;
    const task: WorkflowTaskSpec = {
      type: t.type, payload: t.payload, queue: t.queue, maxRetries: t.maxRetries, timeout: t.timeout, deadline: t.deadline, delay: t.delay, runAt: t.runAt,
      retention: t.retention, backoff: t.backoff, headers: t.headers, group: t.group,
    };
    return { taskId: made ? t.id : uuidv7(), task };
  } catch (error) {
    if (error instanceof TasklineError) throw new TasklineError('TL_INVALID_WORKFLOW', `${where ?? `node ${quote(node.id)}`}: ${error.message}`, { cause: error });
    throw error;
  }
}

/** Validates a workflow and makes it ready to store. Throws TL_INVALID_WORKFLOW naming the node; stores nothing. */
export function planWorkflow(root: WorkflowPart, options: WorkflowOptions | undefined, context: NormalizeContext): NewWorkflow {
  if (options !== undefined && (typeof options !== 'object' || options === null || Array.isArray(options))) {
    throw new TasklineError('TL_INVALID_WORKFLOW', `workflow options must be an object, got ${quote(options)}`);
  }
  const opts = options ?? {};
  const known = new Set(['id', 'name', 'failFast', 'onFinish', 'retention']);
  for (const key of Object.keys(opts)) {
    if (!known.has(key)) throw new TasklineError('TL_INVALID_WORKFLOW', `unknown workflow option ${quote(key)}; accepted: ${[...known].join(', ')}`);
  }
  const id = opts.id === undefined ? uuidv7() : wrap('workflow id', () => validateTaskId(opts.id, 'workflow id'));
  if (opts.name !== undefined && (typeof opts.name !== 'string' || opts.name.length > MAX_NAME_LENGTH || !isWellFormed(opts.name))) {
    throw new TasklineError('TL_INVALID_WORKFLOW', `workflow name must be a string of up to ${MAX_NAME_LENGTH} characters, got ${quote(opts.name)}`);
  }
  if (opts.failFast !== undefined && typeof opts.failFast !== 'boolean') throw new TasklineError('TL_INVALID_WORKFLOW', `failFast must be true or false, got ${quote(opts.failFast)}`);
  const retention = opts.retention === undefined ? null : wrap('retention', () => duration('TL_INVALID_WORKFLOW', 'retention', opts.retention));
  const compiled = compileWorkflow(root);
  let bytes = 0;
  const nodes = compiled.nodes.map((node) => {
    const { taskId, task } = nodeTask(node, context);
    bytes += Buffer.byteLength(task.payload);
    return { id: node.id, taskId, task, dependsOn: node.dependsOn, runOnFailure: node.runOnFailure };
  });
  if (bytes > MAX_WORKFLOW_PAYLOAD_BYTES) {
    throw new TasklineError('TL_INVALID_WORKFLOW', `the payloads of this workflow's nodes are ${bytes} bytes together; the most is ${MAX_WORKFLOW_PAYLOAD_BYTES}`);
  }
  let onFinish: NewWorkflow['onFinish'] = null;
  if (opts.onFinish !== undefined) {
    const part = opts.onFinish;
    if (typeof part !== 'object' || part === null || part.kind !== 'task') throw new TasklineError('TL_INVALID_WORKFLOW', `onFinish must be a task(…), got ${quote(part)}`);
    if (part.payload !== null) throw new TasklineError('TL_INVALID_WORKFLOW', 'onFinish takes no payload: it gets { workflowId, state, completed, failed, cancelled } when the workflow ends');
    // Its payload is the workflow's outcome, made at the end: only the type and options are checked.
    const defaults = isTaskDefinition(part.definition) ? part.definition.defaults : {};
    onFinish = nodeTask({ id: 'onFinish', type: part.type, payload: null, options: { ...defaults, ...part.options }, definition: null }, context, 'onFinish');
  }
  return { id, name: opts.name ?? null, failFast: opts.failFast ?? true, retention, nodes, onFinish, generatedTaskIds: true };
}

function wrap<T>(where: string, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (error instanceof TasklineError) throw new TasklineError('TL_INVALID_WORKFLOW', error.message, { cause: error });
    throw error;
  }
}

/** A node as the client shows it: its result decoded from JSON, and what a pending one waits on. */
export interface WorkflowNodeInfo extends Omit<WorkflowNodeRecord, 'result'> {
  result: unknown;
  /**
   * Why a pending node has not started: the parents it still waits on — those not completed, or
   * for a `runOnFailure` node those not ended. Empty for a node in any other state.
   */
  waitingOn: string[];
}

export interface WorkflowInfo extends Omit<WorkflowRecord, 'nodes'> {
  nodes: WorkflowNodeInfo[];
}

const ENDED: ReadonlySet<WorkflowNodeState> = new Set(['completed', 'dead', 'cancelled']);

export function toWorkflowInfo(record: WorkflowRecord): WorkflowInfo {
  const stateOf = new Map(record.nodes.map((n) => [n.id, n.state]));
  const waitingOn = (n: WorkflowNodeRecord) =>
    n.state !== 'pending' ? [] : n.dependsOn.filter((parent) => (n.runOnFailure ? !ENDED.has(stateOf.get(parent)!) : stateOf.get(parent) !== 'completed'));
  return { ...record, nodes: record.nodes.map((n) => ({ ...n, result: parseStoredJson(n.result), waitingOn: waitingOn(n) })) };
}
