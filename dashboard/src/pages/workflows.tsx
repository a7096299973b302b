/** Workflows: the list by state, and one workflow with its graph, its nodes and cancel / retry. */
import { useMemo } from 'react';
import { enc, post, useApi } from '../api';
import { ActionButton, Empty, ErrorBox, Loading, Pager, Section, StateBadge } from '../components/common';
import { clip, GRAPH_NODE_LIMIT, waitingOn, WorkflowGraph } from '../components/workflow-graph';
import { duration, json, localTime, n, relative } from '../format';
import { Link, setParams, useLocation, withParams } from '../router';
import { NODE_STATES, WORKFLOW_STATES, type NodeState, type Workflow, type WorkflowList, type WorkflowNode, type WorkflowState, type WorkflowSummary } from '../types';

/** Nodes in the table below the graph, a page at a time. */
const NODES_PAGE = 50;

const total = (counts: WorkflowSummary['counts']) => Object.values(counts).reduce((sum, c) => sum + (c ?? 0), 0);

/** "3 of 5 done" and a badge per node state present, in NODE_STATES order. */
function NodeCounts({ counts }: { counts: WorkflowSummary['counts'] }) {
  return (
    <>
      {n(counts.completed ?? 0)} of {n(total(counts))} done{' '}
      <span className="counts">
        {NODE_STATES.filter((s) => counts[s]).map((s) => (
          <span key={s} className={`badge state-${s}`}>
            {s} {n(counts[s])}
          </span>
        ))}
      </span>
    </>
  );
}

