-- Stores a batch of new tasks in one queue.
-- ARGV 4 count; then per task 7 fields: id, record fragment (JSON object members without braces,
-- no state or times), payload, delay ms (-1: none), runAt ms (-1: none), index into KEYS of its
-- unique key (0: none), unique TTL ms.
-- Returns per task: the new state ('queued' | 'scheduled'), 'id' (id conflict) or 'u:<holder id>'.
local count = tonumber(ARGV[4])
local out = {}
local wake = false
for i = 1, count do
  local base = 4 + (i - 1) * 7
  local id, fragment, payload = ARGV[base + 1], ARGV[base + 2], ARGV[base + 3]
  local delay, run_at = tonumber(ARGV[base + 4]), tonumber(ARGV[base + 5])
  local unique_index, unique_ttl = tonumber(ARGV[base + 6]), ARGV[base + 7]
  if redis.call('HEXISTS', K_META, id) == 1 then
    out[i] = 'id'
  else
    local conflict = nil
    if unique_index > 0 then
      -- The key holds '<holder id>\t<expiry>': the TTL is judged by the store clock (NOW); the PX
      -- expiry only removes keys nobody looks at any more.
      local unique_key = KEYS[unique_index]
      local value = redis.call('GET', unique_key)
      if value then
        local holder, expires = string.match(value, '^(.*)\t(%d+)$')
        if not holder then holder = value end -- written before the expiry was stored
        if expires == nil or tonumber(expires) > NOW then
          local held = get_meta(holder)
          if held and not FINISHED[held.s] then conflict = holder end
        end
      end
      if not conflict then redis.call('SET', unique_key, id .. '\t' .. string.format('%d', NOW + tonumber(unique_ttl)), 'PX', unique_ttl) end
    end
    if conflict then
      out[i] = 'u:' .. conflict
    else
      local due = nil
      if run_at >= 0 then due = run_at elseif delay > 0 then due = NOW + delay end
      local record
      if due and due > NOW then
        record = '{"s":"scheduled","c":' .. NOW .. ',"n":' .. due .. ',' .. fragment .. '}'
        redis.call('ZADD', K_SCHEDULED, due, id)
        out[i] = 'scheduled'
      else
        record = '{"s":"queued","c":' .. NOW .. ',"e":' .. NOW .. ',' .. fragment .. '}'
        redis.call('LPUSH', K_QUEUED, id)
        out[i] = 'queued'
      end
      redis.call('HSET', K_META, id, record)
      redis.call('HSET', K_PAYLOAD, id, payload)
      wake = true
    end
  end
end
if wake then wake_workers() end
return out
