/**
 * A workflow's graph in SVG, drawn here (no graph library): nodes in layers from left to right —
 * a node's layer is one more than the deepest of its parents', roots are layer 1 — in declared
 * order within a layer, with an edge from each parent to each child. Each box shows the node's
 * id, type and state in the task state colours; a started node links to its task. Above
 * GRAPH_NODE_LIMIT nodes each layer becomes one box of counts by state (the nodes table below the
 * graph lists the nodes themselves), so a 10,000-member chord stays a few boxes.
 */
import { enc } from '../api';
import { n } from '../format';
import { Link } from '../router';
import { NODE_STATES, type NodeState, type WorkflowNode } from '../types';

/** Above this many nodes the graph shows a summary box per layer instead of a box per node. */
export const GRAPH_NODE_LIMIT = 200;
/** The most summary boxes drawn: beyond it, neighbouring layers share a box. */
const MAX_SUMMARY_BOXES = 200;

const BOX_W = 200;
const BOX_H = 58;
const COL_GAP = 56;
const ROW_GAP = 14;
const PAD = 8;
const LINE = 16;

/**
 * The layer of each node (0-based here, shown from 1) and the layers in declared order. Parents
 * may be declared after their children, and a chain may be 10,000 long: no recursion. A parent
 * that is no node is ignored; a node on a cycle (the store refuses them) goes after the rest.
 */
export function layerNodes(nodes: WorkflowNode[]): { layers: WorkflowNode[][]; layerOf: Map<string, number> } {
  const index = new Map(nodes.map((node, i) => [node.id, i]));
  const children: number[][] = nodes.map(() => []);
  const waiting = nodes.map(() => 0);
  nodes.forEach((node, i) => {
    for (const parent of node.depends_on) {
      const p = index.get(parent);
      if (p === undefined) continue;
      children[p].push(i);
      waiting[i] += 1;
    }
  });
  const layer = nodes.map(() => 0);
  const ready = nodes.map((_, i) => i).filter((i) => waiting[i] === 0);
  let placed = 0;
  for (let head = 0; head < ready.length; head++) {
    const i = ready[head];
    placed += 1;
    for (const c of children[i]) {
      layer[c] = Math.max(layer[c], layer[i] + 1);
      if (--waiting[c] === 0) ready.push(c);
    }
  }
  if (placed < nodes.length) {
    const after = Math.max(0, ...layer) + 1;
    waiting.forEach((w, i) => {
      if (w > 0) layer[i] = after;
    });
  }
  const layers: WorkflowNode[][] = [];
  const layerOf = new Map<string, number>();
  nodes.forEach((node, i) => {
    (layers[layer[i]] ??= []).push(node);
    layerOf.set(node.id, layer[i]);
  });
  return { layers: layers.filter((l) => l !== undefined), layerOf };
}

/** How many of a node's parents have not completed yet, of how many it has. */
export function waitingOn(node: WorkflowNode, stateOf: Map<string, NodeState>): { left: number; of: number } {
  return { left: node.depends_on.filter((p) => stateOf.get(p) !== 'completed').length, of: node.depends_on.length };
}

/** "pending · waiting on 1 of 2" for a pending node with parents; else its state. */
export function nodeStateText(node: WorkflowNode, stateOf: Map<string, NodeState>): string {
  if (node.state !== 'pending' || node.depends_on.length === 0) return node.state;
  const { left, of } = waitingOn(node, stateOf);
  return `pending · waiting on ${n(left)} of ${n(of)}`;
}

export const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** A parent's right edge to a child's left edge, as a gentle S. */
function edgePath(x1: number, y1: number, x2: number, y2: number): string {
  const dx = Math.max(16, (x2 - x1) / 2);
  return `M ${x1} ${y1} C ${x1 + dx} ${y1}, ${x2 - dx} ${y2}, ${x2} ${y2}`;
}

function Arrow() {
  return (
    <defs>
      <marker id="wf-arrow" className="wf-arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" markerHeight="7" orient="auto">
        <path d="M 0 0 L 8 4 L 0 8 z" />
      </marker>
    </defs>
  );
}

export function WorkflowGraph({ nodes }: { nodes: WorkflowNode[] }) {
  const { layers, layerOf } = layerNodes(nodes);
  const label = `graph of ${n(nodes.length)} node(s) in ${n(layers.length)} layer(s)`;
  return (
    <div className="graph-wrap" role="region" aria-label={label} tabIndex={0}>
      {nodes.length > GRAPH_NODE_LIMIT ? <LayerSummaries nodes={nodes} layers={layers} layerOf={layerOf} /> : <NodeBoxes nodes={nodes} layers={layers} />}
    </div>
  );
}

