/**
 * Workflows as data: the builders `task`, `chain`, `group`, `chord` and `workflow`, and
 * `compileWorkflow`, which turns what they build into the graph a store keeps — nodes with ids
 * and the parents each waits on — validated before anything is stored.
 *
 * Glossary
 * - node: one task of a workflow; its id is the key in `workflow({ nodes })`, the `node` option
 *   of `task(…)`, or else a number ('0', '1', …) given depth-first in declared order.
 * - parents: the nodes a node waits on (its `dependsOn`, in declared order); a node without
 *   parents starts with the workflow. Children are the reverse.
 * - roots and sinks of a part: the nodes of a nested part that start it and that end it; a chain
 *   makes every root of a part wait on every sink of the part before it.
 *
 * Pure: no store, no clock. The payloads are checked and sized by the caller (the client) with
 * the usual enqueue rules; here only the shape of the graph is checked.
 */
import { TasklineError } from './errors.js';
import type { EnqueueOptions } from './options.js';
import { isTaskDefinition, type TaskDefinition } from './define-task.js';
import { isWellFormed, quote } from './validate.js';

/** The most nodes one workflow may have. */
export const MAX_WORKFLOW_NODES = 10_000;
/** The most edges (parent → child) one workflow may have: a chain of two groups of n and m has n × m. */
export const MAX_WORKFLOW_EDGES = 100_000;
/** Node ids: like task ids, up to this many characters. */
const MAX_NODE_ID_LENGTH = 200;
// Control characters (C0, DEL, C1): not in an id.
const CONTROL = /\p{Cc}/u;

export interface WorkflowTaskOptions extends Omit<EnqueueOptions, 'id'> {
  /** The node's id (chain, group, chord); in `workflow({ nodes })` the key names it. */
  node?: string;
  /** The nodes this one waits on, by id (in `workflow({ nodes })`). */
  dependsOn?: string[];
  /** Run even when a parent failed (the failure shows in `ctx.parents`). Default false. */
  runOnFailure?: boolean;
}

export interface TaskPart {
  readonly kind: 'task';
  readonly type: string;
  readonly payload: unknown;
  readonly options: WorkflowTaskOptions;
  readonly definition: TaskDefinition | null;
}
export interface ChainPart {
  readonly kind: 'chain';
  readonly parts: readonly WorkflowPart[];
}
export interface GroupPart {
  readonly kind: 'group';
  readonly parts: readonly WorkflowPart[];
}
export interface ChordPart {
  readonly kind: 'chord';
  readonly header: GroupPart;
  readonly callback: WorkflowPart;
}
export interface GraphPart {
  readonly kind: 'workflow';
  readonly nodes: Readonly<Record<string, TaskPart>>;
  /** The nodes' declared order when it is not the keys' (integer-like keys come first in an object). */
  readonly order?: readonly string[];
}
export type WorkflowPart = TaskPart | ChainPart | GroupPart | ChordPart | GraphPart;

/** One task of a workflow: a type (or a defined task), its payload and its options. */
export function task<P>(type: string | TaskDefinition<P, unknown, unknown>, payload?: P, options: WorkflowTaskOptions = {}): TaskPart {
  const definition = isTaskDefinition(type) ? (type as TaskDefinition) : null;
  const name = definition ? definition.type : type;
  if (typeof name !== 'string' || name === '') throw invalid(`task(…) needs a task type (a non-empty string or a defined task), got ${quote(type)}`);
  return { kind: 'task', type: name, payload: payload === undefined ? null : payload, options, definition };
}

/** Parts that run one after the other: each starts when the one before it has finished. */
export function chain(...parts: WorkflowPart[]): ChainPart {
  return { kind: 'chain', parts };
}

/** Parts that run side by side; the group finishes when all of them have. */
export function group(...parts: WorkflowPart[]): GroupPart {
  return { kind: 'group', parts };
}

/** A group, then `callback` once, after every member completed (it sees their results in order). */
export function chord(header: GroupPart | WorkflowPart[], callback: WorkflowPart): ChordPart {
  return { kind: 'chord', header: Array.isArray(header) ? group(...header) : header, callback };
}

/** The general graph: nodes by id, each naming the nodes it waits on in `dependsOn`. */
export function workflow(definition: { nodes: Record<string, TaskPart> }): GraphPart {
  return { kind: 'workflow', nodes: definition.nodes };
}

