-- Groups: the enqueue option `group` (a tenant, a customer…) and the queue's groupConcurrency.
--
-- A queued task of a group waits in its group's list, not in K_QUEUED: '<tag>gq:<group>' (LPUSH
-- to line up, RPOP to claim, as K_QUEUED). '<tag>ring' lists the groups whose turn comes, and ''
-- for K_QUEUED's tasks without a group, in turn order (the front is the list's tail; the claim
-- takes turns from it and puts the groups back at the head). It exists only while a group is in
-- it, so a queue without groups claims as before. A group the claim finds running as many tasks
-- as the queue's groupConcurrency leaves the turns for '<tag>gparked' (zset: group -> when the
-- earliest lease of its running tasks expires) until one of its tasks ends (ack, recovery), that
-- lease expires, or the queue's groupConcurrency changes (limits.lua puts all of them back): the
-- claim never walks past full groups. A group with waiting tasks is in
-- the ring or parked, never both.
-- '<tag>grouped' counts the waiting tasks of all groups (K_QUEUED's length does not hold them).
-- '<tag>grunning' holds the tasks the claim started from the groups' lines, as '<group> <id>'
-- (score 0: a group's members are a range by text), taken out as their attempts end. Should one
-- stay (a running task deleted), the claim still counts only those with a live lease once a
-- group reaches the limit. '<tag>' is the queue's hash tag and colon ('{prefix:queue}:'), from
-- its queued key: the keys of another queue (a workflow node's) are named the same way.

local function queue_tag(queued_key)
  return string.sub(queued_key, 1, -7)
end

-- The group of a new task, from its record fragment (codec.ts: the group follows the timeout; a
-- group is plain text, no escapes), or nil.
local function fragment_group(fragment)
  if not string.find(fragment, ',"g":"', 1, true) then return nil end
  return string.match(fragment, '^"t":".-","m":%d+,"o":%d+,"g":"([^"]*)"')
end

-- Whether this call gave a queue its first group (the queue's flags, keep_bounds, were perhaps
-- read before: an ack-and-claim's claim still looks for turns).
local GROUPS_JOINED = false

-- Adds a group whose list was empty, or that was parked, to the back of the turns.
local function join_turns(tag, group)
  local ring = tag .. 'ring'
  if redis.call('EXISTS', ring) == 0 then
    redis.call('RPUSH', ring, '')
    -- The claim of a queue without this flag (keep_bounds) never looks for turns.
    redis.call('HSET', tag .. 'keep', 'groups', '1')
    GROUPS_JOINED = true
  end
  redis.call('LPUSH', ring, group)
end

-- Takes a group whose list emptied out of the turns, or of the parked groups (the turns go when
-- no group is left in them).
local function leave_turns(tag, group)
  local ring = tag .. 'ring'
  if redis.call('LREM', ring, 1, group) == 0 then redis.call('ZREM', tag .. 'gparked', group) end
  if redis.call('LLEN', ring) <= 1 then redis.call('DEL', ring) end
end

-- Back into the turns: the parked groups among `groups` (a task of each ended).
local function unpark(tag, groups)
  local parked = redis.call('ZMSCORE', tag .. 'gparked', unpack(groups))
  for i, group in ipairs(groups) do
    if parked[i] then
      redis.call('ZREM', tag .. 'gparked', group)
      join_turns(tag, group)
    end
  end
end

-- Lines up queued tasks of one group (nil: none) in the queue whose queued list is `queued_key`:
-- at the back, or with `front` at the front (a task handed back). `ids`: at most ~4,000.
local function line_up(queued_key, ids, group, front)
  local command = front and 'RPUSH' or 'LPUSH'
  if not group then
    redis.call(command, queued_key, unpack(ids))
    return
  end
  local tag = queue_tag(queued_key)
  if redis.call(command, tag .. 'gq:' .. group, unpack(ids)) == #ids then join_turns(tag, group) end
  redis.call('INCRBY', tag .. 'grouped', #ids)
end

-- Takes a queued task of `group` (nil: none) out of line; returns whether it was there. A task
-- not in its group's line is looked for in the queue's own (lined up by a version before groups).
local function leave_line(queued_key, id, group)
  if not group then return redis.call('LREM', queued_key, 0, id) > 0 end
  local tag = queue_tag(queued_key)
  local list = tag .. 'gq:' .. group
  if redis.call('LREM', list, 0, id) == 0 then return redis.call('LREM', queued_key, 0, id) > 0 end
  redis.call('DECR', tag .. 'grouped')
  if redis.call('EXISTS', list) == 0 then leave_turns(tag, group) end
  return true
end

-- How many tasks wait in line in the queue (queued, with those of its groups).
local function queued_count(queued_key)
  return redis.call('LLEN', queued_key) + (tonumber(redis.call('GET', queue_tag(queued_key) .. 'grouped')) or 0)
end

-- How many tasks of `group` run, of those the claim started (in '<tag>grunning'): the count while
-- under `limit`; at the limit, those with a live lease (in K_RUNNING, not expired: an expired
-- lease frees its slot at once), dropping the members no longer running — and then also when
-- the earliest of those leases expires (nil under the limit).
local function group_running(tag, group, limit)
  local key = tag .. 'grunning'
  -- The group's members are the range ['<group> ', '<group>!'): no group or id holds a space or
  -- '!', and every character a group may hold sorts after '!'.
  local from, to = '[' .. group .. ' ', '(' .. group .. '!'
  local count = redis.call('ZLEXCOUNT', key, from, to)
  if count < limit then return count, nil end
  local live, earliest = 0, nil
  for _, member in ipairs(redis.call('ZRANGEBYLEX', key, from, to)) do
    local expiry = redis.call('ZSCORE', K_RUNNING, string.sub(member, #group + 2))
    if not expiry then
      redis.call('ZREM', key, member)
    elseif tonumber(expiry) > NOW then
      live = live + 1
      if not earliest or tonumber(expiry) < earliest then earliest = tonumber(expiry) end
    end
  end
  return live, earliest
end

-- When the earliest live lease of the tasks of `group` in '<tag>grunning' expires, or nil (as
-- group_running finds it at the limit).
local function earliest_lease(tag, group)
  local earliest = nil
  for _, member in ipairs(redis.call('ZRANGEBYLEX', tag .. 'grunning', '[' .. group .. ' ', '(' .. group .. '!')) do
    local expiry = tonumber(redis.call('ZSCORE', K_RUNNING, string.sub(member, #group + 2)))
    if expiry and expiry > NOW and (not earliest or expiry < earliest) then earliest = expiry end
  end
  return earliest
end

-- Takes tasks whose attempts ended out of '<tag>grunning' (members '<group> <id>'), and their
-- groups out of the parked ones (`parked`: the queue has a groupConcurrency, so some may be).
local function left_groups(tag, members, parked)
  redis.call('ZREM', tag .. 'grunning', unpack(members))
  if not parked then return end
  local groups, seen = {}, {}
  for _, member in ipairs(members) do
    local group = string.match(member, '^(%S+) ')
    if group and not seen[group] then
      seen[group] = true
      groups[#groups + 1] = group
    end
  end
  if #groups > 0 then unpark(tag, groups) end
end

-- The group of a running task's record as text: after the timeout as the claim wrote it, else
-- decoded (cjson writes a '/' of a group as '\/', and members in any order).
local function running_group(raw)
  if not string.find(raw, '"g":"', 1, true) then return nil end
  local group = string.match(raw, ',"o":%d+,"g":"([^"\\]*)"')
  if group then return group end
  local ok, m = pcall(decode_json, raw)
  return ok and type(m) == 'table' and type(m.g) == 'string' and m.g or nil
end
