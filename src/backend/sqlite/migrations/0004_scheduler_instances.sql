-- 0004: the scheduler instances (DESIGN §6.8): who runs, the leader's progress, and when no
-- scheduler ran at all. All times are epoch ms on the store's clock.

-- When a schedule was last resumed from a pause: its fires up to then go to the catch-up policy.
ALTER TABLE schedules ADD COLUMN resumed_at INTEGER;

-- The store time up to which the lease holder has handled every due fire (NULL: nothing yet);
-- a standby that finds a fire overdue past it fires it itself.
ALTER TABLE scheduler_leader ADD COLUMN fired_through INTEGER;

-- Live scheduler instances: what each reported at its latest check-in, kept until `expires_at`.
CREATE TABLE scheduler_instances (
  id           TEXT PRIMARY KEY,
  info         TEXT NOT NULL,
  last_seen_at INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL
) WITHOUT ROWID;

-- One row: `schedules_version` goes up with every change of a schedule (schedulers read them
-- again when it moves); `alive_at` is the latest check-in of any instance, `since` the time
-- before which nothing is known, `gaps` the intervals [from, until] with no check-in for longer
-- than the lease (JSON, oldest first, bounded).
CREATE TABLE scheduler_downtime (
  id                INTEGER PRIMARY KEY CHECK (id = 1),
  schedules_version INTEGER NOT NULL,
  alive_at          INTEGER,
  since             INTEGER,
  gaps              TEXT NOT NULL
);
INSERT INTO scheduler_downtime (id, schedules_version, alive_at, since, gaps) VALUES (1, 0, NULL, NULL, '[]');

-- The version of each schedule's last change (deletes included), so a scheduler catches up by
-- reading what changed since the version it holds instead of every schedule.
CREATE TABLE schedule_changes (
  id      TEXT PRIMARY KEY,
  version INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX schedule_changes_by_version ON schedule_changes (version);

-- The task of each schedule's latest run (its newest fire that enqueued one, manual triggers
-- aside), written with the fire: overlap is judged by what is stored, not by a scheduler's memory.
-- A row may now exist before any pruning: its floor is then -1.
ALTER TABLE schedule_fire_floors ADD COLUMN last_task_id TEXT;
