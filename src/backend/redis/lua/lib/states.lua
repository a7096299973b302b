-- Moves between states shared by several transitions: to a final state, to queued, and
-- forwarding due tasks.

-- Moves a task to a final state; its retention starts now.
local function finish(id, m, state, retention)
  TRIM[state] = true
  m.s = state
  m.f = NOW
  m.n = nil
  m.k = nil
  redis.call('ZADD', ZSET_OF[state], NOW + (m.r or retention), id)
  -- m.x is set exactly while the id is in K_CANCEL (OPERATIONS.cancel sets both).
  if m.x then redis.call('SREM', K_CANCEL, id) end
  m.x = nil
  announce_finished(id, state, m.t)
end

local function to_queued(id, m)
  m.s = 'queued'
  m.e = NOW
  m.n = nil
  m.k = nil
  line_up(K_QUEUED, { id }, m.g)
end

-- Moves due scheduled and retrying tasks to queued, at most `limit` of each.
local function forward_due(limit)
  local moved = 0
  for _, zkey in ipairs({ K_SCHEDULED, K_RETRYING }) do
    local ids = redis.call('ZRANGEBYSCORE', zkey, '-inf', NOW_S, 'LIMIT', 0, limit)
    if #ids > 0 then
      redis.call('ZREM', zkey, unpack(ids))
      for _, id in ipairs(ids) do
        local m = get_meta(id)
        if m then
          to_queued(id, m)
          put_meta(id, m)
          moved = moved + 1
        end
      end
    end
  end
  if moved > 0 then wake_workers() end
  return moved
end

local function next_due()
  local due = nil
  for _, zkey in ipairs({ K_SCHEDULED, K_RETRYING }) do
    local first = redis.call('ZRANGE', zkey, 0, 0, 'WITHSCORES')
    if first[2] then
      local at = tonumber(first[2])
      if due == nil or at < due then due = at end
    end
  end
  return due or -1
end
