-- Shared prelude of every script: NOW is the store's clock in ms (Redis TIME), plus ARGV[1], a
-- clock offset that only tests set.
local NOW
do
  local t = redis.call('TIME')
  NOW = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
end
-- NOW as decimal text, for building records and messages (tostring of a number is slow in Lua).
local NOW_S = string.format('%d', NOW)
