-- On a Redis Cluster: settles, in a workflow's slot, the node ends its nodes' queues handed off
-- (lib/node-ends.lua), as the ack batch does in its own call on one server (lib/workflow.lua
-- settle); what that does in other slots is handed off in turn (lib/workflow.lua hand_off).
-- KEYS from FIRST_EXTRA_KEY: the workflow's meta key.
-- ARGV 4 the queue whose `handoff` set they come from, 5 and on its ends, in the order they
-- happened: each { n, 'end', workflow id, node, task id, state, result (false: none), error
-- (false: none) } as JSON.
-- An end settles once: the workflow keeps, per queue, the number of the last end it settled
-- (the state field \8<queue>; a queue numbers its ends in order), so one carried again (a relay
-- that stopped before removing it) is passed over — even after a retry started the node anew.
-- Returns 'ok'.
local lib = workflow_lib()
local w = lib.workflow_keys(ARGV[5] and cjson.decode(ARGV[5])[3] or '')
local mark = '\8' .. ARGV[4]
local last = tonumber(redis.call('HGET', w.state_key, mark)) or 0
for i = 5, #ARGV do
  local e = cjson.decode(ARGV[i])
  if e[1] > last then
    last = e[1]
    ENDED_NODES[#ENDED_NODES + 1] = { wf = e[3], node = e[4], id = e[5], state = e[6], result = e[7] or nil, error = e[8] or nil }
  end
end
-- (A workflow deleted meanwhile gets no state hash back.)
if redis.call('EXISTS', w.state_key) == 1 then redis.call('HSET', w.state_key, mark, last) end
lib.settle()
publish_lifecycle()
return 'ok'
