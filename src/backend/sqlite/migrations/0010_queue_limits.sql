-- 0010: a queue's controls (setQueueLimits, backend/contract.ts QueueLimits); NULL: no limit. A
-- rate is its two columns, both set or both NULL.
ALTER TABLE queues ADD COLUMN rate_limit INTEGER;
ALTER TABLE queues ADD COLUMN rate_interval_ms INTEGER;
ALTER TABLE queues ADD COLUMN concurrency INTEGER;
ALTER TABLE queues ADD COLUMN group_concurrency INTEGER;
ALTER TABLE queues ADD COLUMN max_length INTEGER;

-- The starts (claims) of each queue that has a rate, within its window: `n` tasks started at
-- `at`, one row per claim instant. A claim deletes the rows its window has left, so the table
-- holds at most a rate's limit of rows per queue.
CREATE TABLE queue_starts (
  queue TEXT NOT NULL,
  at    INTEGER NOT NULL,
  n     INTEGER NOT NULL,
  PRIMARY KEY (queue, at)
) WITHOUT ROWID;
