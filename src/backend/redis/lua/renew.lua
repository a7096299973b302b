-- Extends the leases of running tasks still held with the given tokens.
-- ARGV 4 lease ms; then pairs: id, token.
-- Returns { lost ids, ids whose cancellation was requested }.
local expires = string.format('%d', NOW + tonumber(ARGV[4]))
local lost, cancel = {}, {}
local ids = {}
for i = 5, #ARGV, 2 do ids[#ids + 1] = ARGV[i] end
if #ids == 0 then return { lost, cancel } end
local records = redis.call('HMGET', K_META, unpack(ids))
for j, id in ipairs(ids) do
  local token = ARGV[4 + 2 * j]
  if held_with(records[j], token) then
    redis.call('ZADD', K_RUNNING, 'XX', expires, id)
    if redis.call('SISMEMBER', K_CANCEL, id) == 1 then cancel[#cancel + 1] = id end
  else
    lost[#lost + 1] = id
  end
end
return { lost, cancel }