/** A node's options without node, dependsOn and runOnFailure: what its task's enqueue takes. */
function withoutWorkflowOptions(options: WorkflowTaskOptions): WorkflowNodeSpec['options'] {
  const { node: _node, dependsOn: _dependsOn, runOnFailure: _runOnFailure, ...rest } = options;
  return rest;
}

/** A node of a compiled workflow. */
export interface WorkflowNodeSpec {
  id: string;
  type: string;
  payload: unknown;
  /** The enqueue options of its task (without the workflow's own: node, dependsOn, runOnFailure). */
  options: Omit<WorkflowTaskOptions, 'node' | 'dependsOn' | 'runOnFailure'>;
  definition: TaskDefinition | null;
  /** The nodes it waits on, in declared order (its results arrive in this order). */
  dependsOn: string[];
  runOnFailure: boolean;
}

/** A workflow ready to store: its nodes in declared order, every parent named before use. */
export interface CompiledWorkflow {
  nodes: WorkflowNodeSpec[];
  /** The nodes that start with the workflow. */
  roots: string[];
}

interface Compiled {
  roots: string[];
  sinks: string[];
}

/**
 * Compiles a builder's result into nodes and edges, and checks the graph: node ids unique and
 * well formed, every `dependsOn` naming a node, no cycle, no empty chain or group, at most
 * MAX_WORKFLOW_NODES nodes. A problem is TL_INVALID_WORKFLOW naming the node.
 */
export function compileWorkflow(root: WorkflowPart): CompiledWorkflow {
  const nodes: WorkflowNodeSpec[] = [];
  const byId = new Map<string, WorkflowNodeSpec>();
  let counter = 0;

  const add = (part: TaskPart, id: string, dependsOn: string[]): WorkflowNodeSpec => {
    if (typeof id !== 'string' || id === '' || id.length > MAX_NODE_ID_LENGTH || CONTROL.test(id) || !isWellFormed(id)) {
      throw invalid(`node id ${quote(id)} is not accepted: 1 to ${MAX_NODE_ID_LENGTH} characters of Unicode text (no lone surrogate), no control characters`);
    }
    if (byId.has(id)) throw invalid(`node id ${quote(id)} is used twice; each node needs its own id`);
    if (nodes.length >= MAX_WORKFLOW_NODES) throw invalid(`a workflow has at most ${MAX_WORKFLOW_NODES.toLocaleString('en')} nodes; this one has more`);
    const given = part.options;
    const runOnFailure = given.runOnFailure;
    // The workflow's own options taken out (a copy only when one is there: most nodes have none).
    // (`in`, not undefined: a key given as undefined must go too, or the enqueue check refuses it.)
    const options = !('node' in given) && !('dependsOn' in given) && !('runOnFailure' in given) ? given : withoutWorkflowOptions(given);
    if (runOnFailure !== undefined && typeof runOnFailure !== 'boolean') throw invalid(`node ${quote(id)}: runOnFailure must be true or false, got ${quote(runOnFailure)}`);
    const spec: WorkflowNodeSpec = { id, type: part.type, payload: part.payload, options, definition: part.definition, dependsOn, runOnFailure: runOnFailure === true };
    nodes.push(spec);
    byId.set(id, spec);
    return spec;
  };

  const walk = (part: WorkflowPart, after: string[], where: string): Compiled => {
    if (typeof part !== 'object' || part === null || !('kind' in part)) {
      throw invalid(`${where} is not a workflow part (task, chain, group, chord or workflow), got ${quote(part)}`);
    }
    switch (part.kind) {
      case 'task': {
        if (part.options.dependsOn !== undefined) {
          throw invalid(`${where}: dependsOn names nodes of workflow({ nodes }); in a chain, group or chord the order says what waits on what`);
        }
        const id = part.options.node ?? String(counter++);
        add(part, id, [...after]);
        return { roots: [id], sinks: [id] };
      }
      case 'chain': {
        if (part.parts.length === 0) throw invalid(`${where}: chain() needs at least one part`);
        let previous = after;
        let roots: string[] = [];
        part.parts.forEach((p, i) => {
          const compiled = walk(p, previous, `${where} › chain part ${i}`);
          if (i === 0) roots = compiled.roots;
          previous = compiled.sinks;
        });
        return { roots, sinks: previous };
      }
      case 'group': {
        if (part.parts.length === 0) throw invalid(`${where}: group() needs at least one part`);
        const compiled = part.parts.map((p, i) => walk(p, after, `${where} › group part ${i}`));
        return { roots: compiled.flatMap((c) => c.roots), sinks: compiled.flatMap((c) => c.sinks) };
      }
      case 'chord': {
        const header = walk(part.header, after, `${where} › chord header`);
        const callback = walk(part.callback, header.sinks, `${where} › chord callback`);
        return { roots: header.roots, sinks: callback.sinks };
      }
      case 'workflow':
        return walkGraph(part, after, where);
      default:
        throw invalid(`${where} is not a workflow part (task, chain, group, chord or workflow), got ${quote(part)}`);
    }
  };

  const walkGraph = (part: GraphPart, after: string[], where: string): Compiled => {
    const entries: Array<[string, TaskPart]> = part.order ? part.order.map((id) => [id, part.nodes[id]]) : Object.entries(part.nodes ?? {});
    if (entries.length === 0) throw invalid(`${where}: workflow({ nodes }) needs at least one node`);
    const local = new Set(entries.map(([id]) => id));
    const added: WorkflowNodeSpec[] = [];
    for (const [id, node] of entries) {
      if (typeof node !== 'object' || node === null || node.kind !== 'task') throw invalid(`node ${quote(id)}: a node of workflow({ nodes }) is a task(…), got ${quote(node)}`);
      const deps = node.options.dependsOn ?? [];
      if (!Array.isArray(deps) || deps.some((d) => typeof d !== 'string')) throw invalid(`node ${quote(id)}: dependsOn must be an array of node ids, got ${quote(deps)}`);
      for (const dep of deps) {
        if (!local.has(dep)) throw invalid(`node ${quote(id)} depends on ${quote(dep)}, which is no node of this workflow (its nodes: ${[...local].slice(0, 10).map(quote).join(', ')}${local.size > 10 ? ', …' : ''})`);
        if (dep === id) throw invalid(`node ${quote(id)} depends on itself`);
      }
      if (new Set(deps).size !== deps.length) throw invalid(`node ${quote(id)} names a node twice in dependsOn`);
      const { dependsOn: _d, ...rest } = node.options;
      // Nodes that depend on nothing here wait on what came before the graph.
      added.push(add({ ...node, options: rest }, id, deps.length === 0 ? [...after] : [...deps]));
    }
    checkAcyclic(added);
    const depended = new Set(added.flatMap((n) => n.dependsOn));
    return { roots: added.filter((n) => !n.dependsOn.some((d) => local.has(d))).map((n) => n.id), sinks: added.filter((n) => !depended.has(n.id)).map((n) => n.id) };
  };

  walk(root, [], 'the workflow');
  const edges = nodes.reduce((sum, n) => sum + n.dependsOn.length, 0);
  if (edges > MAX_WORKFLOW_EDGES) {
    throw invalid(`this workflow has ${edges.toLocaleString('en')} dependencies; the most is ${MAX_WORKFLOW_EDGES.toLocaleString('en')} (a chain of two groups of n and m makes n × m: put a task between them)`);
  }
  return { nodes, roots: nodes.filter((n) => n.dependsOn.length === 0).map((n) => n.id) };
}

