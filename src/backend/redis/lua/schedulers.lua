-- The scheduler instances: the leader lease, the registry of live instances and
-- the record of scheduler downtime.
-- KEYS 1 leader (hash: holder, epoch, expires, through), 2 registry (hash id -> { seen, instance }),
-- 3 seen (zset id -> store time its entry expires), 4 downtime (hash: alive = latest check-in,
-- since, gaps = JSON [[from, until], …]), 5 schedules version (string counter).
-- ARGV 1 clock offset, 2 mode, 3 holder / instance id, 4 ttl ms, then per mode:
--   acquire: takes the lease when it is free or expired (the epoch goes up by one), or renews it
--            for its holder (same epoch). Returns { epoch, expires } or { 0, expires of the other holder }.
--   release: frees the lease if the caller holds it. Returns { 1 } or { 0 }.
--   checkin: ARGV 5 bid (1/0), 6 instance JSON, 7 most gaps kept. Records the instance for ttl
--            ms; a check-in more than ttl ms after the latest one (of any instance) records the
--            time between as a gap; with bid, acquires as above. Returns { NOW, caller's epoch
--            or 0, holder, epoch, expires, through, version, since, gaps JSON } (holder '' when
--            no lease is valid).
--   leave:   removes the instance and releases its lease. Returns { 1 }.
--   list:    Returns { NOW, holder, epoch, expires, through, since ('' before any check-in), gaps
--            JSON, then per live instance: id, its registry JSON }.
local K_LEADER, K_REGISTRY, K_SEEN, K_DOWNTIME, K_VERSION = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local mode, holder, ttl = ARGV[2], ARGV[3], tonumber(ARGV[4])

local function lease()
  local current = redis.call('HMGET', K_LEADER, 'holder', 'epoch', 'expires', 'through')
  return current[1], tonumber(current[2] or '0'), tonumber(current[3] or '0'), tonumber(current[4] or '-1')
end

local function release(id)
  if redis.call('HGET', K_LEADER, 'holder') == id then
    redis.call('HSET', K_LEADER, 'expires', 0)
    return 1
  end
  return 0
end

local function acquire(id)
  local current, epoch, expires = lease()
  if current ~= id and expires > NOW then return 0, expires end
  if current ~= id or expires <= NOW then
    epoch = epoch + 1
    -- A new holder has handled nothing yet.
    redis.call('HDEL', K_LEADER, 'through')
  end
  expires = NOW + ttl
  redis.call('HSET', K_LEADER, 'holder', id, 'epoch', epoch, 'expires', expires)
  return epoch, expires
end

local function valid_lease()
  local current, epoch, expires, through = lease()
  if not current or expires <= NOW then return '', 0, 0, -1 end
  return current, epoch, expires, through
end

local function prune_registry()
  local gone = redis.call('ZRANGEBYSCORE', K_SEEN, '-inf', NOW)
  if #gone > 0 then
    redis.call('HDEL', K_REGISTRY, unpack(gone))
    redis.call('ZREM', K_SEEN, unpack(gone))
  end
end

if mode == 'acquire' then
  local epoch, expires = acquire(holder)
  return { epoch, expires }
elseif mode == 'release' then
  return { release(holder) }
elseif mode == 'leave' then
  release(holder)
  redis.call('HDEL', K_REGISTRY, holder)
  redis.call('ZREM', K_SEEN, holder)
  return { 1 }
elseif mode == 'list' then
  prune_registry()
  local current, epoch, expires, through = valid_lease()
  local down = redis.call('HMGET', K_DOWNTIME, 'since', 'gaps')
  local out = { NOW, current, epoch, expires, through, down[1] or '', down[2] or '[]' }
  local live = redis.call('ZRANGE', K_SEEN, 0, -1, 'WITHSCORES')
  for i = 1, #live, 2 do
    local entry = redis.call('HGET', K_REGISTRY, live[i])
    if entry then
      out[#out + 1] = live[i]
      out[#out + 1] = entry
    end
  end
  return out
end

-- checkin
local bid, instance, max_gaps = ARGV[5] == '1', ARGV[6], tonumber(ARGV[7])
local down = redis.call('HMGET', K_DOWNTIME, 'alive', 'since', 'gaps')
local alive, since, gaps = tonumber(down[1]), tonumber(down[2]), down[3] or '[]'
if not alive then
  since = NOW
  gaps = '[]'
  redis.call('HSET', K_DOWNTIME, 'since', since, 'gaps', gaps)
elseif NOW - alive > ttl then
  local list = cjson.decode(gaps)
  list[#list + 1] = { alive, NOW }
  while #list > max_gaps do
    since = math.max(since, list[1][2])
    table.remove(list, 1)
  end
  gaps = cjson.encode(list)
  redis.call('HSET', K_DOWNTIME, 'since', since, 'gaps', gaps)
end
if not alive or NOW > alive then redis.call('HSET', K_DOWNTIME, 'alive', NOW) end
prune_registry()
redis.call('HSET', K_REGISTRY, holder, '{"seen":' .. string.format('%d', NOW) .. ',"instance":' .. instance .. '}')
redis.call('ZADD', K_SEEN, NOW + ttl, holder)
local mine = 0
if bid then mine = acquire(holder) else
  local current, epoch, expires = lease()
  if current == holder and expires > NOW then mine = epoch end
end
local current, epoch, expires, through = valid_lease()
return { NOW, mine, current, epoch, expires, through, tonumber(redis.call('GET', K_VERSION) or '0'), since, gaps }
