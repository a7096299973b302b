-- Workflows (backend/workflow-contract.ts): a node's fan-in, run by the script that moved its
-- task to a final state under its lease (ack.lua and ack-claim.lua after the batch, recover,
-- operate), and the starts, cancels and finish that follow; and what the workflow scripts
-- (workflow-*.lua) share. The tasks to settle are noted by lib/node-ends.lua.
--
-- A workflow's keys share the hash tag {<prefix>:wf:<id>} (keys.ts). Fan-in is the one place a
-- script reaches beyond the keys it declares: the workflow's keys, and the keys of the queues
-- its nodes run in (built here from the prefix and queue name, as the channels are derived),
-- which may be other queues than the script's. A single Redis runs that as one atomic script.
-- On a Redis Cluster (ON_CLUSTER) those lie in other slots: a workflow step runs in the
-- workflow's slot alone and hands what it does to other slots off (hand_off: a node task to
-- start, cancel or enqueue in its queue, the workflow's place in the lists by state), and the
-- client carries each to its slot (redis/handoffs.ts, lua/workflow-apply.lua); a queue script
-- hands its node ends off the same way (lib/node-ends.lua), settled by lua/workflow-settle.lua.

-- HMGET of any number of fields, 4,000 at a time (Lua unpacks at most ~8,000 values).
local function hmget_all(key, fields)
  if #fields <= 4000 then return redis.call('HMGET', key, unpack(fields)) end
  local values = {}
  for from = 1, #fields, 4000 do
    local part = redis.call('HMGET', key, unpack(fields, from, math.min(from + 3999, #fields)))
    for j = 1, #part do values[from + j - 1] = part[j] end
  end
  return values
end

-- The workflow transitions, made by workflow_lib on first use in a call. Redis runs a script's
-- whole body on every call, and each local function of it is a closure made then: a call that
-- settles no node (most ack batches) makes this one, not the thirty inside.
local WORKFLOW = nil

local function workflow_lib()
  if WORKFLOW then return WORKFLOW end
  -- The key prefix: the events channel is '<prefix>:events' (keys.ts).
  local PREFIX = string.sub(CHANNEL, 1, -8)

  -- A workflow was created or retried (running), or finished: a message of its own on the events
  -- channel, 'w' TAB state TAB id — the id last and alone, as it may hold any character (events.ts).
  local function announce_workflow(id, state)
    if heard().finished then redis.call('PUBLISH', CHANNEL, 'w\t' .. state .. '\t' .. id) end
  end

  -- Queue keys by queue name, made once per call.
  local QUEUE_KEYS = {}

  -- The keys of a queue as keys.ts names them, with its name (for write_new_task and events).
  local function queue_keys(name)
    local q = QUEUE_KEYS[name]
    if not q then
      local tag = '{' .. PREFIX .. ':' .. name .. '}:'
      q = { name = name }
      for _, key in ipairs({ 'meta', 'payload', 'queued', 'scheduled', 'retrying', 'running', 'completed', 'dead', 'cancelled', 'marker', 'result', 'attempts', 'logs', 'cancel', 'keep' }) do
        q[key] = tag .. key
      end
      QUEUE_KEYS[name] = q
    end
    return q
  end

  -- Workflows this call touched: the key of their `state` hash (`state_key`; the others by
  -- keys_of, each name made on first use), the nodes' records read (`infos`), the outcomes of the nodes that ended in this call (`outcomes`:
  -- {node, state, result, error}, false for none: for their children's inputs, node_inputs), the node states read or set
  -- (`states`), the fields of `state` set and not yet written (`writes`, flat, made at once by
  -- flush_starts) and, once load_workflow read them, their flags — written through, so every
  -- step sees the last, and written out with the other fields (`dirty`).
  local WORKFLOWS = {}
  -- Workflows with fields to write, in the order first set.
  local DIRTY = {}
  local KEY_NAMES = { __index = function(key, name)
    local full = key[1] .. name
    key[name] = full
    return full
  end }

  local function workflow_keys(id)
    local w = WORKFLOWS[id]
    if not w then
      w = { id = id, state_key = '{' .. PREFIX .. ':wf:' .. id .. '}:state', infos = {}, outcomes = {}, states = {}, writes = {} }
      WORKFLOWS[id] = w
    end
    return w
  end

  -- The workflow's other keys (meta, order), named on first use: a node's end needs only
  -- `state_key`.
  local function keys_of(w)
    local key = w.key
    if not key then
      key = setmetatable({ '{' .. PREFIX .. ':wf:' .. w.id .. '}:' }, KEY_NAMES)
      w.key = key
    end
    return key
  end

  -- A node id in a reason, as JSON.stringify quotes it (cjson escapes '/', JSON.stringify does not).
  local function quoted(node)
    return (string.gsub(cjson.encode(node), '\\/', '/'))
  end

  -- HGETALL's flat reply as a table.
  local function hash_of(flat)
    local t = {}
    for i = 1, #flat, 2 do t[flat[i]] = flat[i + 1] end
    return t
  end

  -- `command key values…` in calls of at most 4,000 values (Lua unpacks at most ~8,000).
  local function call_chunked(command, key, values)
    for from = 1, #values, 4000 do
      redis.call(command, key, unpack(values, from, math.min(from + 3999, #values)))
    end
  end

  -- Fields of a workflow's `state` hash (keys.ts) beside its node ids, which hold no control
  -- character: the flags, per node its result, error, count of parents to wait for and record,
  -- how many nodes are not final, and (on a Cluster) the last hand-off's number.
  local FLAGS, RESULT, ERROR, WAITING, RECORD, OPEN, HANDOFFS = '\1', '\2', '\3', '\4', '\5', '\6', '\7'

  -- On a Cluster: what this call hands off to other slots, per workflow, written at flush_starts
  -- to the workflow's `handoff` sorted set: each entry { n, kind, … } unique by its number n
  -- (the score), which the client removes once it is applied.
  local HANDED = {}

  local function hand_off(w, entry)
    local list = HANDED[w.id]
    if not list then
      list = {}
      HANDED[w.id] = list
      HANDED[#HANDED + 1] = w
    end
    list[#list + 1] = entry
  end

  local function flush_handoffs()
    for _, w in ipairs(HANDED) do
      local list = HANDED[w.id]
      local last = redis.call('HINCRBY', w.state_key, HANDOFFS, #list)
      local flat = {}
      for i, entry in ipairs(list) do
        local n = last - #list + i
        table.insert(entry, 1, n)
        flat[#flat + 1], flat[#flat + 2] = n, cjson.encode(entry)
      end
      call_chunked('ZADD', '{' .. PREFIX .. ':wf:' .. w.id .. '}:handoff', flat)
      HANDED[w.id] = nil
    end
    HANDED = {}
  end

  -- The flags as one field: state, then failFast, failed, cancelling, fresh (1 | 0): 'running
  -- 1001'. They change only as the workflow fails, is cancelled, finishes or is retried.
  local function packed_flags(w)
    return w.state .. (w.fail_fast and ' 1' or ' 0') .. (w.failed and '1' or '0') .. (w.cancelling and '1' or '0') .. (w.fresh and '1' or '0')
  end

  -- Flags fields read in this call, decoded ({state, failFast, failed, cancelling, fresh}): the
  -- workflows a call settles mostly share one.
  local FLAG_SETS = {}

  -- Fields of `state` to write (`node` a node's state: kept for node_state), at flush_starts.
  local function put(w, field, value, node)
    local n = #w.writes
    w.writes[n + 1], w.writes[n + 2] = field, value
    if node then w.states[node] = value end
    if not w.queued then
      w.queued = true
      DIRTY[#DIRTY + 1] = w
    end
  end

  -- The flags changed: written with the other fields.
  local function mark(w)
    w.dirty = true
    if not w.queued then
      w.queued = true
      DIRTY[#DIRTY + 1] = w
    end
  end

  local function flush_workflows()
    for _, w in ipairs(DIRTY) do
      if w.dirty then
        local n = #w.writes
        w.writes[n + 1], w.writes[n + 2] = FLAGS, packed_flags(w)
      end
      if #w.writes > 0 then call_chunked('HSET', w.state_key, w.writes) end
      w.writes, w.queued, w.dirty = {}, false, false
    end
    DIRTY = {}
  end

  -- The workflow with its flags, or nil when it is not kept (never made, or cleaned up); read
  -- with the state of `node` (optional), in one call. Its count of open nodes (`open`) is read
  -- when a node ends (one_less_open) or when it is needed (open_nodes).
  local function load_workflow(id, node)
    local w = workflow_keys(id)
    if w.state == nil then
      local v = redis.call('HMGET', w.state_key, FLAGS, node or FLAGS)
      local flags = v[1]
      if not flags then return nil end
      local f = FLAG_SETS[flags]
      if not f then
        local state, ff, failed, cancelling, fresh = string.match(flags, '^(%a+) (%d)(%d)(%d)(%d)$')
        f = { state, ff == '1', failed == '1', cancelling == '1', fresh == '1' }
        FLAG_SETS[flags] = f
      end
      w.state, w.fail_fast, w.failed, w.cancelling, w.fresh = f[1], f[2], f[3], f[4], f[5]
      if node and v[2] then w.states[node] = v[2] end
    end
    return w
  end

  -- How many of the workflow's nodes are not final.
  local function open_nodes(w)
    if w.open == nil then w.open = tonumber(redis.call('HGET', w.state_key, OPEN)) end
    return w.open
  end

  -- Sets that count (the workflow's creation, a retry).
  local function set_open(w, count)
    w.open = count
    redis.call('HSET', w.state_key, OPEN, tostring(count))
  end

  -- The states of the nodes `order` names (node id -> state; none: pending, as created), read
  -- without the records, results and errors beside them in the hash (a 10,000-node workflow's
  -- payloads and results may be many MB).
  local function states_of(w, order)
    flush_workflows()
    local v = hmget_all(w.state_key, order)
    local states = {}
    for i, node in ipairs(order) do states[node] = v[i] end
    return states
  end

  -- A node's state: as this call set or read it, else read.
  local function node_state(w, node)
    local s = w.states[node]
    if s == nil then
      s = redis.call('HGET', w.state_key, node)
      w.states[node] = s
    end
    return s
  end

  -- A node's record (keys.ts `nodes`, workflows.ts encodeNodeRecord), cut at its tabs: {k task
  -- id, q queue, a parents and c children (lists joined by NODE_LIST), g record fragment, r
  -- runOnFailure (boolean), p payload, dl delay and ra runAt (-1: none)}. Plain finds and subs:
  -- a JSON decode or a pattern with a capture per part costs twice as much.
  local function parse_record(raw)
    local find, sub = string.find, string.sub
    local e1 = find(raw, '\t', 1, true)
    local e2 = find(raw, '\t', e1 + 1, true)
    local e3 = find(raw, '\t', e2 + 1, true)
    local e4 = find(raw, '\t', e3 + 1, true)
    local e5 = find(raw, '\t', e4 + 1, true)
    local e6 = find(raw, '\t', e5 + 1, true)
    local e8 = find(raw, '\t', find(raw, '\t', e6 + 1, true) + 1, true)
    local info = { k = sub(raw, 1, e1 - 1), q = sub(raw, e1 + 1, e2 - 1), a = sub(raw, e3 + 1, e4 - 1), c = sub(raw, e4 + 1, e5 - 1), g = sub(raw, e5 + 1, e6 - 1),
      r = string.byte(raw, e6 + 1) == 49, p = sub(raw, e8 + 1), dl = -1, ra = -1 }
    if e3 > e2 + 1 then
      local ms = tonumber(sub(raw, e2 + 2, e3 - 1))
      if string.byte(raw, e2 + 1) == 114 then info.ra = ms else info.dl = ms end
    end
    return info
  end

  -- A node's record, read once per call (from the hash its end read a moment before: warm).
  local function node_info(w, node)
    local info = w.infos[node]
    if not info then
      info = parse_record(redis.call('HGET', w.state_key, RECORD .. node))
      w.infos[node] = info
    end
    return info
  end

  -- Whether a node state is 'started' (with its task id and children, keys.ts): the only one that
  -- begins with an s.
  local function is_started(s)
    return type(s) == 'string' and string.byte(s, 1) == 115
  end

  -- Whether a node state is pending: none (as created) or 'pending' (as retried).
  local function is_pending(s)
    return not s or s == 'pending'
  end

  -- The ids of a list of node ids as a record holds it.
  local function ids(list)
    local out = {}
    for id in string.gmatch(list, '[^\1]+') do out[#out + 1] = id end
    return out
  end

  -- A node became final. (A decrement in Redis: rewriting the count as text from Lua costs more.)
  local function one_less_open(w)
    w.open = redis.call('HINCRBY', w.state_key, OPEN, '-1')
  end

  -- A pending node that will never run: cancelled now.
  local function cancel_pending(w, node, reason)
    put(w, node, 'cancelled', node)
    put(w, ERROR .. node, reason)
    -- Its count goes: a parent that finishes later takes it below 0, and nothing starts.
    redis.call('HDEL', w.state_key, WAITING .. node)
    w.outcomes[node] = { node, 'cancelled', false, reason }
    one_less_open(w)
  end

  -- Removes a task of queue `q` in `state` (a node's earlier run, replaced by its next).
  local function remove_task(q, id, state)
    if state == 'queued' then
      local raw = redis.call('HGET', q.meta, id)
      local m = raw and decode_json(raw)
      leave_line(q.queued, id, type(m) == 'table' and m.g or nil)
    elseif q[state] then
      redis.call('ZREM', q[state], id)
    end
    for _, key in ipairs({ q.meta, q.payload, q.result, q.attempts, q.logs }) do redis.call('HDEL', key, id) end
    redis.call('SREM', q.cancel, id)
  end

  -- The writes of the node tasks this call started, per queue name: {q, metas, payloads, queued,
  -- scheduled} (write_new_task's `into`), made at once by flush_starts — before anything
  -- reads a queue's records, and at the end of the call.
  local STARTS = {}

  local function flush_starts()
    flush_workflows()
    if ON_CLUSTER then flush_handoffs() end
    for name, b in pairs(STARTS) do
      local q = b.q
      if #b.queued > 0 then call_chunked('LPUSH', q.queued, b.queued) end
      if #b.scheduled > 0 then call_chunked('ZADD', q.scheduled, b.scheduled) end
      call_chunked('HSET', q.meta, b.metas)
      write_payloads(q.payload, b.payloads)
      STARTS[name] = nil
    end
  end


  -- What a node's handler reads of its parents (ctx.parent(s)), stored in its task's record (its
  -- last member, "wi", codec.ts) for its claim to hand over: per parent id, state, result, error
  -- (false: none), as JSON. The outcomes of parents that ended in this call are at hand; the
  -- others are read.
  local function node_inputs(w, info)
    local a = info.a
    if a == '' then return '[]' end
    -- One parent that ended in this call (a chain's step): its outcome is the list, written as
    -- cjson.encode would (the result and the error are JSON strings of the texts).
    local o = w.outcomes[a]
    if o then
      return '[' .. cjson.encode(o[1]) .. ',"' .. o[2] .. '",' .. (o[3] and cjson.encode(o[3]) or 'false') .. ',' .. (o[4] and cjson.encode(o[4]) or 'false') .. ']'
    end
    local parents = ids(a)
    local missing = {}
    for _, parent in ipairs(parents) do
      if not w.outcomes[parent] then missing[#missing + 1] = parent end
    end
    local read = {}
    if #missing > 0 then
      flush_workflows()
      local fields = {}
      for _, parent in ipairs(missing) do
        fields[#fields + 1], fields[#fields + 2], fields[#fields + 3] = parent, RESULT .. parent, ERROR .. parent
      end
      local v = hmget_all(w.state_key, fields)
      -- A node with no state field is pending (as created); a started one's holds its task id
      -- and children too (keys.ts), reported as 'started'.
      for j, parent in ipairs(missing) do
        local state = v[3 * j - 2] or 'pending'
        if is_started(state) then state = 'started' end
        read[parent] = { parent, state, v[3 * j - 1] or false, v[3 * j] or false }
      end
    end
    local flat = {}
    for _, parent in ipairs(parents) do
      local p = w.outcomes[parent] or read[parent]
      flat[#flat + 1], flat[#flat + 2], flat[#flat + 3], flat[#flat + 4] = p[1], p[2], p[3], p[4]
    end
    return cjson.encode(flat)
  end

  -- Starts a node: its task is enqueued in its own queue as an ordinary task (links
  -- {workflowId, workflowNode}) with its inputs in its record, replacing the node's own earlier run
  -- (a retry). A task id taken by another task cannot be written: the node ends dead
  -- (settle_nodes), as its task could not run. A fresh workflow (keys.ts) has neither.
  -- A node task's writes, batched per queue for flush_starts (write_new_task's `into`).
  local function add_start(q, id, fragment, payload, delay, run_at)
    local b = STARTS[q.name]
    if not b then
      b = { q = q, metas = {}, payloads = {}, queued = {}, scheduled = {} }
      STARTS[q.name] = b
    end
    write_new_task(q, id, fragment, payload, delay, run_at, b)
  end

  -- A node's task record fragment as its start writes it: its links end with the node id, unless
  -- its workflow id needs escapes (workflows.ts); the id is added here, in the one concatenation.
  local function start_fragment(w, info)
    local g = info.g
    if string.byte(g, -1) == 125 then return g .. ',"wi":' .. node_inputs(w, info) end
    return g .. ',"workflowId":"' .. w.id .. '"},"wi":' .. node_inputs(w, info)
  end

  local function start_node(w, node, info)
    put(w, node, 'started\t' .. info.k .. '\t' .. info.c, node)
    if ON_CLUSTER then
      -- Its queue's slot looks for an earlier run and writes the task (lua/workflow-apply.lua);
      -- the workflow's creation time tells a workflow made again under the same id from this one.
      w.created = w.created or redis.call('HGET', keys_of(w).meta, 'created')
      hand_off(w, { 'start', info.q, info.k, start_fragment(w, info), info.p, info.dl, info.ra, node, w.fresh and 1 or 0, w.created })
      return
    end
    local q = queue_keys(info.q)
    local raw = nil
    if not w.fresh then
      flush_starts()
      raw = redis.call('HGET', q.meta, info.k)
    end
    if raw then
      local earlier = decode_json(raw)
      local l = earlier.l
      if type(l) ~= 'table' or l.workflowId ~= w.id or l.workflowNode ~= node then
        ENDED_NODES[#ENDED_NODES + 1] = { id = info.k, wf = w.id, node = node, state = 'dead', error = 'task id ' .. info.k .. ' is taken by another task' }
        return
      end
      remove_task(q, info.k, earlier.s)
    end
    add_start(q, info.k, start_fragment(w, info), info.p, info.dl, info.ra)
  end

  -- Counts a finished node off one child's wait (keys.ts `state`): a child whose count reaches 0
  -- starts, or, when a parent failed (`why`: how) or the workflow is failing or cancelled, is
  -- cancelled; then its children, to release in turn, and why they are, are returned. A count
  -- below 0 is a child cancelled already; a child of one parent keeps no count: it waits for
  -- that one, unless it was cancelled.
  local function release_child(w, child, why)
    local left
    if string.find(node_info(w, child).a, '\1', 1, true) then
      left = redis.call('HINCRBY', w.state_key, WAITING .. child, -1)
    elseif not why and not w.cancelling and not w.failed then
      -- In a workflow not failing or cancelled no node was cancelled (a retry runs its
      -- cancelled ones again).
      left = 0
    else
      left = is_pending(node_state(w, child)) and 0 or -1
    end
    if left < 0 then return nil end
    local reason = nil
    if w.cancelling then
      reason = 'workflow cancelled'
    elseif (why or (w.failed and w.fail_fast)) and not node_info(w, child).r then
      -- A child that does not runOnFailure cannot run once a parent failed.
      reason = why or 'workflow failed'
    end
    if reason then
      cancel_pending(w, child, reason)
      return node_info(w, child).c, 'parent ' .. quoted(child) .. ' was cancelled'
    end
    if left == 0 then start_node(w, child, node_info(w, child)) end
    return nil
  end

  -- Releases the children of a finished node (`children`: as its record lists them; its started
  -- state has them), and the children of those cancelled then, in turn (a stack, not recursion:
  -- a cancel may run down a long chain). `failure`: why the node failed, if it did. A list of one
  -- child (a chain's step) is taken as it is.
  local function release_children(w, children, failure)
    local lists, whys = nil, nil
    local list, why = children, failure or false
    while list do
      if string.find(list, '\1', 1, true) then
        for child in string.gmatch(list, '[^\1]+') do
          local more, because = release_child(w, child, why)
          if more then
            lists, whys = lists or {}, whys or {}
            lists[#lists + 1], whys[#whys + 1] = more, because
          end
        end
      elseif list ~= '' then
        local more, because = release_child(w, list, why)
        if more then
          lists, whys = lists or {}, whys or {}
          lists[#lists + 1], whys[#whys + 1] = more, because
        end
      end
      list = nil
      if lists and #lists > 0 then list, why = table.remove(lists), table.remove(whys) end
    end
  end

  -- Moves a waiting task (queued, scheduled, retrying) of queue `q` to cancelled, as an operator's
  -- cancel does; its node is settled in turn. A task of another queue than the script's is
  -- trimmed to that queue's keep bound by its janitor.
  local function cancel_waiting_task(q, id, m, reason)
    if m.s == 'queued' then leave_line(q.queued, id, m.g) else redis.call('ZREM', q[m.s], id) end
    m.s, m.f, m.n, m.k, m.le = 'cancelled', NOW, nil, nil, reason
    redis.call('ZADD', q.cancelled, NOW + (m.r or DEFAULT_CANCELLED_RETENTION), id)
    if m.x then redis.call('SREM', q.cancel, id) end
    m.x = nil
    redis.call('HSET', q.meta, id, cjson.encode(m))
    if q.name == QUEUE then TRIM.cancelled = true end
    announce_finished(id, 'cancelled', m.t, q.name)
    note_node_end(id, m.l, 'cancelled', nil, reason)
  end

  -- Cancels every node not final (`all`: runOnFailure ones too, for cancelWorkflow): pending ones
  -- at once (their children move on), waiting tasks to cancelled (settled in turn), running ones
  -- asked to cancel (settled when their attempt ends). Reads every node: failure and cancel only.
  local function cancel_open_nodes(w, all)
    flush_starts()
    local order = redis.call('LRANGE', keys_of(w).order, 0, -1)
    local states = states_of(w, order)
    local reason = all and 'workflow cancelled' or 'workflow failed'
    for _, node in ipairs(order) do
      local s = states[node]
      if is_pending(s) or is_started(s) then
        local info = node_info(w, node)
        if all or not info.r then
          if is_started(s) and ON_CLUSTER then
            -- Its queue's slot cancels it or asks it to cancel (lua/workflow-apply.lua).
            hand_off(w, { 'cancel', info.q, info.k, reason })
          elseif is_started(s) then
            local q = queue_keys(info.q)
            local raw = redis.call('HGET', q.meta, info.k)
            local m = raw and decode_json(raw)
            if m and m.s == 'running' then
              request_cancel(q.cancel, q.meta, q.name, info.k, m)
            elseif m and (m.s == 'queued' or m.s == 'scheduled' or m.s == 'retrying') then
              cancel_waiting_task(q, info.k, m, reason)
            end
          elseif is_pending(node_state(w, node)) then
            -- Read again: a cancel earlier in this loop may have reached it through a parent.
            cancel_pending(w, node, reason)
            release_children(w, info.c, 'parent ' .. quoted(node) .. ' was cancelled')
          end
        end
      end
    end
  end

  -- The onFinish task, enqueued once as the workflow finishes, with WorkflowFinish as its payload
  -- (node ids by outcome, in declared order).
  local function enqueue_on_finish(w, state, spec_json, task_id)
    flush_starts()
    local spec = decode_json(spec_json)
    local q = queue_keys(spec.q)
    if not ON_CLUSTER and redis.call('HEXISTS', q.meta, task_id) == 1 then return end
    local order = redis.call('LRANGE', keys_of(w).order, 0, -1)
    local states = states_of(w, order)
    local by = { completed = {}, dead = {}, cancelled = {} }
    for _, node in ipairs(order) do
      local list = by[states[node]]
      if list then list[#list + 1] = cjson.encode(node) end
    end
    -- By hand: cjson writes an empty list as {}.
    local payload = '{"workflowId":' .. cjson.encode(w.id) .. ',"state":"' .. state .. '","completed":[' .. table.concat(by.completed, ',')
      .. '],"failed":[' .. table.concat(by.dead, ',') .. '],"cancelled":[' .. table.concat(by.cancelled, ',') .. ']}'
    if ON_CLUSTER then
      -- Enqueued by its queue's slot unless it is there already (lua/workflow-apply.lua).
      hand_off(w, { 'onfinish', spec.q, task_id, spec.g, payload, spec.dl, spec.ra })
    else
      write_new_task(q, task_id, spec.g, payload, spec.dl, spec.ra)
    end
  end

  -- When no node is open, the workflow ends (once: only a running one does), its retention starts
  -- and its onFinish task is enqueued.
  local function finish_if_done(w)
    if w.state ~= 'running' or open_nodes(w) > 0 then return end
    local state = (w.cancelling and 'cancelled') or (w.failed and 'failed') or 'completed'
    w.state = state
    mark(w)
    local v = redis.call('HMGET', keys_of(w).meta, 'retention', 'onFinish', 'onFinishTask', 'created')
    redis.call('HSET', keys_of(w).meta, 'state', state, 'finished', NOW_S)
    if ON_CLUSTER then
      -- The lists by state lie in other slots: the client files it from its meta.
      hand_off(w, { 'index' })
    else
      redis.call('ZADD', PREFIX .. ':workflows:expiry', NOW + tonumber(v[1]), w.id)
      redis.call('ZREM', PREFIX .. ':workflows:running', w.id)
      redis.call('ZADD', PREFIX .. ':workflows:' .. state, v[4], w.id)
    end
    announce_workflow(w.id, state)
    if v[2] and v[3] then enqueue_on_finish(w, state, v[2], v[3]) end
  end

  -- A node reached a final state: recorded (its result or error kept by the workflow, whatever
  -- its task's retention), then its children and the workflow move on.
  local function end_node(w, node, children, state, result, err)
    -- A running node cancelled while its workflow fails or is cancelled was cancelled by it (its
    -- worker reports an operator's cancel): the node says why.
    if state == 'cancelled' and (w.cancelling or w.failed) then err = w.cancelling and 'workflow cancelled' or 'workflow failed' end
    put(w, node, state, node)
    if result then put(w, RESULT .. node, result) end
    if err then put(w, ERROR .. node, err) end
    w.outcomes[node] = { node, state, result or false, err or false }
    one_less_open(w)
    if state ~= 'completed' and not w.cancelling and not w.failed then
      w.failed = true
      mark(w)
      if w.fail_fast then cancel_open_nodes(w, false) end
    end
    release_children(w, children, state ~= 'completed' and ('parent ' .. quoted(node) .. ' ended ' .. state) or nil)
    finish_if_done(w)
  end

  -- Settles one noted task: only the current run of a started node of a kept workflow counts, so
  -- a node ends once.
  local function settle_task(ended)
    local wf, node = ended.wf, ended.node
    if type(wf) ~= 'string' or type(node) ~= 'string' then return end
    local w = load_workflow(wf, node)
    if not w then return end
    -- Its state: 'started' TAB its task id TAB its children (keys.ts).
    local s, id = node_state(w, node), ended.id
    if not is_started(s) or string.find(s, id, 9, true) ~= 9 or string.byte(s, 9 + #id) ~= 9 then return end
    local children = string.sub(s, 10 + #id)
    if ended.state == 'completed' then
      end_node(w, node, children, 'completed', ended.result, nil)
    else
      end_node(w, node, children, ended.state, nil, ended.error or ended.state)
    end
  end

  -- Settles the noted node tasks, and what that finishes in turn, until none is left.
  local function settle()
    local i = 1
    while i <= #ENDED_NODES do
      settle_task(ENDED_NODES[i])
      i = i + 1
    end
    ENDED_NODES = {}
    flush_starts()
  end

  -- What the workflow scripts use.
  WORKFLOW = {
    prefix = PREFIX, announce_workflow = announce_workflow, queue_keys = queue_keys, workflow_keys = workflow_keys, keys_of = keys_of,
    load_workflow = load_workflow, hash_of = hash_of, call_chunked = call_chunked, node_info = node_info, start_node = start_node,
    cancel_open_nodes = cancel_open_nodes, finish_if_done = finish_if_done, settle = settle, flush_starts = flush_starts,
    node_inputs = node_inputs, put = put, mark = mark, packed_flags = packed_flags, node_state = node_state, set_open = set_open, states_of = states_of,
    parse_record = parse_record, is_started = is_started, ids = ids, hand_off = hand_off, add_start = add_start,
    remove_task = remove_task, cancel_waiting_task = cancel_waiting_task,
    fields = { flags = FLAGS, result = RESULT, error = ERROR, waiting = WAITING, record = RECORD, open = OPEN },
  }
  return WORKFLOW
end

-- After an ack batch (ack.lua, ack-claim.lua): the node ends it noted settled; on a Cluster
-- handed off (lib/node-ends.lua), and one applied ack of `results` answers 2 to tell the client.
local function settle_acked(results)
  if not ON_CLUSTER then
    workflow_lib().settle()
    return
  end
  hand_off_ends()
  for i = 1, #results do
    if results[i] == 1 then
      results[i] = 2
      return
    end
  end
end

-- Settles the noted node tasks (their children started or cancelled, their workflows moved on
-- or finished), and what that finishes in turn; a call that noted none pays a length check. On
-- a Cluster a queue script hands them off instead (lib/node-ends.lua).
local function settle_nodes()
  if #ENDED_NODES > 0 then
    if ON_CLUSTER then hand_off_ends() else workflow_lib().settle() end
  end
end
