-- Stores a workflow and starts its root nodes, in one call (workflow-contract.ts createWorkflow).
-- KEYS from FIRST_EXTRA_KEY: the workflow's meta key (its slot: its other keys share the tag).
-- ARGV 4 workflow id, 5 name (JSON; '' none), 6 failFast (1 | 0), 7 retention ms (the
-- default resolved), 8 onFinish task as it starts (JSON {g, q, dl, ra}; '' none), 9 onFinish task id,
-- 10 node count n; then per node, in declared order, 7 values: id, task id, queue, info JSON
-- {k, q, y, r}, start spec JSON {g, p, dl, ra}, parents JSON, children JSON (keys.ts).
-- Returns 'ok', 'conflict' (the workflow id is in use) or 'task:<id>' (a root's task id is
-- taken in its queue); on a refusal nothing is written.
local lib = workflow_lib()
local id, count = ARGV[4], tonumber(ARGV[10])
local w = lib.workflow_keys(id)
if redis.call('EXISTS', w.key.meta) == 1 then return 'conflict' end
local FIELDS = 7
-- Checked before anything is written: a refusal leaves nothing behind.
for i = 0, count - 1 do
  local at = 11 + i * FIELDS
  if ARGV[at + 5] == '[]' and redis.call('HEXISTS', lib.queue_keys(ARGV[at + 2]).meta, ARGV[at + 1]) == 1 then
    return 'task:' .. ARGV[at + 1]
  end
end
-- Per hash, its field/value pairs.
local order, infos, specs, parents, children, states, queues, seen = {}, {}, {}, {}, {}, {}, {}, {}
for i = 0, count - 1 do
  local at = 11 + i * FIELDS
  local node = ARGV[at]
  order[i + 1] = node
  infos[2 * i + 1], infos[2 * i + 2] = node, ARGV[at + 3]
  specs[2 * i + 1], specs[2 * i + 2] = node, ARGV[at + 4]
  parents[2 * i + 1], parents[2 * i + 2] = node, ARGV[at + 5]
  children[2 * i + 1], children[2 * i + 2] = node, ARGV[at + 6]
  states[2 * i + 1], states[2 * i + 2] = node, 'pending'
  if not seen[ARGV[at + 2]] then
    seen[ARGV[at + 2]] = true
    queues[#queues + 1] = ARGV[at + 2]
  end
  if ARGV[at + 5] ~= '[]' then lib.call_chunked('SADD', w.pending .. node, decode_json(ARGV[at + 5])) end
end
lib.call_chunked('RPUSH', w.key.order, order)
lib.call_chunked('HSET', w.key.nodes, infos)
lib.call_chunked('HSET', w.key.specs, specs)
lib.call_chunked('HSET', w.key.parents, parents)
lib.call_chunked('HSET', w.key.children, children)
lib.call_chunked('HSET', w.key.state, states)
local meta = { 'state', 'running', 'failFast', ARGV[6], 'failed', '0', 'cancelling', '0', 'open', count, 'created', NOW_S, 'retention', ARGV[7] }
local function add_meta(field, value)
  meta[#meta + 1] = field
  meta[#meta + 1] = value
end
if ARGV[5] ~= '' then add_meta('name', ARGV[5]) end
local node_queues = { unpack(queues) }
if ARGV[8] ~= '' then
  add_meta('onFinish', ARGV[8])
  add_meta('onFinishTask', ARGV[9])
  queues[#queues + 1] = decode_json(ARGV[8]).q
end
redis.call('HSET', w.key.meta, unpack(meta))
redis.call('ZADD', lib.prefix .. ':workflows', NOW_S, id)
redis.call('ZADD', lib.prefix .. ':workflows:running', NOW_S, id)
-- Its queues are registered with it: a node's task is found through the queue registry. Each
-- node queue is marked as one whose ack batches look for node tasks (lib/keep.lua keep_bounds).
for _, queue in ipairs(node_queues) do redis.call('HSET', lib.queue_keys(queue).keep, 'nodes', '1') end
lib.call_chunked('SADD', lib.prefix .. ':queues', queues)
w = lib.load_workflow(id)
for i = 0, count - 1 do
  local at = 11 + i * FIELDS
  if ARGV[at + 5] == '[]' then lib.start_node(w, ARGV[at], { k = ARGV[at + 1], q = ARGV[at + 2] }, decode_json(ARGV[at + 4])) end
end
lib.announce_workflow(id, 'running')
publish_lifecycle()
return 'ok'
