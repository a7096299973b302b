-- 0003: bounds on the finished tasks a queue keeps (setQueueKeep, DESIGN §2); NULL: no bound.
ALTER TABLE queues ADD COLUMN keep_completed INTEGER;
ALTER TABLE queues ADD COLUMN keep_dead INTEGER;
ALTER TABLE queues ADD COLUMN keep_cancelled INTEGER;
