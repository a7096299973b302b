-- Stores a batch of new tasks in one queue.
-- ARGV 4 count, 5 fields per task (7, or 3 when every task is queued now without a unique key);
-- then per task: id, record fragment (JSON object members without braces, no state or times),
-- payload, [delay ms (-1: none), runAt ms (-1: none), index into KEYS of its unique key
-- (0: none), unique TTL ms].
-- Returns per task: the new state ('queued' | 'scheduled'), 'id' (id conflict) or 'u:<holder id>'.
--
-- Tasks without a unique key are written together: one HMGET to find taken ids, then one HSET
-- per hash, one LPUSH, one ZADD and one wake-up for the batch. A task with a unique key goes
-- through store_task on its own (after the tasks before it are written, so the order holds).
local count, stride = tonumber(ARGV[4]), tonumber(ARGV[5])
local out = {}
local ids = {}
for i = 1, count do ids[i] = ARGV[5 + (i - 1) * stride + 1] end
local taken = redis.call('HMGET', K_META, unpack(ids))
local seen = {}
local queued_head = '{"s":"queued","c":' .. NOW_S .. ',"e":' .. NOW_S .. ','
local metas, payloads, queued, scheduled = {}, {}, {}, {}

local function flush()
  if #metas == 0 then return end
  redis.call('HSET', K_META, unpack(metas))
  write_payloads(K_PAYLOAD, payloads)
  if #queued > 0 then redis.call('LPUSH', K_QUEUED, unpack(queued)) end
  if #scheduled > 0 then redis.call('ZADD', K_SCHEDULED, unpack(scheduled)) end
  wake_workers()
  metas, payloads, queued, scheduled = {}, {}, {}, {}
end

for i = 1, count do
  local base = 5 + (i - 1) * stride
  local id, fragment, payload = ids[i], ARGV[base + 2], ARGV[base + 3]
  local delay, run_at, unique_index = -1, -1, 0
  if stride == 7 then delay, run_at, unique_index = tonumber(ARGV[base + 4]), tonumber(ARGV[base + 5]), tonumber(ARGV[base + 6]) end
  if taken[i] or seen[id] then
    out[i] = 'id'
  elseif unique_index > 0 then
    flush()
    out[i] = store_task(id, fragment, payload, delay, run_at, KEYS[unique_index], ARGV[base + 7])
    if out[i] ~= 'id' and string.sub(out[i], 1, 2) ~= 'u:' then seen[id] = true end
  else
    seen[id] = true
    local due = nil
    if run_at >= 0 then due = run_at elseif delay > 0 then due = NOW + delay end
    metas[#metas + 1] = id
    payloads[#payloads + 1] = id
    payloads[#payloads + 1] = payload
    local state
    if due and due > NOW then
      metas[#metas + 1] = '{"s":"scheduled","c":' .. NOW_S .. ',"n":' .. string.format('%d', due) .. ',' .. fragment .. '}'
      scheduled[#scheduled + 1] = due
      scheduled[#scheduled + 1] = id
      state = 'scheduled'
    else
      metas[#metas + 1] = queued_head .. fragment .. '}'
      queued[#queued + 1] = id
      state = 'queued'
    end
    out[i] = state
    if heard().lifecycle then note_lifecycle('e', id, fragment_type(fragment), state) end
  end
end
flush()
publish_lifecycle()
return out
