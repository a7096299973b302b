-- Claims up to `count` queued tasks for a worker, leasing each; first moves due tasks to queued.
-- ARGV 4 count, 5 worker id, 6 lease ms, 7 forward limit.
-- Returns { paused (0/1), next due ms (-1: none), more queued (0/1), now, lease token (one for
--           all the tasks; '' when none), the limit that held it back ('' none, 'concurrency',
--           'rate', 'group'), when it may let a task start (-1: not known; lib/claim-batch.lua),
--           then per task: id, record (JSON), payload }.
local out = claim_batch(3)
publish_lifecycle()
return out
