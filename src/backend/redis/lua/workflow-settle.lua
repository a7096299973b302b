-- On a Redis Cluster: settles, in a workflow's slot, the node ends its nodes' queues handed off
-- (lib/node-ends.lua), as the ack batch does in its own call on one server (lib/workflow.lua
-- settle); what that does in other slots is handed off in turn (lib/workflow.lua hand_off).
-- KEYS from FIRST_EXTRA_KEY: the workflow's meta key.
-- ARGV 4… the ends, in the order they happened: each { n, 'end', workflow id, node, task id,
-- state, result (false: none), error (false: none) } as JSON.
-- Returns 'ok'.
local lib = workflow_lib()
for i = 4, #ARGV do
  local e = cjson.decode(ARGV[i])
  ENDED_NODES[#ENDED_NODES + 1] = { wf = e[3], node = e[4], id = e[5], state = e[6], result = e[7] or nil, error = e[8] or nil }
end
lib.settle()
publish_lifecycle()
return 'ok'
