/** The parents' results of the workflow nodes among claimed tasks, read before their handlers start. */
import type { Backend, ClaimedTask } from '../backend/contract.js';
import { TasklineError } from '../core/errors.js';
import type { AttemptContext } from './context.js';

/**
 * What the claim handed over (Redis hands each node its inputs), else one store call for the
 * other workflow nodes of a claim (none when there is none: the common case costs a scan of the
 * links). On a store error each node gets the error, thrown when its handler reads
 * `ctx.parent(s)`: the attempt fails and is retried like any other failure.
 */
export async function workflowInputsOf(backend: Backend, tasks: ClaimedTask[]): Promise<Array<AttemptContext['inputs']> | null> {
  let nodes: Array<{ workflowId: string; node: string; index: number }> | null = null;
  let inputs: Array<AttemptContext['inputs']> | null = null;
  for (const [index, task] of tasks.entries()) {
    const { workflowId, workflowNode } = task.links;
    if (workflowId === undefined || workflowNode === undefined) continue;
    inputs ??= new Array<AttemptContext['inputs']>(tasks.length).fill(null);
    if (task.inputs !== undefined) inputs[index] = task.inputs;
    else (nodes ??= []).push({ workflowId, node: workflowNode, index });
  }
  if (nodes === null || inputs === null) return inputs;
  const out = inputs;
  try {
    const read = await backend.workflowInputs(nodes.map(({ workflowId, node }) => ({ workflowId, node })));
    nodes.forEach(({ index }, i) => (out[index] = read[i] ?? { parents: [] }));
  } catch (error) {
    const failure = new TasklineError('TL_STORE_UNAVAILABLE', `the results of this workflow node's parents could not be read: ${(error as Error).message}`, { cause: error });
    for (const { index } of nodes) out[index] = failure;
  }
  return out;
}
