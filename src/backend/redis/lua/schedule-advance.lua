-- Writes the scheduler's progress on schedules, only while the caller leads with this epoch
-- (a fencing check: a deposed leader's late writes change nothing).
-- KEYS 1 meta, 2 state, 3 leader (hash: holder, epoch, expires, through).
-- ARGV 1 clock offset, 2 holder, 3 epoch, 4 fired through (store ms up to which the leader has
-- handled every due fire; -1: unchanged); then quadruples: schedule id, generation, updatedAt,
-- state JSON. A schedule deleted, re-created or changed since the leader read it is not written.
-- Returns the number of schedules written, or -1 when the caller does not lead.
local leader = redis.call('HMGET', KEYS[3], 'holder', 'epoch', 'expires')
if leader[1] ~= ARGV[2] or leader[2] ~= ARGV[3] or tonumber(leader[3]) <= NOW then return -1 end
if tonumber(ARGV[4]) >= 0 then redis.call('HSET', KEYS[3], 'through', ARGV[4]) end
local written = 0
for i = 5, #ARGV, 4 do
  local raw = redis.call('HGET', KEYS[1], ARGV[i])
  if raw then
    local meta = cjson.decode(raw)
    if string.format('%d', meta.g) == ARGV[i + 1] and string.format('%d', meta.u) == ARGV[i + 2] then
      redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 3])
      written = written + 1
    end
  end
end
return written
