-- An operator's action on up to `limit` tasks in one state: run | archive | delete | cancel.
-- ARGV 4 action, 5 state, 6 limit, 7 retention dead, 8 retention cancelled, 9 cursor: the last
-- task an earlier batch left in the state ('' none: from the first), 10 its score.
-- Returns { tasks acted on, tasks looked at, cursor, its score }; call again with that cursor
-- while 'looked at' equals the limit and the batch acted on some or moved the cursor.
--
-- A task the action refuses stays in its state (a workflow node's dead or cancelled task is not
-- run: its workflow's retry runs it; it is not counted): the next batch starts after the last
-- such one, so any number of them is gone past. A sorted set's batch starts after the cursor's
-- rank, or, once the cursor left the set, at its score. The queued list takes no cursor (its
-- actions, archive and delete, refuse no queued task): its batches are its first tasks.
local action, state, limit = ARGV[4], ARGV[5], tonumber(ARGV[6])
local retention = { dead = tonumber(ARGV[7]), cancelled = tonumber(ARGV[8]) }
local cursor, cursor_score = ARGV[9] or '', ARGV[10] or ''
local ids, scores, group_of = {}, {}, {}
if state == 'queued' then
  -- The queue's line first, then its groups' lines (lib/groups.lua).
  ids = redis.call('LRANGE', K_QUEUED, -limit, -1)
  local tag = queue_tag(K_QUEUED)
  local turns = #ids < limit and redis.call('LRANGE', tag .. 'ring', 0, -1) or {}
  -- The groups parked at their groupConcurrency wait too.
  if #ids < limit then
    for _, group in ipairs(redis.call('ZRANGE', tag .. 'gparked', 0, -1)) do turns[#turns + 1] = group end
  end
  for _, group in ipairs(turns) do
    if #ids >= limit then break end
    if group ~= '' then
      for _, id in ipairs(redis.call('LRANGE', tag .. 'gq:' .. group, -(limit - #ids), -1)) do
        ids[#ids + 1] = id
        group_of[#ids] = group
      end
    end
  end
else
  local key = ZSET_OF[state]
  local from = 0
  if cursor ~= '' then
    local rank = redis.call('ZRANK', key, cursor)
    from = rank and rank + 1 or redis.call('ZCOUNT', key, '-inf', '(' .. cursor_score)
  end
  local flat = redis.call('ZRANGE', key, from, from + limit - 1, 'WITHSCORES')
  for i = 1, #flat, 2 do
    ids[#ids + 1] = flat[i]
    scores[#ids] = flat[i + 1]
  end
end
local done = 0
for i, id in ipairs(ids) do
  local m = get_meta(id)
  if m then
    local r = OPERATIONS[action](id, m, retention)
    if r == 'ok' or r == 'requested' then
      done = done + 1
    elseif scores[i] then
      cursor, cursor_score = id, scores[i]
    end
  else
    -- An id without a record: out of the line that holds it.
    unlink(id, state, group_of[i])
  end
end
-- Workflow nodes whose tasks ended here move their workflows on, in this same call.
settle_nodes()
trim_kept(TRIM_LIMIT)
publish_lifecycle()
return { done, #ids, cursor, cursor_score }
