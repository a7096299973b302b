-- The parents' states, results and errors of workflow nodes, for their handlers
-- (workflow-contract.ts workflowInputs): one call for all the workflow nodes of a claim. A plain
-- script (scripts.ts): it needs none of the helpers, and a call does not pay for defining them.
-- ARGV 1 clock offset, 2 key prefix, 3 the number n of nodes, then n pairs: workflow id, node id.
-- The keys are a workflow's (keys.ts workflow): '{<prefix>:wf:<id>}:nodes', …
-- Returns per node false (node unknown) or a flat list: per parent id, state, result, error
-- (false when none).
local prefix = ARGV[2]

-- HMGET of many fields, 1,000 at a time: unpack() of more than ~8,000 values fails in Redis's Lua.
local function hmget_all(key, ids)
  if #ids <= 1000 then return redis.call('HMGET', key, unpack(ids)) end
  local values = {}
  for from = 1, #ids, 1000 do
    local part = redis.call('HMGET', key, unpack(ids, from, math.min(from + 999, #ids)))
    for j = 1, #part do values[from + j - 1] = part[j] end
  end
  return values
end

local out = {}
local n = tonumber(ARGV[3])
for i = 0, n - 1 do
  local tag = '{' .. prefix .. ':wf:' .. ARGV[4 + 2 * i] .. '}:'
  local raw = redis.call('HGET', tag .. 'nodes', ARGV[5 + 2 * i])
  if not raw then
    out[i + 1] = false
  else
    local parents = cjson.decode(raw).a
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
