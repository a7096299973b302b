-- Counts per state, paused flag, totals and the enqueue time of the oldest queued task.
-- Returns { queued, scheduled, running, retrying, completed, dead, cancelled, paused,
--           processed, failed, oldest enqueued at (-1: none), now, keep completed, keep dead,
--           keep cancelled (-1: no bound), rate ('<limit> <interval ms>' or ''), concurrency,
--           group concurrency, max length (-1: none), the limit that holds tasks back now
--           ('' none, 'rate', 'concurrency') and, for a rate, when it allows the next start, and
--           the enqueued tasks its maxLength refused, how many groups have waiting tasks, and
--           per group with a running task (at most 1,000 groups), its name and how many run }.
local oldest = -1
local tag = queue_tag(K_QUEUED)
-- The oldest of the queue's line and of its groups' first 100 in turn.
local fronts = { redis.call('LINDEX', K_QUEUED, -1) }
local turns = redis.call('LRANGE', tag .. 'ring', -101, -1)
for _, group in ipairs(redis.call('ZRANGE', tag .. 'gparked', 0, 99)) do turns[#turns + 1] = group end
for _, group in ipairs(turns) do
  if group ~= '' then fronts[#fronts + 1] = redis.call('LINDEX', tag .. 'gq:' .. group, -1) end
end
for _, oldest_id in ipairs(fronts) do
  if oldest_id then
    -- A read: a record that cannot be decoded, or holds no time, leaves the latency unknown (0)
    -- rather than failing the queue's listing.
    local ok, m = pcall(get_meta, oldest_id)
    local e = ok and type(m) == 'table' and tonumber(m.e)
    if e and e >= 0 and e < 1e15 and (oldest < 0 or e < oldest) then oldest = math.floor(e) end
  end
end
-- Running tasks per group: the live leases' records, in a queue that has had grouped tasks.
local running_groups, by_group, named = {}, {}, 0
local live = redis.call('EXISTS', tag .. 'grouped') == 1 and redis.call('ZRANGEBYSCORE', K_RUNNING, '(' .. NOW_S, '+inf', 'LIMIT', 0, 10000) or {}
for from = 1, #live, 1000 do
  -- In calls of 1,000 ids (Lua unpacks at most ~8,000).
  for _, raw in ipairs(redis.call('HMGET', K_META, unpack(live, from, math.min(from + 999, #live)))) do
    local group = raw and running_group(raw)
    if group then
      if not by_group[group] and named < 1000 then
        named = named + 1
        by_group[group] = 0
        running_groups[#running_groups + 1] = group
      end
      if by_group[group] then by_group[group] = by_group[group] + 1 end
    end
  end
end
local group_counts = {}
for _, group in ipairs(running_groups) do
  group_counts[#group_counts + 1] = group
  group_counts[#group_counts + 1] = by_group[group]
end
-- Groups with waiting tasks: in the turns (with '' for the queue's own line) or parked.
local waiting_groups = math.max(redis.call('LLEN', tag .. 'ring') - 1, 0) + redis.call('ZCARD', tag .. 'gparked')
local totals = redis.call('HMGET', K_STATS, 'processed', 'failed', 'refused')
local keep = keep_bounds()
-- A read: the window's old starts are not removed here, only not counted.
local held, held_until = '', -1
if keep.rate_limit then
  local from = '(' .. string.format('%d', NOW - keep.rate_ms)
  if redis.call('ZCOUNT', K_STARTS, from, '+inf') >= keep.rate_limit then
    local oldest = redis.call('ZRANGEBYSCORE', K_STARTS, from, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
    held, held_until = 'rate', tonumber(oldest[2]) + keep.rate_ms
  end
end
if held == '' and keep.concurrency and redis.call('ZCOUNT', K_RUNNING, '(' .. NOW_S, '+inf') >= keep.concurrency then held = 'concurrency' end
return {
  queued_count(K_QUEUED), redis.call('ZCARD', K_SCHEDULED), redis.call('ZCARD', K_RUNNING),
  redis.call('ZCARD', K_RETRYING), redis.call('ZCARD', K_COMPLETED), redis.call('ZCARD', K_DEAD),
  redis.call('ZCARD', K_CANCELLED), redis.call('EXISTS', K_PAUSED),
  tonumber(totals[1] or 0), tonumber(totals[2] or 0), oldest, NOW,
  keep.completed or -1, keep.dead or -1, keep.cancelled or -1,
  keep.rate_limit and (keep.rate_limit .. ' ' .. keep.rate_ms) or '', keep.concurrency or -1, keep.group_concurrency or -1, keep.max_length or -1,
  held, held_until, tonumber(totals[3] or 0), waiting_groups, group_counts,
}
