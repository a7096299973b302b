-- Stores a batch of new tasks in one queue.
-- ARGV 4 count; then per task 7 fields: id, record fragment (JSON object members without braces,
-- no state or times), payload, delay ms (-1: none), runAt ms (-1: none), index into KEYS of its
-- unique key (0: none), unique TTL ms.
-- Returns per task: the new state ('queued' | 'scheduled'), 'id' (id conflict) or 'u:<holder id>'.
local count = tonumber(ARGV[4])
local out = {}
for i = 1, count do
  local base = 4 + (i - 1) * 7
  local unique_index = tonumber(ARGV[base + 6])
  out[i] = store_task(ARGV[base + 1], ARGV[base + 2], ARGV[base + 3], tonumber(ARGV[base + 4]), tonumber(ARGV[base + 5]),
    unique_index > 0 and KEYS[unique_index] or nil, ARGV[base + 7])
end
publish_lifecycle()
return out
