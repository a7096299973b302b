-- Extends the leases of running tasks still held with the given tokens.
-- ARGV 4 lease ms; then pairs: id, token.
-- Returns { lost ids, ids whose cancellation was requested }.
local expires = NOW + tonumber(ARGV[4])
local lost, cancel = {}, {}
for i = 5, #ARGV, 2 do
  local id, token = ARGV[i], ARGV[i + 1]
  if redis.call('HGET', K_LEASE, id) == token then
    redis.call('ZADD', K_RUNNING, 'XX', expires, id)
    if redis.call('SISMEMBER', K_CANCEL, id) == 1 then cancel[#cancel + 1] = id end
  else
    lost[#lost + 1] = id
  end
end
return { lost, cancel }
