-- Groups: the enqueue option `group` (a tenant, a customer…) and the queue's groupConcurrency.
--
-- A queued task of a group waits in its group's list, not in K_QUEUED: '<tag>gq:<group>' (LPUSH
-- to line up, RPOP to claim, as K_QUEUED). '<tag>ring' lists the groups with waiting tasks, and
-- '' for K_QUEUED's tasks without a group, in the order they take turns: the claim takes one
-- task per turn and moves the group to the back (RPOPLPUSH; the front is the list's tail). It
-- exists only while a group has waiting tasks, so a queue without groups claims as before.
-- '<tag>grouped' counts the waiting tasks of all groups (K_QUEUED's length does not hold them).
-- '<tag>grunning' holds the tasks the claim started from the groups' lines, as '<group> <id>'
-- (score 0: a group's members are a range by text), taken out as their attempts end (ack,
-- recovery). Should one stay (a running task deleted), the claim still counts only those with a
-- live lease once a group reaches the queue's groupConcurrency. '<tag>' is the queue's hash tag and colon ('{prefix:queue}:'), from its queued key: the
-- keys of another queue (a workflow node's) are named the same way.

local function queue_tag(queued_key)
  return string.sub(queued_key, 1, -7)
end

-- The group of a new task, from its record fragment (codec.ts: the group follows the timeout; a
-- group is plain text, no escapes), or nil.
local function fragment_group(fragment)
  if not string.find(fragment, ',"g":"', 1, true) then return nil end
  return string.match(fragment, '^"t":".-","m":%d+,"o":%d+,"g":"([^"]*)"')
end

-- Adds a group whose list was empty to the back of the turns.
local function join_turns(tag, group)
  local ring = tag .. 'ring'
  if redis.call('EXISTS', ring) == 0 then
    redis.call('RPUSH', ring, '')
    -- The claim of a queue without this flag (keep_bounds) never looks for turns.
    redis.call('HSET', tag .. 'keep', 'groups', '1')
  end
  redis.call('LPUSH', ring, group)
end

-- Takes a group whose list emptied out of the turns (the turns go when no group is left).
local function leave_turns(tag, group)
  local ring = tag .. 'ring'
  redis.call('LREM', ring, 1, group)
  if redis.call('LLEN', ring) <= 1 then redis.call('DEL', ring) end
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

-- Takes a queued task of `group` (nil: none) out of line; returns whether it was there.
local function leave_line(queued_key, id, group)
  if not group then return redis.call('LREM', queued_key, 0, id) > 0 end
  local tag = queue_tag(queued_key)
  local list = tag .. 'gq:' .. group
  if redis.call('LREM', list, 0, id) == 0 then return false end
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
-- lease frees its slot at once), dropping the members no longer running.
local function group_running(tag, group, limit)
  local key = tag .. 'grunning'
  -- The group's members are the range ['<group> ', '<group>!'): no group or id holds a space or
  -- '!', and every character a group may hold sorts after '!'.
  local from, to = '[' .. group .. ' ', '(' .. group .. '!'
  local count = redis.call('ZLEXCOUNT', key, from, to)
  if count < limit then return count end
  local live = 0
  for _, member in ipairs(redis.call('ZRANGEBYLEX', key, from, to)) do
    local expiry = redis.call('ZSCORE', K_RUNNING, string.sub(member, #group + 2))
    if not expiry then
      redis.call('ZREM', key, member)
    elseif tonumber(expiry) > NOW then
      live = live + 1
    end
  end
  return live
end

-- Takes tasks whose attempts ended out of '<tag>grunning' (members '<group> <id>').
local function left_groups(tag, members)
  redis.call('ZREM', tag .. 'grunning', unpack(members))
end