/** Throws naming a node on a cycle of `nodes` (Kahn's algorithm over their edges among themselves). */
function checkAcyclic(nodes: WorkflowNodeSpec[]): void {
  const ids = new Set(nodes.map((n) => n.id));
  const waiting = new Map(nodes.map((n) => [n.id, n.dependsOn.filter((d) => ids.has(d)).length]));
  const children = new Map<string, string[]>();
  for (const n of nodes) for (const d of n.dependsOn) if (ids.has(d)) children.set(d, [...(children.get(d) ?? []), n.id]);
  const ready = nodes.filter((n) => waiting.get(n.id) === 0).map((n) => n.id);
  let done = 0;
  while (ready.length > 0) {
    const id = ready.pop()!;
    done += 1;
    for (const child of children.get(id) ?? []) {
      const left = waiting.get(child)! - 1;
      waiting.set(child, left);
      if (left === 0) ready.push(child);
    }
  }
  if (done < nodes.length) {
    const stuck = nodes.filter((n) => waiting.get(n.id)! > 0).map((n) => n.id);
    throw invalid(`the nodes ${stuck.slice(0, 10).map(quote).join(', ')}${stuck.length > 10 ? ', …' : ''} wait on each other in a cycle; a workflow's dependencies must not loop`);
  }
}

function invalid(message: string): TasklineError {
  return new TasklineError('TL_INVALID_WORKFLOW', message);
}
