-- Runs a failed or cancelled workflow again (workflow-contract.ts retryWorkflow): its dead and
-- cancelled nodes, and every node downstream of one (even a completed one: a runOnFailure node
-- that ran after a failure, and what ran after it, ran on inputs that are run again), are
-- pending once more, each waiting on its parents that run again; those waiting on none start
-- now as new runs of their tasks. The other nodes, all completed, keep their results.
-- KEYS from FIRST_EXTRA_KEY: the workflow's meta key.
-- ARGV 4 workflow id, 5 the next onFinish run's task id ('' none).
-- Returns 'ok', 'missing' or 'invalid:<state>' (running or completed).
local lib = workflow_lib()
local w = lib.load_workflow(ARGV[4])
if not w then return 'missing' end
local previous = w.state
if previous ~= 'failed' and previous ~= 'cancelled' then return 'invalid:' .. previous end
local order = redis.call('LRANGE', lib.keys_of(w).order, 0, -1)
local states = lib.states_of(w, order)
-- The nodes that run again: those not completed and their descendants (a stack, not recursion:
-- a chain may be long), each once; listed in declared order.
local rerun, stack = {}, {}
for _, node in ipairs(order) do
  if states[node] ~= 'completed' then
    rerun[node] = true
    stack[#stack + 1] = node
  end
end
while #stack > 0 do
  for _, child in ipairs(lib.ids(lib.node_info(w, table.remove(stack)).c)) do
    if not rerun[child] then
      rerun[child] = true
      stack[#stack + 1] = child
    end
  end
end
local again = {}
for _, node in ipairs(order) do
  if rerun[node] then again[#again + 1] = node end
end
redis.call('HSET', lib.keys_of(w).meta, 'state', 'running')
redis.call('HDEL', lib.keys_of(w).meta, 'finished')
if ARGV[5] ~= '' and redis.call('HEXISTS', lib.keys_of(w).meta, 'onFinish') == 1 then
  redis.call('HSET', lib.keys_of(w).meta, 'onFinishTask', ARGV[5])
else
  redis.call('HDEL', lib.keys_of(w).meta, 'onFinishTask')
end
-- A node runs twice from now on: its start looks for its earlier task (lib/workflow.lua).
w.state, w.failed, w.cancelling, w.fresh = 'running', false, false, false
lib.mark(w)
lib.set_open(w, #again)
if ON_CLUSTER then
  -- The lists by state lie in other slots: the client files it from its meta.
  lib.hand_off(w, { 'index' })
else
  redis.call('ZREM', lib.prefix .. ':workflows:expiry', w.id)
  redis.call('ZREM', lib.prefix .. ':workflows:' .. previous, w.id)
  redis.call('ZADD', lib.prefix .. ':workflows:running', redis.call('HGET', lib.keys_of(w).meta, 'created'), w.id)
end
local ready = {}
for _, node in ipairs(again) do
  lib.put(w, node, 'pending', node)
  redis.call('HDEL', w.state_key, lib.fields.result .. node, lib.fields.error .. node)
  local waits = 0
  for _, parent in ipairs(lib.ids(lib.node_info(w, node).a)) do
    if rerun[parent] then waits = waits + 1 end
  end
  -- A node of one parent keeps no count (lib/workflow.lua release_children).
  if waits == 0 then
    ready[#ready + 1] = node
  elseif string.find(lib.node_info(w, node).a, '\1', 1, true) then
    redis.call('HSET', w.state_key, lib.fields.waiting .. node, waits)
  end
end
lib.announce_workflow(w.id, 'running')
for _, node in ipairs(ready) do lib.start_node(w, node, lib.node_info(w, node)) end
-- A node whose task id another task took ends dead at its start: settled here.
settle_nodes()
-- A workflow cancelled while its last nodes completed has none to run again: it ends now.
lib.finish_if_done(w)
lib.flush_starts()
publish_lifecycle()
return 'ok'
