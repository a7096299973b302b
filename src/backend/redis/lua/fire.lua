-- Records fires of the schedules enqueueing into one queue and enqueues their tasks, each fire at
-- most once: a fire id that was recorded before (or lies below its schedule's pruned floor) is a
-- no-op. The task id is the fire id. One call carries every schedule's fires of a tick.
-- KEYS FIRST_EXTRA_KEY… (after the queue keys): each schedule's fire history (zset nominal ->
-- fire id), in the order of the schedules in ARGV.
-- ARGV 4 number of schedules; then per schedule a header of 5 fields: schedule id, overlap
-- policy, previous task id ('' none), history kept (count), number of fires; then per fire 7
-- fields: fire id, nominal ms, action (enqueue | missed | skipped), reason, task record
-- fragment, payload, runAt ms (-1: now).
-- Overlap: skip | allow | cancelPrevious | bufferOne: while the previous run (the schedule's latest
-- fire that enqueued a task, manual triggers aside) is unfinished the
-- first such fire answers 'busy' and is not recorded (the scheduler holds it and sends it again
-- first next time); later ones of the schedule are skipped.
-- Returns per schedule, per fire { fire id, outcome, task id or '' }; outcome: enqueued | missed |
-- skipped:<reason> | exists (with the task that fire enqueued, if its record is kept) | busy.
local schedules = tonumber(ARGV[4])
local out = {}
local at = 4

local function unfinished(id)
  if id == '' then return nil end
  local m = get_meta(id)
  if m and not FINISHED[m.s] then return m end
  return nil
end

local function record(history, fire_id, nominal, outcome, task_id)
  local entry = { f = fire_id, n = nominal, o = outcome }
  if task_id ~= '' then
    entry.t = task_id
    entry.e = NOW
  end
  redis.call('HSET', K_FIRES, fire_id, cjson.encode(entry))
  redis.call('ZADD', history, nominal, fire_id)
end

-- Bounded history: prune the oldest records and remember up to where, so a pruned fire stays
-- a no-op.
local function prune(history, schedule, keep)
  local excess = redis.call('ZCARD', history) - keep
  if excess <= 0 then return end
  local old = redis.call('ZRANGE', history, 0, excess - 1, 'WITHSCORES')
  local ids = {}
  for j = 1, #old, 2 do ids[#ids + 1] = old[j] end
  redis.call('HDEL', K_FIRES, unpack(ids))
  redis.call('ZREMRANGEBYRANK', history, 0, excess - 1)
  redis.call('HSET', K_FIRE_FLOOR, schedule, old[#old])
end

-- The task an earlier handling of the fire enqueued, or '' (none, or its record was pruned).
local function recorded_task(fire_id)
  local raw = redis.call('HGET', K_FIRES, fire_id)
  if not raw then return '' end
  return decode_json(raw).t or ''
end

-- The schedule's latest run is recorded with the fires (firefloor field 'run:<schedule id>'; a
-- schedule id holds no ':'), so overlap is judged by what is stored: a scheduler taking over from
-- one that died right after a fire (before writing its run state) still sees that fire's task.
-- A manual trigger (fire id ending ':manual') runs outside this: it is not a previous run.
local function is_manual(fire_id)
  return string.sub(fire_id, -7) == ':manual'
end

for s = 1, schedules do
  local history = KEYS[FIRST_EXTRA_KEY + s - 1]
  local schedule, overlap, previous, keep, count = ARGV[at + 1], ARGV[at + 2], ARGV[at + 3], tonumber(ARGV[at + 4]), tonumber(ARGV[at + 5])
  at = at + 5
  local run_field = 'run:' .. schedule
  if overlap ~= 'allow' then previous = redis.call('HGET', K_FIRE_FLOOR, run_field) or previous end
  local floor = tonumber(redis.call('HGET', K_FIRE_FLOOR, schedule) or '-1')
  local holding = false
  local results = {}
  for i = 1, count do
    local fire_id, nominal, action, reason = ARGV[at + 1], tonumber(ARGV[at + 2]), ARGV[at + 3], ARGV[at + 4]
    local outcome, task_id = nil, ''
    if nominal <= floor then
      outcome = 'exists'
    elseif redis.call('HEXISTS', K_FIRES, fire_id) == 1 then
      outcome = 'exists'
      task_id = recorded_task(fire_id)
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
        local state = store_task(fire_id, ARGV[at + 5], ARGV[at + 6], -1, tonumber(ARGV[at + 7]), nil, 0)
        if state == 'id' then
          outcome = 'exists'
        else
          outcome = 'enqueued'
          task_id = fire_id
          if not is_manual(fire_id) then
            previous = fire_id
            redis.call('HSET', K_FIRE_FLOOR, run_field, fire_id)
          end
        end
      end
    end
    if outcome ~= 'exists' and outcome ~= 'busy' then record(history, fire_id, nominal, outcome, task_id) end
    if outcome == 'exists' and task_id ~= '' and not is_manual(fire_id) then previous = task_id end
    results[i] = { fire_id, outcome, task_id }
    at = at + 7
  end
  prune(history, schedule, keep)
  out[s] = results
end

-- A task cancelled by cancelPrevious counts against the queue's keep bound on cancelled tasks.
trim_kept(TRIM_LIMIT)
publish_lifecycle()
return out
