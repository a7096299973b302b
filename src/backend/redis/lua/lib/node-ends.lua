-- A workflow node's task reaching a final state, noted by the transition that moved it, for
-- its fan-in (settle_nodes, lib/workflow.lua) once the call's task writes are done.

-- Tasks this call moved to a final state whose links name a workflow node: each { id, wf (its
-- workflow id), node, state, result, error (nil: the state's name) }. It grows while they are
-- settled (a cancel finishes tasks).
local ENDED_NODES = {}

-- Notes a task that reached a final state, when its links name a workflow node; `err`: its
-- last error. (The ack batch notes its own inline.)
local function note_node_end(id, links, state, result, err)
  if type(links) == 'table' and links.workflowNode then
    ENDED_NODES[#ENDED_NODES + 1] = { id = id, wf = links.workflowId, node = links.workflowNode, state = state, result = result, error = err }
  end
end

-- The workflow id and node of a workflow node's task record, read from `from` on as the client
-- writes its links ({"workflowNode":…,"workflowId":…}, ids without escapes), else decoded; nil
-- for a task that is no node.
local function node_links(raw, from)
  local at = string.find(raw, '"l":{"workflowNode":"', from, true)
  local wf, node = nil, nil
  if at then node, wf = string.match(raw, '^"l":{"workflowNode":"([^"\\]*)","workflowId":"([^"\\]*)"}', at) end
  if wf then return wf, node end
  local l = decode_json(raw).l
  if type(l) == 'table' and l.workflowNode then return l.workflowId, l.workflowNode end
  return nil
end

-- On a Redis Cluster a workflow's keys lie in another slot than its nodes' queues: a queue
-- script hands the node ends it noted to the client (redis/handoffs.ts), which settles them in
-- the workflow's slot. They wait in the queue's `handoff` sorted set (in its slot, named from
-- the prefix as the channel is), each an entry unique by its sequence number (the score), so
-- that a relay that stopped halfway is resumed from it.
local function hand_off_ends()
  local prefix = string.sub(CHANNEL, 1, -8)
  local key = '{' .. prefix .. ':' .. QUEUE .. '}:handoff'
  local seq = '{' .. prefix .. ':' .. QUEUE .. '}:seq'
  for _, e in ipairs(ENDED_NODES) do
    local n = redis.call('INCR', seq)
    redis.call('ZADD', key, n, cjson.encode({ n, 'end', e.wf, e.node, e.id, e.state, e.result or false, e.error or false }))
  end
  ENDED_NODES = {}
end

-- Whether a task runs a node of a workflow still kept (its runs are that workflow's to start).
-- The key is the workflow's `state`, its field the node's record (keys.ts); the prefix is the
-- events channel's ('<prefix>:events'). On a Cluster the workflow's keys cannot be read from a
-- queue's slot: a task linked to a node is taken as its workflow's.
local function runs_workflow_node(m)
  local l = m.l
  if type(l) ~= 'table' or type(l.workflowId) ~= 'string' or type(l.workflowNode) ~= 'string' then return false end
  if ON_CLUSTER then return true end
  local state = '{' .. string.sub(CHANNEL, 1, -8) .. ':wf:' .. l.workflowId .. '}:state'
  return redis.call('HEXISTS', state, '\5' .. l.workflowNode) == 1
end
