-- Stores a workflow and starts its root nodes, in one call (workflow-contract.ts createWorkflow).
-- KEYS from FIRST_EXTRA_KEY: the workflow's meta key (its slot: its other keys share the tag).
-- ARGV 4 workflow id, 5 name (JSON; '' none), 6 failFast (1 | 0), 7 retention ms (the
-- default resolved), 8 onFinish task as it starts (JSON {g, q, dl, ra}; '' none), 9 onFinish task
-- id, 10 fresh (1: the task ids are the client's new uuids, keys.ts), 11 the number m of the
-- nodes' queues, then the m queue names, then the node count n and per node, in declared order,
-- 3 values: id, its record (keys.ts `nodes`), its parent count.
-- Returns 'ok', 'conflict' (the workflow id is in use) or 'task:<id>' (a root's task id is
-- taken in its queue); on a refusal nothing is written.
local lib = workflow_lib()
local id, fresh, queue_count = ARGV[4], ARGV[10] == '1', tonumber(ARGV[11])
local w = lib.workflow_keys(id)
if redis.call('EXISTS', w.key.meta) == 1 then return 'conflict' end
local first, count = 13 + queue_count, tonumber(ARGV[12 + queue_count])
local FIELDS = 3
-- The roots' records, decoded: checked before anything is written (a refusal leaves nothing
-- behind), started after.
local roots = {}
for i = 0, count - 1 do
  local at = first + i * FIELDS
  if ARGV[at + 2] == '0' then
    local info = lib.parse_record(ARGV[at + 1])
    if not fresh and redis.call('HEXISTS', lib.queue_keys(info.q).meta, info.k) == 1 then return 'task:' .. info.k end
    roots[#roots + 1] = { ARGV[at], info }
  end
end
-- Per hash, its field/value pairs: `state` (keys.ts) holds the flags, each node's record and, per
-- node of two parents or more, their count (a node with no state is pending).
w.state, w.fail_fast, w.failed, w.cancelling, w.fresh, w.open = 'running', ARGV[6] == '1', false, false, fresh, count
local order, states = {}, { lib.fields.flags, lib.packed_flags(w) }
for i = 0, count - 1 do
  local at = first + i * FIELDS
  local node = ARGV[at]
  order[i + 1] = node
  states[#states + 1], states[#states + 2] = lib.fields.record .. node, ARGV[at + 1]
  if ARGV[at + 2] ~= '0' and ARGV[at + 2] ~= '1' then
    states[#states + 1], states[#states + 2] = lib.fields.waiting .. node, ARGV[at + 2]
  end
end
lib.call_chunked('RPUSH', w.key.order, order)
lib.call_chunked('HSET', w.key.state, states)
local meta = { 'state', 'running', 'failFast', ARGV[6], 'created', NOW_S, 'retention', ARGV[7] }
local function add_meta(field, value)
  meta[#meta + 1] = field
  meta[#meta + 1] = value
end
if ARGV[5] ~= '' then add_meta('name', ARGV[5]) end
local queues = {}
for i = 1, queue_count do queues[i] = ARGV[11 + i] end
if ARGV[8] ~= '' then
  add_meta('onFinish', ARGV[8])
  add_meta('onFinishTask', ARGV[9])
end
redis.call('HSET', w.key.meta, unpack(meta))
redis.call('ZADD', lib.prefix .. ':workflows', NOW_S, id)
redis.call('ZADD', lib.prefix .. ':workflows:running', NOW_S, id)
-- Its queues are registered with it: a node's task is found through the queue registry. Each
-- node queue is marked as one whose ack batches look for node tasks (lib/keep.lua keep_bounds).
for _, queue in ipairs(queues) do redis.call('HSET', lib.queue_keys(queue).keep, 'nodes', '1') end
if ARGV[8] ~= '' then queues[#queues + 1] = decode_json(ARGV[8]).q end
lib.call_chunked('SADD', lib.prefix .. ':queues', queues)
for _, root in ipairs(roots) do lib.start_node(w, root[1], root[2]) end
lib.flush_starts()
lib.announce_workflow(id, 'running')
publish_lifecycle()
return 'ok'
