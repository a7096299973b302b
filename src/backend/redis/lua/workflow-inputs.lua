-- The parents' states, results and errors of workflow nodes, for their handlers
-- (workflow-contract.ts workflowInputs), when their claim handed none over: one call for all the
-- workflow nodes of a claim, made as a node's start makes them (lib/workflow.lua node_inputs).
-- KEYS from FIRST_EXTRA_KEY: the first node's workflow meta key.
-- ARGV 4 the number n of nodes, then n pairs: workflow id, node id.
-- Returns per node false (node unknown) or its inputs as node_inputs writes them (JSON).
local lib = workflow_lib()
local out = {}
for i = 0, tonumber(ARGV[4]) - 1 do
  local w, node = lib.workflow_keys(ARGV[5 + 2 * i]), ARGV[6 + 2 * i]
  out[i + 1] = redis.call('HEXISTS', w.state_key, lib.fields.record .. node) == 1 and lib.node_inputs(w, lib.node_info(w, node))
end
return out
