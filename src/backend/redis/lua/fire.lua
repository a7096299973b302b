-- Records fires of one schedule and enqueues their tasks, each at most once: a fire id that was
-- recorded before (or lies below the pruned floor) is a no-op. The task id is the fire id.
-- KEYS FIRST_EXTRA_KEY (after the queue keys): the schedule's fire history (zset nominal -> fire id).
-- ARGV 4 schedule id, 5 overlap policy, 6 previous task id ('' none), 7 history kept (count),
-- 8 count; then per fire 7 fields: fire id, nominal ms, action (enqueue | missed | skipped),
-- reason, task record fragment, payload, runAt ms (-1: now).
-- Overlap: skip | allow | cancelPrevious | bufferOne: while the previous run is unfinished the
-- first such fire answers 'busy' and is not recorded (the scheduler holds it and sends it again
-- first next time); later ones in the batch are skipped.
-- Returns per fire { fire id, outcome, task id or '' }; outcome: enqueued | missed |
-- skipped:<reason> | exists | busy.
local K_HISTORY = KEYS[FIRST_EXTRA_KEY]
local schedule, overlap, previous, keep = ARGV[4], ARGV[5], ARGV[6], tonumber(ARGV[7])
local count = tonumber(ARGV[8])
local floor = tonumber(redis.call('HGET', K_FIRE_FLOOR, schedule) or '-1')
local out = {}
local holding = false

local function unfinished(id)
  if id == '' then return nil end
  local m = get_meta(id)
  if m and not FINISHED[m.s] then return m end
  return nil
end

local function record(fire_id, nominal, outcome, task_id)
  local entry = { f = fire_id, n = nominal, o = outcome }
  if task_id ~= '' then
    entry.t = task_id
    entry.e = NOW
  end
  redis.call('HSET', K_FIRES, fire_id, cjson.encode(entry))
  redis.call('ZADD', K_HISTORY, nominal, fire_id)
end

for i = 1, count do
  local base = 8 + (i - 1) * 7
  local fire_id, nominal, action, reason = ARGV[base + 1], tonumber(ARGV[base + 2]), ARGV[base + 3], ARGV[base + 4]
  local outcome, task_id = nil, ''
  if nominal <= floor or redis.call('HEXISTS', K_FIRES, fire_id) == 1 then
    outcome = 'exists'
  elseif action == 'missed' then
    outcome = 'missed'
  elseif action == 'skipped' then
    outcome = 'skipped:' .. reason
  else
    local prev = unfinished(previous)
    if prev and overlap == 'skip' then
      outcome = 'skipped:overlap'
    elseif prev and overlap == 'bufferOne' then
      if holding then outcome = 'skipped:overlap' else outcome = 'busy' end
      holding = true
    else
      if prev and overlap == 'cancelPrevious' then OPERATIONS.cancel(previous, prev, { cancelled = 2592000000 }) end
      local state = store_task(fire_id, ARGV[base + 5], ARGV[base + 6], -1, tonumber(ARGV[base + 7]), nil, 0)
      if state == 'id' then
        outcome = 'exists'
      else
        outcome = 'enqueued'
        task_id = fire_id
        previous = fire_id
      end
    end
  end
  if outcome ~= 'exists' and outcome ~= 'busy' then record(fire_id, nominal, outcome, task_id) end
  out[i] = { fire_id, outcome, task_id }
end

-- Bounded history: prune the oldest records and remember up to where, so a pruned fire stays
-- a no-op.
local excess = redis.call('ZCARD', K_HISTORY) - keep
if excess > 0 then
  local old = redis.call('ZRANGE', K_HISTORY, 0, excess - 1, 'WITHSCORES')
  local ids = {}
  for j = 1, #old, 2 do ids[#ids + 1] = old[j] end
  redis.call('HDEL', K_FIRES, unpack(ids))
  redis.call('ZREMRANGEBYRANK', K_HISTORY, 0, excess - 1)
  redis.call('HSET', K_FIRE_FLOOR, schedule, old[#old])
end
-- A task cancelled by cancelPrevious counts against the queue's keep bound on cancelled tasks.
trim_kept(TRIM_LIMIT)
publish_lifecycle()
return out
