-- Sets a queue's limits (setQueueLimits; the keep hash's fields, keys.ts) and wakes its workers.
-- A change of groupConcurrency (set, changed or removed) puts every parked group back in the
-- turns (lib/groups.lua), for the claim to judge against the new limit: it parks a group again
-- if it is still full. A parked group has a task running, so they are at most the running tasks.
-- ARGV 4 n, then n (field, value) pairs to set, then the fields to remove.
-- Returns the limits' fields as stored: rate, concurrency, groupConcurrency, maxLength (nil: none).
local n = tonumber(ARGV[4])
local regroup = false
local set = {}
for i = 5, 4 + 2 * n, 2 do
  set[#set + 1] = ARGV[i]
  set[#set + 1] = ARGV[i + 1]
  if ARGV[i] == 'groupConcurrency' then regroup = true end
end
local cleared = {}
for i = 5 + 2 * n, #ARGV do
  cleared[#cleared + 1] = ARGV[i]
  if ARGV[i] == 'groupConcurrency' then regroup = true end
end
if #set > 0 then redis.call('HSET', K_KEEP, unpack(set)) end
if #cleared > 0 then redis.call('HDEL', K_KEEP, unpack(cleared)) end
if regroup then
  local tag = queue_tag(K_QUEUED)
  -- In calls of 1,000 (Lua unpacks at most ~8,000).
  local parked = redis.call('ZRANGE', tag .. 'gparked', 0, 999)
  while #parked > 0 do
    unpark(tag, parked)
    parked = redis.call('ZRANGE', tag .. 'gparked', 0, 999)
  end
end
wake_workers()
return redis.call('HMGET', K_KEEP, 'rate', 'concurrency', 'groupConcurrency', 'maxLength')
