-- Ends attempts: complete, retry, dead, cancelled or requeue (graceful shutdown), each checked
-- against its lease token; a stale token changes nothing.
-- ARGV 4 count, 5 retention completed, 6 retention dead, 7 retention cancelled;
-- then per ack 6 fields: kind, id, token, data (result or error), delay ms, attempt record JSON.
-- kind: complete | retry | retry-free (the attempt is given back) | dead | cancelled | requeue.
-- Returns per ack 1 (applied) or 0 (stale).
local count = tonumber(ARGV[4])
local retention = { completed = tonumber(ARGV[5]), dead = tonumber(ARGV[6]), cancelled = tonumber(ARGV[7]) }
local out = {}
local processed, failed = 0, 0
-- Lease tokens read with one HMGET and leases ended with one HDEL and one ZREM for the batch;
-- `ended` makes a second ack of the same id in the batch stale, as a per-ack HGET would.
local ids = {}
for i = 1, count do ids[i] = ARGV[7 + (i - 1) * 6 + 2] end
local tokens = redis.call('HMGET', K_LEASE, unpack(ids))
local ended, ended_ids = {}, {}
for i = 1, count do
  local base = 7 + (i - 1) * 6
  local kind, id, token, data = ARGV[base + 1], ARGV[base + 2], ARGV[base + 3], ARGV[base + 4]
  local delay, attempt = tonumber(ARGV[base + 5]), ARGV[base + 6]
  local m = nil
  if tokens[i] == token and not ended[id] then m = get_meta(id) end
  if not m then
    out[i] = 0
  else
    out[i] = 1
    ended[id] = true
    ended_ids[#ended_ids + 1] = id
    append_attempt(id, attempt)
    if kind == 'complete' then
      processed = processed + 1
      if data ~= '' then redis.call('HSET', K_RESULT, id, data) end
      finish(id, m, 'completed', retention.completed)
    elseif kind == 'retry' or kind == 'retry-free' then
      processed = processed + 1
      if kind == 'retry' then failed = failed + 1 else m.a = m.a - 1 end
      m.s = 'retrying'
      m.le = data
      m.n = NOW + delay
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
    put_meta(id, m)
  end
end
if #ended_ids > 0 then
  redis.call('HDEL', K_LEASE, unpack(ended_ids))
  redis.call('ZREM', K_RUNNING, unpack(ended_ids))
end
count_stats(processed, failed)
publish_lifecycle()
return out
