-- A schedule's fire records, newest first, with the current state of each fire's task.
-- KEYS FIRST_EXTRA_KEY (after the queue keys): the schedule's fire history. ARGV 4 limit.
-- Returns a flat list: fire record JSON, task state ('' when the task is gone or there is none).
local ids = redis.call('ZREVRANGE', KEYS[FIRST_EXTRA_KEY], 0, tonumber(ARGV[4]) - 1)
local out = {}
for _, fire_id in ipairs(ids) do
  local raw = redis.call('HGET', K_FIRES, fire_id)
  if raw then
    local entry = cjson.decode(raw)
    local state = ''
    if entry.t then
      local m = get_meta(entry.t)
      if m then state = m.s end
    end
    out[#out + 1] = raw
    out[#out + 1] = state
  end
end
return out
