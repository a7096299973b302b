-- Reads a workflow in one call, so its nodes and their tasks' states are of one moment
-- (workflow-contract.ts getWorkflow, listWorkflows): a started node's state is its task's (a
-- task gone: cancelled), any other node's is the workflow's record of it.
-- KEYS from FIRST_EXTRA_KEY: the workflow's meta key.
-- ARGV 4 workflow id, 5 what: 'nodes' (the record with its nodes) | 'counts' (without).
-- Returns nil for a workflow not kept; else { meta (HGETALL), counts (state, n, …) } and, for
-- 'nodes', a third list: per node in declared order id, its record (keys.ts `nodes`), state,
-- result, error (nil when none), 1 when its task exists (else 0: not started, cancelled before
-- it started, or deleted by its retention). On a Redis Cluster the tasks' queues lie in other
-- slots: a started node's state is 'started' and a node's task's presence -1 (the client reads them),
-- and, for 'counts', a fourth list holds the records of the started nodes (uncounted).
local lib = workflow_lib()
local w = lib.workflow_keys(ARGV[4])
local meta = redis.call('HGETALL', lib.keys_of(w).meta)
if #meta == 0 then return nil end
local with_nodes = ARGV[5] == 'nodes'
local RESULT, ERROR, RECORD = lib.fields.result, lib.fields.error, lib.fields.record
local order = redis.call('LRANGE', lib.keys_of(w).order, 0, -1)
-- Node states, and the results, errors and records beside them (keys.ts `state`); for counts,
-- the states and the records of started nodes only (their tasks say their states), not every
-- node's payload and result.
local states
if with_nodes then
  states = lib.hash_of(redis.call('HGETALL', w.state_key))
else
  states = lib.states_of(w, order)
  local started = {}
  for _, node in ipairs(order) do
    if lib.is_started(states[node]) then started[#started + 1] = RECORD .. node end
  end
  if #started > 0 then
    local records = hmget_all(w.state_key, started)
    for i, field in ipairs(started) do states[field] = records[i] end
  end
end

-- The state of a started node's task: the record's first member as enqueue and claim write it,
-- else decoded.
local function task_state(record)
  local info = lib.parse_record(record)
  local raw = redis.call('HGET', lib.queue_keys(info.q).meta, info.k)
  if not raw then return 'cancelled' end
  return string.match(raw, '^{"s":"(%a+)"') or decode_json(raw).s
end

local function task_exists(record)
  local info = lib.parse_record(record)
  return redis.call('HEXISTS', lib.queue_keys(info.q).meta, info.k)
end

local counts, nodes, started = {}, {}, {}
for _, node in ipairs(order) do
  local state = states[node] or 'pending'
  if lib.is_started(state) and ON_CLUSTER then
    state = 'started'
    started[#started + 1] = states[RECORD .. node]
  elseif lib.is_started(state) then
    state = task_state(states[RECORD .. node])
  end
  if state ~= 'started' then counts[state] = (counts[state] or 0) + 1 end
  if with_nodes then
    local at = #nodes
    nodes[at + 1], nodes[at + 2], nodes[at + 3] = node, states[RECORD .. node], state
    nodes[at + 4], nodes[at + 5] = states[RESULT .. node] or false, states[ERROR .. node] or false
    nodes[at + 6] = (state == 'pending') and 0 or (ON_CLUSTER and -1) or task_exists(states[RECORD .. node])
  end
end
local flat = {}
for state, n in pairs(counts) do
  flat[#flat + 1] = state
  flat[#flat + 1] = n
end
if with_nodes then return { meta, flat, nodes } end
if ON_CLUSTER then return { meta, flat, {}, started } end
return { meta, flat }
