-- 0001: the initial schema. Migrations are append-only: never edit a released file, add the next.
--
-- All times are epoch ms on the store's clock (Date.now() + the backend's clock offset).

-- One row per queue ever used (registered by enqueue, claim and pause).
CREATE TABLE queues (
  name      TEXT PRIMARY KEY,
  paused    INTEGER NOT NULL DEFAULT 0,
  -- Bumped by every commit that may have made work claimable (the "marker" waiting workers watch).
  signal    INTEGER NOT NULL DEFAULT 0,
  -- Counter of places in the queued line: the back of the line takes +n, the front takes -n.
  position  INTEGER NOT NULL DEFAULT 0,
  -- Attempts finished / failed since the queue was created.
  processed INTEGER NOT NULL DEFAULT 0,
  failed    INTEGER NOT NULL DEFAULT 0
);

-- One row per task. `sort_key` orders a task within its state:
--   queued               place in line (claimed lowest first)
--   scheduled, retrying  due time
--   running              lease expiry
--   completed/dead/cancelled  retention expiry
CREATE TABLE tasks (
  id               TEXT PRIMARY KEY,
  queue            TEXT NOT NULL,
  type             TEXT NOT NULL,
  state            TEXT NOT NULL,
  sort_key         INTEGER NOT NULL,
  attempt          INTEGER NOT NULL DEFAULT 0,
  max_retries      INTEGER NOT NULL,
  timeout          INTEGER NOT NULL,
  deadline         INTEGER,
  last_error       TEXT,
  result           TEXT,
  created_at       INTEGER NOT NULL,
  enqueued_at      INTEGER,
  started_at       INTEGER,
  finished_at      INTEGER,
  next_run_at      INTEGER,
  worker_id        TEXT,
  -- The token of the running attempt's lease; NULL whenever the task is not running.
  lease_token      TEXT,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  unique_key       TEXT,
  retention        INTEGER,
  backoff          TEXT,
  headers          TEXT,
  links            TEXT,
  progress         TEXT,
  -- JSON arrays: every attempt's record; the newest log lines (bounded).
  attempts         TEXT NOT NULL DEFAULT '[]',
  logs             TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX tasks_by_state ON tasks (queue, state, sort_key);

-- Payloads apart from the task row: they never change, and may be large, while the task row is
-- rewritten at every transition.
CREATE TABLE payloads (
  id   TEXT PRIMARY KEY,
  body TEXT NOT NULL
);

-- uniqueKey → the task holding it until `expires_at` (the uniqueFor TTL).
CREATE TABLE unique_keys (
  queue      TEXT NOT NULL,
  key        TEXT NOT NULL,
  holder     TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (queue, key)
) WITHOUT ROWID;

-- Processed/failed attempts per queue per UTC day (period 'day', number = days since the epoch)
-- and per minute (period 'minute', number = minutes since the epoch).
CREATE TABLE stats (
  queue     TEXT NOT NULL,
  period    TEXT NOT NULL,
  number    INTEGER NOT NULL,
  processed INTEGER NOT NULL DEFAULT 0,
  failed    INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (queue, period, number)
) WITHOUT ROWID;

-- The worker registry: one row per live worker process, dropped once `expires_at` passes.
CREATE TABLE workers (
  id         TEXT PRIMARY KEY,
  info       TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);

-- Lifecycle events for subscribers in every process (finished, cancel-requested). Readers
-- remember the last id they saw; old rows are pruned.
CREATE TABLE events (
  id      INTEGER PRIMARY KEY AUTOINCREMENT,
  at      INTEGER NOT NULL,
  kind    TEXT NOT NULL,
  queue   TEXT NOT NULL,
  task_id TEXT NOT NULL,
  state   TEXT
);
