-- Distributed locks with fencing tokens (DESIGN §7).
-- KEYS 1 owner (string "<owner>|<token>", with a TTL), 2 fence (counter of acquisitions).
-- ARGV 1 clock offset, 2 mode (acquire | extend | release), 3 owner, 4 token, 5 ttl ms.
-- acquire: returns the new fencing token, or 0 when another owner holds the lock.
-- extend / release: act only if the caller still holds the lock with this token; return 1 or 0.
local mode, owner = ARGV[2], ARGV[3]
if mode == 'acquire' then
  if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
  local token = redis.call('INCR', KEYS[2])
  redis.call('SET', KEYS[1], owner .. '|' .. token, 'PX', ARGV[5])
  return token
end
if redis.call('GET', KEYS[1]) ~= owner .. '|' .. ARGV[4] then return 0 end
if mode == 'extend' then
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
else
  redis.call('DEL', KEYS[1])
end
return 1
