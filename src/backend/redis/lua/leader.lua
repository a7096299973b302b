-- The scheduler's leader lease. KEYS 1 leader (hash: holder, epoch, expires).
-- ARGV 1 clock offset, 2 mode (acquire | release), 3 holder, 4 ttl ms.
-- acquire: takes the lease when it is free or expired (the epoch goes up by one), or renews it
-- for its holder (same epoch). Returns { epoch, expires } or { 0, expires of the other holder }.
-- release: frees the lease if the caller holds it. Returns { 1 } or { 0 }.
local mode, holder = ARGV[2], ARGV[3]
local current = redis.call('HMGET', KEYS[1], 'holder', 'epoch', 'expires')
local epoch = tonumber(current[2] or '0')
local expires = tonumber(current[3] or '0')
if mode == 'release' then
  if current[1] == holder then
    redis.call('HSET', KEYS[1], 'expires', 0)
    return { 1 }
  end
  return { 0 }
end
if current[1] ~= holder and expires > NOW then return { 0, expires } end
if current[1] ~= holder or expires <= NOW then epoch = epoch + 1 end
expires = NOW + tonumber(ARGV[4])
redis.call('HSET', KEYS[1], 'holder', holder, 'epoch', epoch, 'expires', expires)
return { epoch, expires }
