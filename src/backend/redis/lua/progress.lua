-- Appends log lines and/or sets the progress of a running task, if the lease token still holds.
-- ARGV 4 id, 5 token, 6 log lines (JSON array text, '' for none), 7 progress (JSON, '' for none),
-- 8 max log lines kept.
-- Returns 1 (applied) or 0 (stale).
local id, token = ARGV[4], ARGV[5]
local raw = redis.call('HGET', K_META, id)
local lease = held_with(raw, token)
if not lease then return 0 end
if ARGV[6] ~= '' then
  local lines = decode_json(redis.call('HGET', K_LOGS, id) or '[]')
  for _, line in ipairs(decode_json(ARGV[6])) do lines[#lines + 1] = line end
  local keep = tonumber(ARGV[8])
  if #lines > keep then
    local trimmed = {}
    for i = #lines - keep + 1, #lines do trimmed[#trimmed + 1] = lines[i] end
    lines = trimmed
  end
  redis.call('HSET', K_LOGS, id, cjson.encode(lines))
end
if ARGV[7] ~= '' then
  local m = type(lease) == 'table' and lease or decode_json(raw)
  -- Kept as JSON text: a cjson round trip would turn [] into {} and cut numbers to 14 digits.
  m.p = ARGV[7]
  put_meta(id, m)
end
return 1
