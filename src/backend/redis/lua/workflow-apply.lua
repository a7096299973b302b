-- On a Redis Cluster: applies, in a queue's slot, what workflow steps handed off to it
-- (lib/workflow.lua hand_off): a node's task to start (replacing its earlier run), a node's task
-- to cancel (or ask to cancel, when running), a workflow's onFinish task to enqueue once, the
-- queue's mark as one that holds node tasks. The node ends this makes (a task cancelled, a task
-- id another task holds) are handed off in turn (lib/node-ends.lua).
-- KEYS: the queue's keys.
-- ARGV 4… the entries, each its workflow id, a tab, then as the workflow's `handoff` set holds
-- it (JSON): { n, 'start', queue, task id, fragment, payload, delay, runAt, node, fresh (1 | 0),
-- the workflow's creation time },
-- { n, 'cancel', queue, task id, reason }, { n, 'onfinish', queue, task id, fragment, payload,
-- delay, runAt } or { n, 'mark', queue }.
-- A start is applied once: its workflow id, creation time and number are kept a day
-- (`handoff-done`), so one carried again (by a relay that stopped before removing it) does not
-- start the node twice; the task's record keeps the number (`hn`), and a cancel handed off before
-- it (a slow relay's, after a retry started the node anew) passes the new run by. The others are
-- as good applied twice.
-- Returns 'ok'.
local lib = workflow_lib()
local q = lib.queue_keys(QUEUE)
local done = '{' .. lib.prefix .. ':' .. QUEUE .. '}:handoff-done'
redis.call('ZREMRANGEBYSCORE', done, '-inf', NOW - 86400000)
for i = 4, #ARGV do
  local tab = string.find(ARGV[i], '\t', 1, true)
  local wf = string.sub(ARGV[i], 1, tab - 1)
  local e = cjson.decode(string.sub(ARGV[i], tab + 1))
  local kind, id = e[2], e[4]
  if kind == 'start' then
    local applied = wf .. '\t' .. tostring(e[11]) .. '\t' .. e[1]
    if not redis.call('ZSCORE', done, applied) then
      redis.call('ZADD', done, NOW, applied)
      local node, taken = e[9], false
      -- A node that ran before (a retry): its earlier run is replaced; a task of anything else
      -- holding the id makes the node end dead, as its task cannot run.
      local raw = e[10] ~= 1 and redis.call('HGET', q.meta, id)
      if raw then
        local l = decode_json(raw).l
        if type(l) ~= 'table' or l.workflowId ~= wf or l.workflowNode ~= node then
          ENDED_NODES[#ENDED_NODES + 1] = { id = id, wf = wf, node = node, state = 'dead', error = 'task id ' .. id .. ' is taken by another task' }
          taken = true
        else
          lib.flush_starts()
          lib.remove_task(q, id, decode_json(raw).s)
        end
      end
      if not taken then lib.add_start(q, id, e[5] .. ',"hn":' .. string.format('%d', e[1]), e[6], e[7], e[8]) end
    end
  elseif kind == 'cancel' then
    lib.flush_starts()
    local raw = redis.call('HGET', q.meta, id)
    local m = raw and decode_json(raw)
    if m and (m.hn or 0) > e[1] then
      -- A run started after this cancel was handed off: not the one it meant.
      m = nil
    end
    if m and m.s == 'running' then
      request_cancel(q.cancel, q.meta, q.name, id, m)
    elseif m and (m.s == 'queued' or m.s == 'scheduled' or m.s == 'retrying') then
      lib.cancel_waiting_task(q, id, m, e[5])
    end
  elseif kind == 'onfinish' then
    lib.flush_starts()
    if redis.call('HEXISTS', q.meta, id) == 0 then write_new_task(q, id, e[5], e[6], e[7], e[8]) end
  elseif kind == 'mark' then
    redis.call('HSET', q.keep, 'nodes', '1')
  end
end
lib.flush_starts()
settle_nodes()
trim_kept(TRIM_LIMIT)
publish_finished()
publish_lifecycle()
return 'ok'
