-- Creates, updates, upserts, pauses, resumes or deletes a schedule.
-- KEYS 1 defs (hash id -> definition JSON, never decoded here), 2 meta (hash id -> {g generation,
-- c createdAt, u updatedAt, p paused, pn pause note, pu paused until, ra resumed at}), 3 state
-- (hash id -> run state JSON), 4 generations (hash id -> last generation; kept after delete, so a
-- re-created schedule gets a new generation), 5 version (counter bumped by every change, so
-- schedulers know when to read the schedules again), 6 changes (zset id -> version of its last
-- change, deletes included: what a scheduler reads to catch up).
-- ARGV 1 clock offset, 2 mode (create | update | upsert | pause | resume | delete), 3 id,
-- 4 definition JSON (create/update/upsert) or pause note (pause), 5 paused (1/0) for
-- create/update/upsert, or paused until ms for pause (-1: none), 6 pause note (create/update/upsert).
-- upsert keeps an operator's pause of an existing schedule unless the definition is paused.
-- Returns 'ok', 'conflict' (create of an existing id) or 'missing'.
local mode, id = ARGV[2], ARGV[3]
local exists = redis.call('HEXISTS', KEYS[1], id) == 1

local function changed()
  redis.call('ZADD', KEYS[6], redis.call('INCR', KEYS[5]), id)
end

local function set_pause(meta, paused, note, until_ms)
  meta.p = paused
  meta.pn = (paused and note ~= '') and note or nil
  meta.pu = (paused and until_ms and until_ms >= 0) and until_ms or nil
end

if mode == 'create' or (mode == 'upsert' and not exists) then
  if exists then return 'conflict' end
  local generation = redis.call('HINCRBY', KEYS[4], id, 1)
  local meta = { g = generation, c = NOW, u = NOW }
  set_pause(meta, ARGV[5] == '1', ARGV[6], nil)
  redis.call('HSET', KEYS[1], id, ARGV[4])
  redis.call('HSET', KEYS[2], id, cjson.encode(meta))
  redis.call('HSET', KEYS[3], id, cjson.encode({ watermark = NOW }))
  changed()
  return 'ok'
end
if not exists then return 'missing' end
if mode == 'delete' then
  redis.call('HDEL', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
  redis.call('HDEL', KEYS[3], id)
  changed()
  return 'ok'
end
local meta = cjson.decode(redis.call('HGET', KEYS[2], id))
meta.u = NOW
if mode == 'update' or mode == 'upsert' then
  redis.call('HSET', KEYS[1], id, ARGV[4])
  if mode == 'update' or ARGV[5] == '1' then set_pause(meta, ARGV[5] == '1', ARGV[6], nil) end
  -- A change applies to fires after it: nothing before now is caught up under the new rules.
  local state = cjson.decode(redis.call('HGET', KEYS[3], id) or '{}')
  if (state.watermark or 0) < NOW then state.watermark = NOW end
  state.nextRunAt = nil
  redis.call('HSET', KEYS[3], id, cjson.encode(state))
elseif mode == 'pause' then
  set_pause(meta, true, ARGV[4], tonumber(ARGV[5]))
else
  -- Fires up to the end of the pause go to the catch-up policy: the resume, or the pause's
  -- until time when it ended by itself before.
  if meta.p then meta.ra = (meta.pu and meta.pu < NOW) and meta.pu or NOW end
  set_pause(meta, false, '', nil)
end
redis.call('HSET', KEYS[2], id, cjson.encode(meta))
changed()
return 'ok'
