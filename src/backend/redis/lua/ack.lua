-- Ends attempts: complete, retry, dead, cancelled or requeue (graceful shutdown), each checked
-- against its lease token; a stale token changes nothing.
-- ARGV 4 count, 5 retention completed, 6 retention dead, 7 retention cancelled;
-- then per ack 6 fields: kind, id, token, data (result or error), delay ms, attempt record JSON —
-- for `complete`, its finish time (ms) instead: the completing attempt is not stored, the record
-- holds all it says (codec.ts puts it back on read).
-- kind: complete | retry | retry-free (the attempt is given back) | dead | cancelled | requeue.
-- Returns per ack 1 (applied) or 0 (stale).
--
-- Every read and write is batched: one HMGET per hash for the whole batch, one HSET/ZADD per
-- structure written, one PUBLISH of all finished events.
local count = tonumber(ARGV[4])
local retention = { completed = tonumber(ARGV[5]), dead = tonumber(ARGV[6]), cancelled = tonumber(ARGV[7]) }
FINISHED_BATCH = {}
local out = {}
local processed, failed = 0, 0
local ids = {}
for i = 1, count do ids[i] = ARGV[7 + (i - 1) * 6 + 2] end
-- The record is the lease: it is running with the ack's token, or the ack is stale.
local metas = redis.call('HMGET', K_META, unpack(ids))
-- `ended` makes a second ack of the same id in the batch stale, as a per-ack check would.
local ended, ended_ids, live, held = {}, {}, {}, {}
for i = 1, count do
  local id = ids[i]
  local lease = not ended[id] and held_with(metas[i], ARGV[7 + (i - 1) * 6 + 3])
  if lease then
    ended[id] = true
    ended_ids[#ended_ids + 1] = id
    live[#live + 1] = i
    held[i] = lease
  else
    out[i] = 0
  end
end
if #ended_ids > 0 then
  -- Attempt records to append, read in one HMGET (completions send none).
  local recorded = {}
  for _, i in ipairs(live) do
    if ARGV[7 + (i - 1) * 6 + 1] ~= 'complete' then recorded[#recorded + 1] = ids[i] end
  end
  local previous = #recorded > 0 and redis.call('HMGET', K_ATTEMPTS, unpack(recorded)) or {}
  local records, attempts, results, completed = {}, {}, {}, {}
  local completed_until = string.format('%d', NOW + retention.completed)
  local r = 0
  for _, i in ipairs(live) do
    local base = 7 + (i - 1) * 6
    local kind, id, data = ARGV[base + 1], ids[i], ARGV[base + 4]
    out[i] = 1
    local attempt = ARGV[base + 6]
    -- A completion's finish time, as digits (as the worker measured it; now if it sent none).
    local finished = kind == 'complete' and (string.match(attempt, '^%d+$') or NOW_S)
    if finished then
      processed = processed + 1
      if data ~= '' then
        results[#results + 1] = id
        results[#results + 1] = data
      end
    else
      r = r + 1
      attempts[#attempts + 1] = id
      attempts[#attempts + 1] = previous[r] and (string.sub(previous[r], 1, -2) .. ',' .. attempt .. ']') or ('[' .. attempt .. ']')
    end
    local lease = held[i]
    local plain_type = finished and type(lease) == 'string' and plain_running_type(lease)
    if plain_type then
      -- The common case, as text: completed, finished then, kept for the default retention.
      records[#records + 1] = id
      records[#records + 1] = '{"s":"completed","f":' .. finished .. ',' .. lease
      completed[#completed + 1] = completed_until
      completed[#completed + 1] = id
      announce_finished(id, 'completed', plain_type)
    else
      -- held_with decoded a record it did not find in the fast shape; only those are decoded here.
      local m = type(lease) == 'table' and lease or cjson.decode(metas[i])
      m.k = nil
      if finished then
        finish(id, m, 'completed', retention.completed)
        m.f = tonumber(finished)
      elseif kind == 'retry' or kind == 'retry-free' then
        processed = processed + 1
        if kind == 'retry' then failed = failed + 1 else m.a = m.a - 1 end
        m.s = 'retrying'
        m.le = data
        m.n = NOW + tonumber(ARGV[base + 5])
        m.x = nil
        redis.call('SREM', K_CANCEL, id)
        redis.call('ZADD', K_RETRYING, m.n, id)
        note_lifecycle('r', id, m.t, m.a .. ',' .. m.n)
        wake_workers()
      elseif kind == 'dead' then
        processed = processed + 1
        failed = failed + 1
        m.le = data
        finish(id, m, 'dead', retention.dead)
      elseif kind == 'cancelled' then
        processed = processed + 1
        m.le = data
        finish(id, m, 'cancelled', retention.cancelled)
      else -- requeue: back to the front of the queue, attempt not counted
        m.a = m.a - 1
        m.s = 'queued'
        m.w = nil
        m.e = NOW
        redis.call('RPUSH', K_QUEUED, id)
        wake_workers()
      end
      records[#records + 1] = id
      records[#records + 1] = cjson.encode(m)
    end
  end
  if #records > 0 then redis.call('HSET', K_META, unpack(records)) end
  if #attempts > 0 then redis.call('HSET', K_ATTEMPTS, unpack(attempts)) end
  if #results > 0 then redis.call('HSET', K_RESULT, unpack(results)) end
  if #completed > 0 then redis.call('ZADD', K_COMPLETED, unpack(completed)) end
  redis.call('ZREM', K_RUNNING, unpack(ended_ids))
end
count_stats(processed, failed)
publish_finished()
publish_lifecycle()
return out
