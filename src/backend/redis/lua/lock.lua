-- Distributed locks with fencing tokens.
-- KEYS 1 owner (string "<owner>|<token>\t<expires ms>", with a TTL), 2 fence (counter of acquisitions).
-- ARGV 1 clock offset, 2 mode (acquire | extend | release), 3 owner, 4 token, 5 ttl ms.
-- acquire: returns the new fencing token, or 0 when another owner holds the lock.
-- extend / release: act only if the caller still holds the lock with this token; return 1 or 0.
-- Expiry is judged by the store clock (NOW) against the stored expiry, as for leases; the PX
-- TTL only removes keys nobody looks at any more.
local mode, owner = ARGV[2], ARGV[3]
local holder = redis.call('GET', KEYS[1])
if holder then
  local who, expires = string.match(holder, '^(.*)\t(%d+)$')
  if who then
    holder = who
    if tonumber(expires) <= NOW then holder = nil end
  end
end
local function hold(value)
  redis.call('SET', KEYS[1], value .. '\t' .. string.format('%d', NOW + tonumber(ARGV[5])), 'PX', ARGV[5])
end
if mode == 'acquire' then
  if holder then return 0 end
  local token = redis.call('INCR', KEYS[2])
  hold(owner .. '|' .. token)
  return token
end
if holder ~= owner .. '|' .. ARGV[4] then return 0 end
if mode == 'extend' then
  hold(holder)
else
  redis.call('DEL', KEYS[1])
end
return 1
