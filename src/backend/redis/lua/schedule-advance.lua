-- Writes the scheduler's progress on schedules, only while the caller leads with this epoch
-- (a fencing check: a deposed leader's late writes change nothing).
-- KEYS 1 meta, 2 state, 3 leader (hash: holder, epoch, expires).
-- ARGV 1 clock offset, 2 holder, 3 epoch; then triples: schedule id, generation, state JSON.
-- Returns the number of schedules written, or -1 when the caller does not lead.
local leader = redis.call('HMGET', KEYS[3], 'holder', 'epoch', 'expires')
if leader[1] ~= ARGV[2] or leader[2] ~= ARGV[3] or tonumber(leader[3]) <= NOW then return -1 end
local written = 0
for i = 4, #ARGV, 3 do
  local raw = redis.call('HGET', KEYS[1], ARGV[i])
  if raw and tostring(cjson.decode(raw).g) == ARGV[i + 1] then
    redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 2])
    written = written + 1
  end
end
return written
