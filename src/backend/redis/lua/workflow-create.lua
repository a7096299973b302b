-- Stores workflows and starts their root nodes, in one call (workflow-contract.ts createWorkflow:
-- the creations a client makes in the same tick go together, workflows.ts). Each is checked,
-- then written, before the next: one refused leaves nothing of itself behind and the others go on.
-- KEYS from FIRST_EXTRA_KEY: the first workflow's meta key (its slot: its other keys share the
-- tag).
-- ARGV 4 the number of workflows, then per workflow: its id, name (JSON; '' none), failFast
-- (1 | 0), retention ms (the default resolved), onFinish task as it starts (JSON {g, q, dl, ra};
-- '' none), onFinish task id, fresh (1: the task ids are the client's new uuids, keys.ts), the
-- number m of the nodes' queues, then the m queue names, then the node count n and per node, in
-- declared order, 3 values: id, its record (keys.ts `state`), its parent count.
-- Returns per workflow 'ok', 'conflict' (the workflow id is in use) or 'task:<id>' (a root's task
-- id is taken in its queue).
local lib = workflow_lib()
local FIELDS = 3
-- The queues this call registered, and those it marked as node queues.
local REGISTERED, MARKED = {}, {}

-- The workflow whose arguments start at ARGV[o]: its reply, and where the next one's start.
local function create(o)
  local id, fresh, queue_count = ARGV[o], ARGV[o + 6] == '1', tonumber(ARGV[o + 7])
  local first, count = o + 9 + queue_count, tonumber(ARGV[o + 8 + queue_count])
  local after = first + count * FIELDS
  local w = lib.workflow_keys(id)
  if redis.call('EXISTS', lib.keys_of(w).meta) == 1 then return 'conflict', after end
  -- The roots' records, decoded: checked before anything is written (a refusal leaves nothing
  -- behind), started after. Ids not the client's new ones are looked up: among the tasks of the
  -- workflows before this one in the call too (their starts written first).
  if not fresh then lib.flush_starts() end
  local roots = {}
  for i = 0, count - 1 do
    local at = first + i * FIELDS
    if ARGV[at + 2] == '0' then
      local info = lib.parse_record(ARGV[at + 1])
      -- (On a Cluster the client looked, in every queue: the root's queue is in another slot.)
      if not fresh and not ON_CLUSTER and redis.call('HEXISTS', lib.queue_keys(info.q).meta, info.k) == 1 then return 'task:' .. info.k, after end
      roots[#roots + 1] = { ARGV[at], info }
    end
  end
  -- Per hash, its field/value pairs: `state` (keys.ts) holds the flags, the count of open
  -- nodes, each node's record and, per node of two parents or more, their count (a node with no
  -- state is pending).
  w.state, w.fail_fast, w.failed, w.cancelling, w.fresh, w.open = 'running', ARGV[o + 2] == '1', false, false, fresh, count
  local order, states = {}, { lib.fields.flags, lib.packed_flags(w), lib.fields.open, ARGV[o + 8 + queue_count] }
  for i = 0, count - 1 do
    local at = first + i * FIELDS
    local node = ARGV[at]
    order[i + 1] = node
    states[#states + 1], states[#states + 2] = lib.fields.record .. node, ARGV[at + 1]
    if ARGV[at + 2] ~= '0' and ARGV[at + 2] ~= '1' then
      states[#states + 1], states[#states + 2] = lib.fields.waiting .. node, ARGV[at + 2]
    end
  end
  lib.call_chunked('RPUSH', lib.keys_of(w).order, order)
  lib.call_chunked('HSET', w.state_key, states)
  local meta = { 'state', 'running', 'failFast', ARGV[o + 2], 'created', NOW_S, 'retention', ARGV[o + 3] }
  local function add_meta(field, value)
    meta[#meta + 1] = field
    meta[#meta + 1] = value
  end
  if ARGV[o + 1] ~= '' then add_meta('name', ARGV[o + 1]) end
  local queues = {}
  for i = 1, queue_count do queues[i] = ARGV[o + 7 + i] end
  if ARGV[o + 4] ~= '' then
    add_meta('onFinish', ARGV[o + 4])
    add_meta('onFinishTask', ARGV[o + 5])
  end
  redis.call('HSET', lib.keys_of(w).meta, unpack(meta))
  if ON_CLUSTER then
    -- The lists of workflows lie in other slots: the client files it from its meta.
    lib.hand_off(w, { 'index' })
  else
    redis.call('ZADD', lib.prefix .. ':workflows', NOW_S, id)
    redis.call('ZADD', lib.prefix .. ':workflows:running', NOW_S, id)
  end
  -- Its queues are registered with it: a node's task is found through the queue registry. Each
  -- node queue is marked as one whose ack batches look for node tasks (lib/keep.lua keep_bounds).
  -- (Once per call: the workflows of a call often share their queues.)
  if ARGV[o + 4] ~= '' then queues[#queues + 1] = decode_json(ARGV[o + 4]).q end
  local new = {}
  for i, queue in ipairs(queues) do
    if i <= queue_count and ON_CLUSTER then
      lib.hand_off(w, { 'mark', queue })
    elseif i <= queue_count and not MARKED[queue] then
      MARKED[queue] = true
      redis.call('HSET', lib.queue_keys(queue).keep, 'nodes', '1')
    end
    if not REGISTERED[queue] then
      REGISTERED[queue] = true
      new[#new + 1] = queue
    end
  end
  -- (On a Cluster the client registers them: the registry is in another slot.)
  if #new > 0 and not ON_CLUSTER then lib.call_chunked('SADD', lib.prefix .. ':queues', new) end
  for _, root in ipairs(roots) do lib.start_node(w, root[1], root[2]) end
  lib.announce_workflow(id, 'running')
  return 'ok', after
end

local replies, o = {}, 5
for i = 1, tonumber(ARGV[4]) do
  replies[i], o = create(o)
end
lib.flush_starts()
publish_lifecycle()
return replies
