-- 0009: workflows (backend/workflow-contract.ts). A workflow's nodes are rows of
-- workflow_nodes; a node's task is a row of tasks only from when it starts. workflow_edges is
-- each node's pending set: one row per parent that has not finished yet, deleted by the
-- transaction that finishes the parent, which starts the child when its last row goes.
CREATE TABLE workflows (
  id                TEXT PRIMARY KEY,
  name              TEXT,
  -- running | completed | failed | cancelled
  state             TEXT NOT NULL,
  fail_fast         INTEGER NOT NULL,
  -- 1 once a node failed; cancelling: 1 once cancelWorkflow was called (until a retry).
  failed            INTEGER NOT NULL DEFAULT 0,
  cancelling        INTEGER NOT NULL DEFAULT 0,
  -- Nodes not in a final state.
  open_nodes        INTEGER NOT NULL,
  created_at        INTEGER NOT NULL,
  finished_at       INTEGER,
  retention         INTEGER,
  -- finished_at + retention: when cleanup deletes the workflow.
  expires_at        INTEGER,
  -- The onFinish task as a JSON WorkflowTaskSpec, and the id of its current run.
  on_finish         TEXT,
  on_finish_task_id TEXT
);
CREATE INDEX workflows_by_created ON workflows (created_at, id);
CREATE INDEX workflows_by_state ON workflows (state, created_at, id);
CREATE INDEX workflows_by_expiry ON workflows (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE workflow_nodes (
  workflow_id    TEXT NOT NULL,
  node           TEXT NOT NULL,
  -- Declared order.
  seq            INTEGER NOT NULL,
  task_id        TEXT NOT NULL,
  type           TEXT NOT NULL,
  queue          TEXT NOT NULL,
  -- The task to enqueue when the node starts: JSON WorkflowTaskSpec.
  spec           TEXT NOT NULL,
  -- JSON array of parent node ids, declared order.
  depends_on     TEXT NOT NULL,
  run_on_failure INTEGER NOT NULL,
  -- pending (not started) | started (its task's state is the node's) | completed | dead | cancelled
  state          TEXT NOT NULL,
  result         TEXT,
  error          TEXT,
  PRIMARY KEY (workflow_id, node)
) WITHOUT ROWID;
CREATE UNIQUE INDEX workflow_nodes_by_task ON workflow_nodes (task_id);
CREATE INDEX workflow_nodes_by_seq ON workflow_nodes (workflow_id, seq);

CREATE TABLE workflow_edges (
  workflow_id TEXT NOT NULL,
  child       TEXT NOT NULL,
  parent      TEXT NOT NULL,
  PRIMARY KEY (workflow_id, child, parent)
) WITHOUT ROWID;
CREATE INDEX workflow_edges_by_parent ON workflow_edges (workflow_id, parent);
