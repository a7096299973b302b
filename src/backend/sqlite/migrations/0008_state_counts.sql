-- 0008: how many tasks each queue holds in each state, so that a queue's counts (inspection,
-- the dashboard) are one read however many tasks it holds: counting the (queue, state,
-- sort_key) index took ~90 ns a task, ~90 ms for a million. Kept by the transitions
-- (Transition.moved), not by triggers: triggers on the tasks table were measured at +25-29 % of
-- the CPU of every task's writes. Counted afresh now and then by the janitor, as kept_counts is.
CREATE TABLE state_counts (
  queue TEXT NOT NULL,
  state TEXT NOT NULL,
  n     INTEGER NOT NULL,
  PRIMARY KEY (queue, state)
) WITHOUT ROWID;

INSERT INTO state_counts (queue, state, n) SELECT queue, state, COUNT(*) FROM tasks GROUP BY queue, state;
