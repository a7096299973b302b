-- 0002: schedules, their fire history, the scheduler's leader lease (DESIGN §6) and locks (§7).
-- All times are epoch ms on the store's clock.

-- One row per schedule. `definition` is the validated definition as JSON, without the pause
-- fields, which live in their own columns (an operator changes them apart from the definition).
-- `state` is the scheduler's run state as JSON (watermark, nextRunAt, lastTaskId, buffered …).
CREATE TABLE schedules (
  id           TEXT PRIMARY KEY,
  definition   TEXT NOT NULL,
  generation   INTEGER NOT NULL,
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL,
  paused       INTEGER NOT NULL DEFAULT 0,
  pause_note   TEXT,
  paused_until INTEGER,
  state        TEXT NOT NULL
);

-- The last generation given to each schedule id; kept after a delete, so that a schedule created
-- again gets a new generation and its fire ids never collide with the old one's.
CREATE TABLE schedule_generations (
  id         TEXT PRIMARY KEY,
  generation INTEGER NOT NULL
) WITHOUT ROWID;

-- Fire records, per schedule and per queue its tasks go to (bounded: the oldest are pruned).
CREATE TABLE schedule_fires (
  fire_id     TEXT PRIMARY KEY,
  queue       TEXT NOT NULL,
  schedule_id TEXT NOT NULL,
  nominal_at  INTEGER NOT NULL,
  outcome     TEXT NOT NULL,
  task_id     TEXT,
  enqueued_at INTEGER
);
CREATE INDEX schedule_fires_by_schedule ON schedule_fires (queue, schedule_id, nominal_at);

-- The nominal time up to which a schedule's fire records were pruned: a fire at or before it
-- was handled, so firing it again is a no-op.
CREATE TABLE schedule_fire_floors (
  queue       TEXT NOT NULL,
  schedule_id TEXT NOT NULL,
  floor       INTEGER NOT NULL,
  PRIMARY KEY (queue, schedule_id)
) WITHOUT ROWID;

-- The scheduler's leader lease: one row. `epoch` goes up by one at each change of holder (or
-- after an expiry) and fences the leader's writes.
CREATE TABLE scheduler_leader (
  id         INTEGER PRIMARY KEY CHECK (id = 1),
  holder     TEXT NOT NULL,
  epoch      INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);

-- Locks: one row per key ever locked. `fence` counts acquisitions (the fencing token of the
-- latest); `owner` is NULL once released. A lock is held while `owner` is set and `expires_at`
-- is in the future.
CREATE TABLE locks (
  key        TEXT PRIMARY KEY,
  owner      TEXT,
  fence      INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;
