-- 0011: how many enqueued tasks a queue's maxLength refused, since the queue was created
-- (QueueInfo.refused: the task center's metric and its queue-full alert read it).
ALTER TABLE queues ADD COLUMN refused INTEGER NOT NULL DEFAULT 0;