export function WorkflowsPage() {
  const { params } = useLocation();
  const state = (WORKFLOW_STATES as string[]).includes(params.get('state') ?? '') ? (params.get('state') as WorkflowState) : null;
  const cursor = params.get('cursor');
  const list = useApi<WorkflowList>(`/api/v1/workflows?limit=50${state ? `&state=${state}` : ''}${cursor ? `&cursor=${enc(cursor)}` : ''}`);
  return (
    <>
      <h1>Workflows</h1>
      <nav className="tabs" aria-label="workflow states">
        <Link to="/workflows" aria-current={state === null ? 'page' : undefined}>
          all
        </Link>
        {WORKFLOW_STATES.map((s) => (
          <Link key={s} to={`/workflows?state=${s}`} aria-current={s === state ? 'page' : undefined}>
            {s}
          </Link>
        ))}
      </nav>
      <ErrorBox error={list.error} />
      {!list.data ? (
        list.isError ? null : <Loading what="workflows" />
      ) : list.data.workflows.length === 0 ? (
        <Empty>{state ? `No ${state} workflows.` : 'No workflows yet: Client.enqueueWorkflow or POST /api/v1/workflows makes one.'}</Empty>
      ) : (
        <div className="table-wrap card">
          <table className="workflows">
            <thead>
              <tr>
                <th scope="col">id</th>
                <th scope="col">name</th>
                <th scope="col">state</th>
                <th scope="col">nodes</th>
                <th scope="col">created</th>
                <th scope="col">finished</th>
              </tr>
            </thead>
            <tbody>
              {list.data.workflows.map((w) => (
                <tr key={w.id} data-row tabIndex={-1}>
                  <th scope="row" className="mono">
                    <Link to={`/workflows/${enc(w.id)}`}>{w.id}</Link>
                  </th>
                  <td>{w.name ?? <span className="muted">–</span>}</td>
                  <td>
                    <StateBadge state={w.state} />
                  </td>
                  <td>
                    <NodeCounts counts={w.counts} />
                  </td>
                  <td title={w.created_at ?? ''}>{relative(w.created_at)}</td>
                  <td title={w.finished_at ?? ''}>{w.finished_at ? relative(w.finished_at) : '–'}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager nextCursor={list.data.next_cursor} cursor={cursor} onPage={(next) => setParams({ cursor: next })} />
        </div>
      )}
    </>
  );
}

export function WorkflowPage({ id }: { id: string }) {
  const base = `/api/v1/workflows/${enc(id)}`;
  const workflow = useApi<Workflow>(base);
  if (workflow.error) {
    return (
      <>
        <p className="crumbs">
          <Link to="/workflows">Workflows</Link> /
        </p>
        <h1 className="mono">{id}</h1>
        {workflow.error.status === 404 ? (
          <p className="error" role="alert">
            No workflow has this id: it never existed, or it finished and was removed when its retention ran out.
          </p>
        ) : (
          <ErrorBox error={workflow.error} />
        )}
      </>
    );
  }
  if (!workflow.data) return <Loading what="the workflow" />;
  const w = workflow.data;
  const retriable = w.state === 'failed' || w.state === 'cancelled';
  return (
    <>
      <p className="crumbs">
        <Link to="/workflows">Workflows</Link> / {w.state} /
      </p>
      <h1 className="mono">
        {w.id} <StateBadge state={w.state} />
      </h1>
      <div className="toolbar">
        <ActionButton
          label="Cancel"
          danger
          disabled={w.state !== 'running'}
          title={w.state === 'running' ? undefined : 'only a running workflow can be cancelled'}
          confirm={`Cancel workflow ${w.id}? Its waiting nodes are cancelled; running ones are asked to stop.`}
          run={() => post(`${base}/cancel`)}
        />
        <ActionButton
          label="Retry"
          disabled={!retriable}
          title={retriable ? undefined : 'only a failed or cancelled workflow can be retried'}
          confirm={`Retry workflow ${w.id}? Its dead and cancelled nodes run again; completed results are kept.`}
          run={() => post(`${base}/retry`)}
        />
      </div>
      <Section title="Workflow">
        <dl className="fields">
          <dt>name</dt>
          <dd>{w.name ?? <span className="muted">–</span>}</dd>
          <dt>nodes</dt>
          <dd>
            <NodeCounts counts={w.counts} />
          </dd>
          <dt>on failure</dt>
          <dd>{w.fail_fast ? 'fail fast: a failed node cancels the rest' : 'a failed node cancels only the nodes after it'}</dd>
          <dt>created</dt>
          <dd title={w.created_at ?? ''}>
            {localTime(w.created_at)} ({relative(w.created_at)})
          </dd>
          {w.finished_at ? (
            <>
              <dt>finished</dt>
              <dd title={w.finished_at}>
                {localTime(w.finished_at)}
                {w.created_at ? ` (took ${duration(Date.parse(w.finished_at) - Date.parse(w.created_at))})` : ''}
              </dd>
            </>
          ) : null}
          {w.on_finish_task_id ? (
            <>
              <dt>on finish</dt>
              <dd>
                <Link to={`/tasks/${enc(w.on_finish_task_id)}`} className="mono">
                  {w.on_finish_task_id}
                </Link>
              </dd>
            </>
          ) : null}
        </dl>
      </Section>
      <Section title="Graph">
        <p className="muted">
          {w.nodes.length > GRAPH_NODE_LIMIT
            ? `Each layer of its ${n(w.nodes.length)} nodes, counted by state; the nodes are listed below.`
            : 'Each node after the nodes it waits on; a started node opens its task.'}
        </p>
        <WorkflowGraph nodes={w.nodes} />
      </Section>
      <NodeTable nodes={w.nodes} counts={w.counts} />
    </>
  );
}

function Waiting({ node, stateOf }: { node: WorkflowNode; stateOf: Map<string, NodeState> }) {
  const { left, of } = waitingOn(node, stateOf);
  return (
    <div className="muted waiting">
      waiting on {n(left)} of {n(of)}
    </div>
  );
}

function NodeTable({ nodes, counts }: { nodes: WorkflowNode[]; counts: Workflow['counts'] }) {
  const { params } = useLocation();
  const state = (NODE_STATES as string[]).includes(params.get('node_state') ?? '') ? (params.get('node_state') as NodeState) : null;
  const from = Math.max(0, Number.parseInt(params.get('from') ?? '0', 10) || 0);
  const stateOf = useMemo(() => new Map(nodes.map((node) => [node.id, node.state])), [nodes]);
  const shown = state ? nodes.filter((node) => node.state === state) : nodes;
  const page = shown.slice(from, from + NODES_PAGE);
  const more = from + NODES_PAGE < shown.length;
  return (
    <Section title={`Nodes (${n(nodes.length)})`}>
      <nav className="tabs" aria-label="node states">
        <Link to={withParams({ node_state: null, from: null })} aria-current={state === null ? 'page' : undefined}>
          all <span className="count">{n(nodes.length)}</span>
        </Link>
        {NODE_STATES.filter((s) => counts[s]).map((s) => (
          <Link key={s} to={withParams({ node_state: s, from: null })} aria-current={s === state ? 'page' : undefined}>
            {s} <span className="count">{n(counts[s])}</span>
          </Link>
        ))}
      </nav>
      {page.length === 0 ? (
        <Empty>No {state} nodes.</Empty>
      ) : (
        <div className="table-wrap">
          <table className="nodes">
            <thead>
              <tr>
                <th scope="col">node</th>
                <th scope="col">state</th>
                <th scope="col">type</th>
                <th scope="col">queue</th>
                <th scope="col">depends on</th>
                <th scope="col">result / error</th>
                <th scope="col">task</th>
              </tr>
            </thead>
            <tbody>
              {page.map((node) => (
                <tr key={node.id} data-row tabIndex={-1}>
                  <th scope="row" className="mono">
                    {node.id}
                  </th>
                  <td>
                    <StateBadge state={node.state} />
                    {node.state === 'pending' && node.depends_on.length > 0 ? <Waiting node={node} stateOf={stateOf} /> : null}
                    {node.run_on_failure ? <div className="muted">runs on failure</div> : null}
                  </td>
                  <td>{node.type}</td>
                  <td>{node.queue}</td>
                  <td className="mono">
                    {node.depends_on.length === 0 ? '–' : node.depends_on.slice(0, 5).join(', ')}
                    {node.depends_on.length > 5 ? <span className="muted"> and {n(node.depends_on.length - 5)} more</span> : null}
                  </td>
                  <td className={node.error ? 'error-text' : 'mono'}>{node.error ? clip(node.error.split('\n')[0], 120) : node.result === null || node.result === undefined ? '' : clip(json(node.result).replace(/\s*\n\s*/g, ' '), 120)}</td>
                  <td className="mono">
                    {node.task_id === null ? (
                      <span className="muted">{node.state === 'pending' ? 'pending' : 'no task'}</span>
                    ) : (
                      <Link to={`/tasks/${enc(node.task_id)}`}>{node.task_id}</Link>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager nextCursor={more ? String(from + NODES_PAGE) : null} cursor={from > 0 ? String(from) : null} onPage={(next) => setParams({ from: next })} />
          {shown.length > NODES_PAGE ? (
            <p className="muted">
              {n(from + 1)}–{n(from + page.length)} of {n(shown.length)}
            </p>
          ) : null}
        </div>
      )}
    </Section>
  );
}
