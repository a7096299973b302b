-- The parents' states, results and errors of workflow nodes, for their handlers
-- (workflow-contract.ts workflowInputs), when their claim handed none over: one call for all the
-- workflow nodes of a claim.
-- KEYS from FIRST_EXTRA_KEY: the first node's workflow meta key.
-- ARGV 4 the number n of nodes, then n pairs: workflow id, node id.
-- Returns per node false (node unknown) or a flat list: per parent id, state, result, error
-- (false when none).
-- The key prefix: the events channel is '<prefix>:events' (keys.ts).
local prefix = string.sub(CHANNEL, 1, -8)
local out = {}
local n = tonumber(ARGV[4])
for i = 0, n - 1 do
  local tag = '{' .. prefix .. ':wf:' .. ARGV[5 + 2 * i] .. '}:'
  local raw = redis.call('HGET', tag .. 'nodes', ARGV[6 + 2 * i])
  if not raw then
    out[i + 1] = false
  else
    local parents = decode_json(raw).a
    local flat = {}
    if #parents > 0 then
      local states, results, errors = hmget_all(tag .. 'state', parents), hmget_all(tag .. 'results', parents), hmget_all(tag .. 'errors', parents)
      for j, id in ipairs(parents) do
        flat[#flat + 1], flat[#flat + 2], flat[#flat + 3], flat[#flat + 4] = id, states[j], results[j], errors[j]
      end
    end
    out[i + 1] = flat
  end
end
return out
