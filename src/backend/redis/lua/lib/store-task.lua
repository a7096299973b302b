-- Storing one new task: the transition of enqueue.lua, of fire.lua's runs and of a workflow
-- node's start (lib/workflow.lua).

-- The type of a new task's record fragment, which starts with it as a JSON string
-- ("t":"…","m":…; see codec.ts): read as text unless it holds an escape.
local function fragment_type(fragment)
  local plain = string.match(fragment, '^"t":"([^"\\]*)","m":')
  if plain then return plain end
  local type_json = string.match(fragment, '^"t":(".-"),"m":')
  return type_json and decode_json(type_json) or ''
end

-- A hash made with a value longer than 64 bytes is a hashtable, and stays one after that value
-- goes, until it empties: a queue's payloads, mostly short, would otherwise make a listpack
-- while it holds up to 512 tasks, which every write, read and removal scans (~8k instructions
-- per task with 400 in flight, against ~2k). The seed field has a space: it is no task id.
local PAYLOAD_SEED = 'payload seed'
local PAYLOAD_SEED_VALUE = 'a value longer than 64 bytes makes this hash a hashtable; removed at once'

-- Writes field/value pairs to a queue's payload hash (made a hashtable when new), 4,000 values
-- a call (Lua unpacks at most ~8,000).
local function write_payloads(key, pairs)
  local new = redis.call('EXISTS', key) == 0
  if new then redis.call('HSET', key, PAYLOAD_SEED, PAYLOAD_SEED_VALUE) end
  for from = 1, #pairs, 4000 do
    redis.call('HSET', key, unpack(pairs, from, math.min(from + 3999, #pairs)))
  end
  if new then redis.call('HDEL', key, PAYLOAD_SEED) end
end

-- The markers this call added to (a blocked worker wakes on the first add; once is enough).
local WOKEN = {}

-- Writes a new task whose id the caller found free into the queue whose keys are `q` (name,
-- meta, payload, queued, scheduled, marker): the script's own queue, or, for a workflow node
-- that starts, any queue. Returns its state ('queued' | 'scheduled'). With `into` (a table of
-- lists: metas, payloads, queued, scheduled), its writes are added there, for the caller to make
-- at once for many tasks (lib/workflow.lua flush_starts); `type`: its type, when known.
local function write_new_task(q, id, fragment, payload, delay, run_at, into, type)
  local due = nil
  if run_at >= 0 then due = run_at elseif delay > 0 then due = NOW + delay end
  local record, state
  if due and due > NOW then
    record = '{"s":"scheduled","c":' .. NOW_S .. ',"n":' .. string.format('%d', due) .. ',' .. fragment .. '}'
    state = 'scheduled'
  else
    record = '{"s":"queued","c":' .. NOW_S .. ',"e":' .. NOW_S .. ',' .. fragment .. '}'
    state = 'queued'
  end
  if into then
    local n = #into.metas
    into.metas[n + 1], into.metas[n + 2] = id, record
    into.payloads[n + 1], into.payloads[n + 2] = id, payload
    local group = state == 'queued' and fragment_group(fragment)
    if group then
      -- In its group's line at once (a script's writes are seen by no claim before it ends).
      line_up(q.queued, { id }, group)
    elseif state == 'queued' then
      into.queued[#into.queued + 1] = id
    else
      into.scheduled[#into.scheduled + 1] = due
      into.scheduled[#into.scheduled + 1] = id
    end
  else
    if state == 'queued' then line_up(q.queued, { id }, fragment_group(fragment)) else redis.call('ZADD', q.scheduled, due, id) end
    redis.call('HSET', q.meta, id, record)
    write_payloads(q.payload, { id, payload })
  end
  if not WOKEN[q.marker] then
    redis.call('ZADD', q.marker, 0, '1')
    WOKEN[q.marker] = true
  end
  if heard().lifecycle then note_lifecycle('e', id, type or fragment_type(fragment), state, q.name) end
  return state
end

-- The unfinished task holding a unique key whose TTL has not run out, or nil. The key holds
-- '<holder id>\t<expiry>': the TTL is judged by the store clock (NOW); the PX expiry only removes
-- keys nobody looks at any more.
local function unique_holder(unique_key)
  local value = redis.call('GET', unique_key)
  if not value then return nil end
  local holder, expires = string.match(value, '^(.*)\t(%d+)$')
  if not holder then holder = value end -- written before the expiry was stored
  if expires ~= nil and tonumber(expires) <= NOW then return nil end
  local held = get_meta(holder)
  if held and not FINISHED[held.s] then return holder end
  return nil
end

-- Stores one new task. Returns its state ('queued' | 'scheduled'), 'id' (the id exists) or
-- 'u:<holder id>' (its unique key is held by an unfinished task).
local function store_task(id, fragment, payload, delay, run_at, unique_key, unique_ttl)
  if redis.call('HEXISTS', K_META, id) == 1 then return 'id' end
  if unique_key then
    local holder = unique_holder(unique_key)
    if holder then return 'u:' .. holder end
    redis.call('SET', unique_key, id .. '\t' .. string.format('%d', NOW + tonumber(unique_ttl)), 'PX', unique_ttl)
  end
  local q = { name = QUEUE, meta = K_META, payload = K_PAYLOAD, queued = K_QUEUED, scheduled = K_SCHEDULED, marker = K_MARKER }
  return write_new_task(q, id, fragment, payload, delay, run_at)
end
