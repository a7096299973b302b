-- 0012: task groups (the enqueue option `group`, e.g. a tenant id) and the queue's
-- groupConcurrency (groups.ts). NULL: the task has no group.
ALTER TABLE tasks ADD COLUMN grp TEXT;

-- A group's tasks by state: the oldest queued task of a group (the claim), its running tasks
-- with a live lease (groupConcurrency, QueueInfo.groups), the groups with queued tasks. Partial:
-- the writes of tasks without a group do not touch it. A grouped task waits at a sort key above
-- the line of the tasks without a group (groups.ts GROUP_LINE), so that line stays a range of
-- tasks_by_state however many grouped tasks wait.
CREATE INDEX tasks_by_group ON tasks (queue, state, grp, sort_key) WHERE grp IS NOT NULL;

-- The turns of a queue's groups: one row per group that has (or just had) queued tasks, and one
-- with grp '' for the tasks without a group, which take turns as one more group. `turn` is the
-- number of the participant's last turn (or of its joining): the lowest goes next. The claim
-- drops the row of a group it finds without queued tasks; the '' row stays.
CREATE TABLE group_turns (
  queue TEXT NOT NULL,
  grp   TEXT NOT NULL,
  turn  INTEGER NOT NULL,
  PRIMARY KEY (queue, grp)
) WITHOUT ROWID;
CREATE INDEX group_turns_in_order ON group_turns (queue, turn);

-- The number of the queue's last turn given (the back of its turns); 0: the queue never had a
-- grouped task, and its claims do not look for turns.
ALTER TABLE queues ADD COLUMN turn INTEGER NOT NULL DEFAULT 0;
