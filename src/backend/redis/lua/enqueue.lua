-- Stores a batch of new tasks in one queue.
-- ARGV 4 count, 5 fields per task (7, or 3 when every task is queued now without a unique key);
-- then per task: id, record fragment (JSON object members without braces, no state or times),
-- payload, [delay ms (-1: none), runAt ms (-1: none), index into KEYS of its unique key
-- (0: none), unique TTL ms]; then the callers' batches the tasks come from (enqueue-groups.ts):
-- their number m and per batch, in order, how many of the tasks are its and whether they are
-- all of its tasks for this queue (1 | 0: the rest are in other calls).
-- Returns per task: the new state ('queued' | 'scheduled'), 'id' (id conflict), 'u:<holder id>',
-- 'f:<max length>:<waiting>' (the queue's maxLength refused its batch) or 'split' (its batch is
-- in several calls and the queue has a maxLength: nothing of it was stored; the caller sends it
-- again in one call, so that it is taken or refused whole).
--
-- Tasks without a unique key are written together: one HMGET to find taken ids, then one HSET
-- per hash, one LPUSH, one ZADD and one wake-up for the batch. A task with a unique key goes
-- through store_task on its own (after the tasks before it are written, so the order holds).
local count, stride = tonumber(ARGV[4]), tonumber(ARGV[5])
local out = {}
local ids = {}
for i = 1, count do ids[i] = ARGV[5 + (i - 1) * stride + 1] end

-- `command key values…` in calls of at most 4,000 values (Lua unpacks at most ~8,000): a batch
-- sent whole for a maxLength may be larger than the calls of 250 tasks the client makes.
local function chunked(command, key, values)
  if #values <= 4000 then return redis.call(command, key, unpack(values)) end
  local replies = {}
  for from = 1, #values, 4000 do
    local part = redis.call(command, key, unpack(values, from, math.min(from + 3999, #values)))
    if type(part) == 'table' then
      for j = 1, #part do replies[from + j - 1] = part[j] end
    end
  end
  return replies
end

local taken = chunked('HMGET', K_META, ids)
local seen = {}
local queued_head = '{"s":"queued","c":' .. NOW_S .. ',"e":' .. NOW_S .. ','
local metas, payloads, queued, scheduled = {}, {}, {}, {}
-- Queued tasks of groups (lib/groups.lua): per group, its ids; `groups` in order of first appearance.
local grouped, groups = {}, {}

-- The queue's maxLength: each caller's batch is taken whole or refused whole; one in several
-- calls is sent back to be sent whole. Waiting: queued, scheduled and retrying. Only the tasks
-- that would be stored count: not those refused for their id or unique key (a duplicate is a
-- conflict, not a refusal), as store_one decides, in order, with the batches taken before.
local max_length = tonumber(redis.call('HGET', K_KEEP, 'maxLength'))
if max_length then
  local waiting = queued_count(K_QUEUED) + redis.call('ZCARD', K_SCHEDULED) + redis.call('ZCARD', K_RETRYING)
  local at, first = 5 + count * stride + 1, 1
  -- Ids and unique keys (with a TTL above 0) of the tasks counted in the batches taken.
  local counted_ids, counted_keys = {}, {}
  for _ = 1, tonumber(ARGV[at] or '0') do
    local size, whole = tonumber(ARGV[at + 1]), ARGV[at + 2] == '1'
    at = at + 2
    local last = first + size - 1
    local refusal = nil
    if not whole then
      refusal = 'split'
    else
      local new, ids_in, keys_in = 0, {}, {}
      for i = first, last do
        local id = ids[i]
        if not (taken[i] or counted_ids[id] or ids_in[id]) then
          local base = 5 + (i - 1) * stride
          local index = stride == 7 and tonumber(ARGV[base + 6]) or 0
          local key = index > 0 and KEYS[index] or nil
          if not (key and (counted_keys[key] or keys_in[key] or unique_holder(key))) then
            new = new + 1
            ids_in[id] = true
            if key and tonumber(ARGV[base + 7]) > 0 then keys_in[key] = true end
          end
        end
      end
      if waiting + new > max_length then
        refusal = 'f:' .. max_length .. ':' .. waiting
        redis.call('HINCRBY', K_STATS, 'refused', size)
      else
        waiting = waiting + new
        for id in pairs(ids_in) do counted_ids[id] = true end
        for key in pairs(keys_in) do counted_keys[key] = true end
      end
    end
    if refusal then
      for i = first, last do out[i] = refusal end
    end
    first = last + 1
  end
end

local function flush()
  if #metas == 0 then return end
  chunked('HSET', K_META, metas)
  write_payloads(K_PAYLOAD, payloads)
  if #queued > 0 then chunked('LPUSH', K_QUEUED, queued) end
  for _, group in ipairs(groups) do
    local ids = grouped[group]
    for from = 1, #ids, 4000 do line_up(K_QUEUED, { unpack(ids, from, math.min(from + 3999, #ids)) }, group) end
  end
  if #scheduled > 0 then chunked('ZADD', K_SCHEDULED, scheduled) end
  wake_workers()
  metas, payloads, queued, scheduled, grouped, groups = {}, {}, {}, {}, {}, {}
end

-- Stores task i of the call (its outcome in out[i]).
local function store_one(i)
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
      local group = fragment_group(fragment)
      if group then
        local ids = grouped[group]
        if not ids then
          ids = {}
          grouped[group] = ids
          groups[#groups + 1] = group
        end
        ids[#ids + 1] = id
      else
        queued[#queued + 1] = id
      end
      state = 'queued'
    end
    out[i] = state
    if heard().lifecycle then note_lifecycle('e', id, fragment_type(fragment), state) end
  end
end

for i = 1, count do
  -- A task refused with its batch (maxLength) has its outcome already.
  if not out[i] then store_one(i) end
end
flush()
publish_lifecycle()
return out