function NodeBoxes({ nodes, layers }: { nodes: WorkflowNode[]; layers: WorkflowNode[][] }) {
  const stateOf = new Map(nodes.map((node) => [node.id, node.state]));
  const rows = Math.max(...layers.map((l) => l.length));
  const height = PAD * 2 + rows * BOX_H + (rows - 1) * ROW_GAP;
  const width = PAD * 2 + layers.length * BOX_W + (layers.length - 1) * COL_GAP;
  const at = new Map<string, { x: number; y: number }>();
  layers.forEach((layer, col) => {
    const top = PAD + ((rows - layer.length) * (BOX_H + ROW_GAP)) / 2;
    layer.forEach((node, row) => at.set(node.id, { x: PAD + col * (BOX_W + COL_GAP), y: top + row * (BOX_H + ROW_GAP) }));
  });
  return (
    <svg className="wf-graph" width={width} height={height} viewBox={`0 0 ${width} ${height}`} role="group" aria-label="the workflow's nodes">
      <Arrow />
      <g className="wf-edges" aria-hidden="true">
        {nodes.flatMap((node) => {
          const to = at.get(node.id)!;
          return node.depends_on.map((parent) => {
            const from = at.get(parent);
            if (!from) return null;
            return (
              <path
                key={`${parent}\u0000${node.id}`}
                className={`wf-edge${stateOf.get(parent) === 'completed' ? ' done' : ''}`}
                d={edgePath(from.x + BOX_W, from.y + BOX_H / 2, to.x, to.y + BOX_H / 2)}
                markerEnd="url(#wf-arrow)"
              />
            );
          });
        })}
      </g>
      {nodes.map((node) => {
        const { x, y } = at.get(node.id)!;
        const state = nodeStateText(node, stateOf);
        const box = (
          <g className={`wf-node state-${node.state}`} transform={`translate(${x} ${y})`}>
            <title>{`${node.id} (${node.type} on ${node.queue}): ${state}`}</title>
            <rect width={BOX_W} height={BOX_H} rx={5} />
            <text x={8} y={17} className="wf-id">
              {clip(node.id, 24)}
            </text>
            <text x={8} y={33} className="wf-type">
              {clip(node.type, 28)}
            </text>
            <text x={8} y={50} className="wf-state">
              {state}
            </text>
          </g>
        );
        // A node without a task (pending, cancelled before it started, or its task deleted): nothing to open.
        return node.task_id === null ? (
          <g key={node.id} data-node={node.id}>
            {box}
          </g>
        ) : (
          <Link key={node.id} to={`/tasks/${enc(node.task_id)}`} data-node={node.id}>
            {box}
          </Link>
        );
      })}
    </svg>
  );
}

interface Band {
  first: number;
  last: number;
  nodes: number;
  counts: [NodeState, number][];
}

function LayerSummaries({ nodes, layers, layerOf }: { nodes: WorkflowNode[]; layers: WorkflowNode[][]; layerOf: Map<string, number> }) {
  // Neighbouring layers share a box when there are more layers than boxes to draw.
  const size = Math.ceil(layers.length / MAX_SUMMARY_BOXES);
  const bands: Band[] = [];
  for (let first = 0; first < layers.length; first += size) {
    const members = layers.slice(first, first + size).flat();
    const counts = new Map<NodeState, number>();
    for (const node of members) counts.set(node.state, (counts.get(node.state) ?? 0) + 1);
    bands.push({ first, last: Math.min(layers.length, first + size) - 1, nodes: members.length, counts: NODE_STATES.filter((s) => counts.has(s)).map((s) => [s, counts.get(s)!]) });
  }
  // A line for the layers, one for the node count, one per state.
  const heightOf = (band: Band) => PAD + LINE * (band.counts.length + 2) + PAD;
  const tallest = Math.max(...bands.map(heightOf));
  const height = PAD * 2 + tallest;
  const width = PAD * 2 + bands.length * BOX_W + (bands.length - 1) * COL_GAP;
  const x = (band: number) => PAD + band * (BOX_W + COL_GAP);
  const links = new Set<string>();
  for (const node of nodes) {
    const to = Math.floor(layerOf.get(node.id)! / size);
    for (const parent of node.depends_on) {
      const p = layerOf.get(parent);
      if (p !== undefined && Math.floor(p / size) !== to) links.add(`${Math.floor(p / size)}:${to}`);
    }
  }
  return (
    <svg className="wf-graph" width={width} height={height} viewBox={`0 0 ${width} ${height}`} role="group" aria-label="the workflow's layers, with their nodes counted by state">
      <Arrow />
      <g className="wf-edges" aria-hidden="true">
        {[...links].map((key) => {
          const [from, to] = key.split(':').map(Number);
          return <path key={key} className="wf-edge" d={edgePath(x(from) + BOX_W, height / 2, x(to), height / 2)} markerEnd="url(#wf-arrow)" />;
        })}
      </g>
      {bands.map((band, i) => {
        const top = PAD + (tallest - heightOf(band)) / 2;
        const name = band.first === band.last ? `layer ${band.first + 1}` : `layers ${band.first + 1}–${band.last + 1}`;
        return (
          <g key={band.first} className="wf-node wf-layer" transform={`translate(${x(i)} ${top})`}>
            <rect width={BOX_W} height={heightOf(band)} rx={5} />
            <text x={8} y={PAD + 12} className="wf-id">
              {name}
            </text>
            <text x={8} y={PAD + 12 + LINE} className="wf-type">
              {n(band.nodes)} node{band.nodes === 1 ? '' : 's'}
            </text>
            {band.counts.map(([state, count], line) => (
              <text key={state} x={8} y={PAD + 12 + LINE * (line + 2)} className={`wf-count state-${state}`}>
                {state} {n(count)}
              </text>
            ))}
          </g>
        );
      })}
    </svg>
  );
}
