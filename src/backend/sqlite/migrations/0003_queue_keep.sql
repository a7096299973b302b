-- 0003: bounds on the finished tasks a queue keeps (setQueueKeep, DESIGN §2); NULL: no bound.
ALTER TABLE queues ADD COLUMN keep_completed INTEGER;
ALTER TABLE queues ADD COLUMN keep_dead INTEGER;
ALTER TABLE queues ADD COLUMN keep_cancelled INTEGER;

-- Tasks per final state, for the states whose bound is above 0, so that a transaction finishing
-- tasks learns in one lookup how many are past the bound (counting the index would take as many
-- steps as the bound). Kept by the transitions (Transition.countKept; triggers were measured to
-- slow every write of the tasks table by ~25 %), counted afresh by setQueueKeep and, at most
-- once a minute per queue, by the janitor. A bound of 0 needs no count (every task in the state goes), and no bound none.
CREATE TABLE kept_counts (
  queue TEXT NOT NULL,
  state TEXT NOT NULL,
  n     INTEGER NOT NULL,
  PRIMARY KEY (queue, state)
) WITHOUT ROWID;

-- The task's type, written with each event: a task may be deleted (a keep bound of 0) before a
-- subscriber reads the events it caused.
ALTER TABLE events ADD COLUMN type TEXT;
