-- Deletes finished tasks whose retention ran out, then those past the queue's keep bounds, at
-- most `limit` per final state each, and trims per-minute counters older than 2 h and per-day
-- counters older than 90 days.
-- ARGV 4 limit. Returns how many tasks were deleted.
local limit = tonumber(ARGV[4])
local deleted = 0
for _, zkey in ipairs({ K_COMPLETED, K_DEAD, K_CANCELLED }) do
  local ids = redis.call('ZRANGEBYSCORE', zkey, '-inf', NOW, 'LIMIT', 0, limit)
  if #ids > 0 then
    redis.call('ZREM', zkey, unpack(ids))
    delete_tasks(ids)
    deleted = deleted + #ids
  end
end
TRIM = { completed = true, dead = true, cancelled = true }
deleted = deleted + trim_kept(limit)
local oldest_minute = math.floor(NOW / 60000) - 120
local oldest_day = math.floor(NOW / 86400000) - 90
for _, field in ipairs(redis.call('HKEYS', K_STATS)) do
  local kind, n = string.match(field, '^(%a%a):(%d+)$')
  if kind then
    n = tonumber(n)
    if ((kind == 'pm' or kind == 'fm') and n < oldest_minute) or ((kind == 'pd' or kind == 'fd') and n < oldest_day) then
      redis.call('HDEL', K_STATS, field)
    end
  end
end
return deleted
