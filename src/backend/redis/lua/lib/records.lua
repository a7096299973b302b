-- Reading and writing task records, and their attempt history.

local function get_meta(id)
  local raw = redis.call('HGET', K_META, id)
  if not raw then return nil end
  return decode_json(raw)
end

local function put_meta(id, m)
  local encoded = cjson.encode(m)
  redis.call('HSET', K_META, id, encoded)
  return encoded
end

-- Removes an id from the structure that holds its current state (a queued task's group: lib/groups.lua).
local function unlink(id, state, group)
  if state == 'queued' then
    leave_line(K_QUEUED, id, group)
  elseif ZSET_OF[state] then
    redis.call('ZREM', ZSET_OF[state], id)
  end
end

local function append_attempt(id, record_json)
  local raw = redis.call('HGET', K_ATTEMPTS, id)
  if raw then
    redis.call('HSET', K_ATTEMPTS, id, string.sub(raw, 1, -2) .. ',' .. record_json .. ']')
  else
    redis.call('HSET', K_ATTEMPTS, id, '[' .. record_json .. ']')
  end
end
