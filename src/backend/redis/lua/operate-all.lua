-- An operator's action on up to `limit` tasks in one state: run | archive | delete | cancel.
-- ARGV 4 action, 5 state, 6 limit, 7 retention dead, 8 retention cancelled.
-- Returns { tasks acted on, tasks looked at }; call again while 'looked at' equals the limit.
-- A workflow node's task is not run (its workflow's retry runs it) and not counted.
local action, state, limit = ARGV[4], ARGV[5], tonumber(ARGV[6])
local retention = { dead = tonumber(ARGV[7]), cancelled = tonumber(ARGV[8]) }
local ids
if state == 'queued' then
  ids = redis.call('LRANGE', K_QUEUED, -limit, -1)
else
  ids = redis.call('ZRANGE', ZSET_OF[state], 0, limit - 1)
end
local done = 0
for _, id in ipairs(ids) do
  local m = get_meta(id)
  if m then
    local r = OPERATIONS[action](id, m, retention)
    if r == 'ok' or r == 'requested' then done = done + 1 end
  else
    unlink(id, state)
  end
end
-- Workflow nodes whose tasks ended here move their workflows on, in this same call.
settle_nodes()
trim_kept(TRIM_LIMIT)
publish_lifecycle()
return { done, #ids }
