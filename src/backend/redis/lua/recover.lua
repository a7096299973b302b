-- Recovers tasks whose lease expired (their worker is lost): the attempt fails with
-- 'lease expired (worker lost)', then the task retries with backoff, or dies when no retry is
-- left, or is cancelled when an operator asked for it; a workflow node's task that ends so is
-- settled in its workflow (children started or cancelled, the workflow finished).
-- ARGV 4 limit, 5 retention dead, 6 retention cancelled, 7 default backoff base, 8 default max,
-- 9 random seed, 10 jitter fraction (core/backoff.ts).
local limit = tonumber(ARGV[4])
local retention = { dead = tonumber(ARGV[5]), cancelled = tonumber(ARGV[6]) }
local backoff = { base = tonumber(ARGV[7]), max = tonumber(ARGV[8]), jitter = tonumber(ARGV[10]) }
math.randomseed(tonumber(ARGV[9]))
local ids = redis.call('ZRANGEBYSCORE', K_RUNNING, '-inf', NOW, 'LIMIT', 0, limit)
local failed = 0
for _, id in ipairs(ids) do
  redis.call('ZREM', K_RUNNING, id)
  local m = get_meta(id)
  if m then
    if m.g then left_groups(queue_tag(K_QUEUED), { m.g .. ' ' .. id }, true) end
    failed = failed + 1
    local reason = 'lease expired (worker lost)'
    -- Short keys, as codec.ts encodeAttempt writes them.
    append_attempt(id, cjson.encode({ n = m.a, s = m.sa, f = NOW, o = 'f', e = reason, w = m.w }))
    m.le = reason
    if redis.call('SISMEMBER', K_CANCEL, id) == 1 then
      finish(id, m, 'cancelled', retention.cancelled)
      note_node_end(id, m.l, 'cancelled', nil, reason)
    elseif (m.a or 0) > (m.m or 0) or (m.d and m.d <= NOW) then
      finish(id, m, 'dead', retention.dead)
      note_node_end(id, m.l, 'dead', nil, reason)
    else
      m.s = 'retrying'
      m.k = nil
      m.n = NOW + backoff_delay(m.b, m.a or 1, backoff)
      redis.call('ZADD', K_RETRYING, m.n, id)
      note_lifecycle('r', id, m.t, (m.a or 1) .. ',' .. m.n)
      wake_workers()
    end
    put_meta(id, m)
  end
end
count_stats(failed, failed)
-- A workflow node whose task ended here: its fan-in, in this same call (lib/workflow.lua).
settle_nodes()
trim_kept(TRIM_LIMIT)
publish_lifecycle()
return #ids
