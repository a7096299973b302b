-- A schedule's fire records, newest first, with the current state of each fire's task.
-- KEYS FIRST_EXTRA_KEY (after the queue keys): the schedule's fire history. ARGV 4 limit.
-- Returns a flat list: fire id, fire record JSON, task state ('' when the task is gone or there
-- is none, or its record cannot be read: this is a read, and one bad record must not fail it).
local ids = redis.call('ZREVRANGE', KEYS[FIRST_EXTRA_KEY], 0, tonumber(ARGV[4]) - 1)
local out = {}
for _, fire_id in ipairs(ids) do
  local raw = redis.call('HGET', K_FIRES, fire_id)
  if raw then
    local ok, entry = pcall(decode_json, raw)
    local state = ''
    if ok and type(entry) == 'table' and type(entry.t) == 'string' then
      local read, m = pcall(get_meta, entry.t)
      if read and type(m) == 'table' and type(m.s) == 'string' then state = m.s end
    end
    out[#out + 1] = fire_id
    out[#out + 1] = raw
    out[#out + 1] = state
  end
end
return out
