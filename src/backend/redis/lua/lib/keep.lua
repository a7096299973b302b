-- Deleting tasks, and trimming finished ones to the queue's keep bounds.

-- Deletes the records of tasks already removed from their state's structure (at most ~4,000 ids).
local function delete_tasks(ids)
  redis.call('HDEL', K_META, unpack(ids))
  redis.call('HDEL', K_PAYLOAD, unpack(ids))
  -- What most tasks never write (a result, failed attempts, logs, a cancel request) only where it
  -- exists: a command with the batch's ids costs far more than EXISTS (each id is copied in), and
  -- one EXISTS of the four keys answers for a queue that has none of them.
  if redis.call('EXISTS', K_RESULT, K_ATTEMPTS, K_LOGS, K_CANCEL) == 0 then return end
  for _, key in ipairs({ K_RESULT, K_ATTEMPTS, K_LOGS }) do
    if redis.call('EXISTS', key) == 1 then redis.call('HDEL', key, unpack(ids)) end
  end
  if redis.call('EXISTS', K_CANCEL) == 1 then redis.call('SREM', K_CANCEL, unpack(ids)) end
end

local function delete_task(id)
  delete_tasks({ id })
end

-- The queue's bounds on finished tasks kept (nil: none), read once per call; `nodes`, whether
-- workflow node tasks were ever enqueued here (set by workflow-create.lua in the same hash, so
-- that the ack batch learns it from the read it makes anyway); `groups`, whether a task of a group
-- was ever queued here (lib/groups.lua: the claim looks for groups' turns only then); and its limits (setQueueLimits:
-- rate_limit and rate_ms, concurrency, group_concurrency, max_length; nil: none).
local KEEP = nil

local function keep_bounds()
  if not KEEP then
    local v = redis.call('HMGET', K_KEEP, 'completed', 'dead', 'cancelled', 'nodes', 'rate', 'concurrency', 'groupConcurrency', 'maxLength', 'groups')
    KEEP = { completed = tonumber(v[1]), dead = tonumber(v[2]), cancelled = tonumber(v[3]), nodes = v[4] ~= false,
      concurrency = tonumber(v[6]), group_concurrency = tonumber(v[7]), max_length = tonumber(v[8]), groups = v[9] ~= false }
    if v[5] then
      local limit, ms = string.match(v[5], '^(%d+) (%d+)$')
      KEEP.rate_limit, KEEP.rate_ms = tonumber(limit), tonumber(ms)
    end
  end
  return KEEP
end

-- Final states this call moved tasks to, trimmed to the queue's keep bounds at its end (trim_kept).
local TRIM = {}

-- Most tasks one call deletes per state for the keep bounds; the janitor's passes do the rest.
local TRIM_LIMIT = 1000

-- Deletes, in each state of TRIM with a bound, the tasks past it whose retention ends first (at
-- most `limit`). Returns how many were deleted.
local function trim_kept(limit)
  local deleted = 0
  for _, state in ipairs({ 'completed', 'dead', 'cancelled' }) do
    local bound = TRIM[state] and keep_bounds()[state]
    if bound then
      local excess = redis.call('ZCARD', ZSET_OF[state]) - bound
      if excess > 0 then
        local popped = redis.call('ZPOPMIN', ZSET_OF[state], math.min(excess, limit))
        local ids = {}
        for i = 1, #popped, 2 do ids[#ids + 1] = popped[i] end
        delete_tasks(ids)
        deleted = deleted + #ids
      end
    end
  end
  TRIM = {}
  return deleted
end
