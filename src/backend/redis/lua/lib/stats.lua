-- The processed/failed counters: totals, per day and per minute.

local function count_stats(processed, failed)
  if processed == 0 and failed == 0 then return end
  local day = math.floor(NOW / 86400000)
  local minute = math.floor(NOW / 60000)
  if processed > 0 then
    redis.call('HINCRBY', K_STATS, 'processed', processed)
    redis.call('HINCRBY', K_STATS, 'pd:' .. day, processed)
    redis.call('HINCRBY', K_STATS, 'pm:' .. minute, processed)
  end
  if failed > 0 then
    redis.call('HINCRBY', K_STATS, 'failed', failed)
    redis.call('HINCRBY', K_STATS, 'fd:' .. day, failed)
    redis.call('HINCRBY', K_STATS, 'fm:' .. minute, failed)
  end
end
