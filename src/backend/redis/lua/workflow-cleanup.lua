-- Deletes finished workflows past their retention, at most `limit` (workflow-contract.ts
-- cleanupWorkflows): their keys only — their nodes' tasks keep their own retention.
-- KEYS from FIRST_EXTRA_KEY: the expiry sorted set.
-- ARGV 4 limit.
-- Returns how many workflows were deleted.
local lib = workflow_lib()
local ids = redis.call('ZRANGEBYSCORE', lib.prefix .. ':workflows:expiry', '-inf', NOW, 'LIMIT', 0, tonumber(ARGV[4]))
for _, id in ipairs(ids) do
  local w = lib.workflow_keys(id)
  local state = redis.call('HGET', lib.keys_of(w).meta, 'state')
  if state then redis.call('ZREM', lib.prefix .. ':workflows:' .. state, id) end
  redis.call('ZREM', lib.prefix .. ':workflows', id)
  redis.call('ZREM', lib.prefix .. ':workflows:expiry', id)
  -- UNLINK: a 10,000-node workflow's hashes are freed in the background, not in this call.
  redis.call('UNLINK', lib.keys_of(w).meta, lib.keys_of(w).order, w.state_key)
end
return #ids
