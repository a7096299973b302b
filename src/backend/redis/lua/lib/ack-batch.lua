-- The ack transition: ending attempts under their lease (ack.lua, ack-claim.lua).

-- ack.lua's work, its arguments from ARGV[o + 1] (see ack.lua); returns its reply, and the
-- offset of the arguments that follow the acks (as `o` is of the acks'). The caller settles the
-- workflow nodes whose tasks it finished (settle_nodes, after the batch's writes), then
-- publishes the finished and lifecycle lines.
local function ack_batch(o)
  local full = tonumber(ARGV[o + 1])
  local retention = { completed = tonumber(ARGV[o + 2]), dead = tonumber(ARGV[o + 3]), cancelled = tonumber(ARGV[o + 4]) }
  -- Each ack's fields, read once: the full acks' 6 each, then the completions, sent in groups of
  -- one lease token (token, m, r, then m times id and finish time, and with r = 1 the result).
  local kinds, ids, tokens, datas, delays, attempts_in = {}, {}, {}, {}, {}, {}
  local at = o + 5
  for i = 1, full do
    kinds[i], ids[i], tokens[i], datas[i], delays[i], attempts_in[i] = ARGV[at], ARGV[at + 1], ARGV[at + 2], ARGV[at + 3], ARGV[at + 4], ARGV[at + 5]
    at = at + 6
  end
  local count = full
  local groups = tonumber(ARGV[at])
  at = at + 1
  for _ = 1, groups do
    local token, m, results = ARGV[at], tonumber(ARGV[at + 1]), ARGV[at + 2] == '1'
    at = at + 3
    if results then
      for _ = 1, m do
        count = count + 1
        kinds[count], ids[count], tokens[count], datas[count], attempts_in[count] = 'complete', ARGV[at], token, ARGV[at + 2], ARGV[at + 1]
        at = at + 3
      end
    else
      for _ = 1, m do
        count = count + 1
        kinds[count], ids[count], tokens[count], datas[count], attempts_in[count] = 'complete', ARGV[at], token, '', ARGV[at + 1]
        at = at + 2
      end
    end
  end
  FINISHED_BATCH = {}
  local out = {}
  local processed, failed = 0, 0
  -- The record is the lease: it is running with the ack's token, or the ack is stale.
  local metas = redis.call('HMGET', K_META, unpack(ids))
  -- `ended` makes a second ack of the same id in the batch stale, as a per-ack check would.
  local ended, ended_ids, live, held = {}, {}, {}, {}
  for i = 1, count do
    local id = ids[i]
    local lease = not ended[id] and held_with(metas[i], tokens[i])
    if lease then
      ended[id] = true
      ended_ids[#ended_ids + 1] = id
      live[#live + 1] = i
      held[i] = lease
    else
      out[i] = 0
    end
  end
  if #ended_ids > 0 then
    -- Attempt records to append, read in one HMGET (completions send none; a hand-back was
    -- no attempt and leaves none).
    local recorded = {}
    for _, i in ipairs(live) do
      if kinds[i] ~= 'complete' and kinds[i] ~= 'hand-back' then recorded[#recorded + 1] = ids[i] end
    end
    local previous = #recorded > 0 and redis.call('HMGET', K_ATTEMPTS, unpack(recorded)) or {}
    local records, attempts, results, completed, gone = {}, {}, {}, {}, {}
    local completed_until = string.format('%d', NOW + retention.completed)
    -- A queue that keeps no completed task: its completions are deleted, not written.
    local keep_none = keep_bounds().completed == 0
    -- A workflow node's task that ends is noted for its fan-in (settle_nodes, once the batch is
    -- written), inline: a helper a hot script names is a closure made on every call. Only a queue
    -- that has had node tasks looks for them in the records read as text (the find costs each
    -- task ~1,500 Redis instructions, 2 %, bench/redis-instructions.mjs); a decoded record says
    -- it in its links for free.
    local node_queue = keep_bounds().nodes
    -- A completion's type is read for its record, or, deleted at once, for a finished line only.
    local typed = not keep_none or heard().finished
    local r = 0
    for _, i in ipairs(live) do
      local kind, id, data = kinds[i], ids[i], datas[i]
      out[i] = 1
      local attempt = attempts_in[i]
      -- A completion's finish time, as digits (as the worker measured it; now if it sent none).
      local finished = kind == 'complete' and (string.match(attempt, '^%d+$') or NOW_S)
      if finished then
        processed = processed + 1
        if data ~= '' and not keep_none then
          results[#results + 1] = id
          results[#results + 1] = data
        end
      elseif kind ~= 'hand-back' then
        r = r + 1
        attempts[#attempts + 1] = id
        attempts[#attempts + 1] = previous[r] and (string.sub(previous[r], 1, -2) .. ',' .. attempt .. ']') or ('[' .. attempt .. ']')
      end
      local lease = held[i]
      local plain_type = finished and typed and type(lease) == 'number' and plain_running_type(metas[i], lease)
      if finished and keep_none then
        -- Tasks completed before the bound was 0 go too (trim_kept), as at any other completion.
        TRIM.completed = true
        gone[#gone + 1] = id
        if heard().finished then
          announce_finished(id, 'completed', plain_type or (type(lease) == 'table' and lease or decode_json(metas[i])).t)
        end
        if node_queue then
          local wf, node
          if type(lease) == 'table' then
            if type(lease.l) == 'table' then wf, node = lease.l.workflowId, lease.l.workflowNode end
          elseif string.find(metas[i], 'workflowNode":', 1, true) then
            wf, node = node_links(metas[i], 1)
          end
          if node then ENDED_NODES[#ENDED_NODES + 1] = { id = id, wf = wf, node = node, state = 'completed', result = data ~= '' and data or nil } end
        end
      elseif plain_type then
        -- The common case, as text: completed, finished then, kept for the default retention.
        TRIM.completed = true
        records[#records + 1] = id
        records[#records + 1] = '{"s":"completed","f":' .. finished .. ',' .. string.sub(metas[i], lease)
        completed[#completed + 1] = completed_until
        completed[#completed + 1] = id
        announce_finished(id, 'completed', plain_type)
        if node_queue and string.find(metas[i], 'workflowNode":', lease, true) then
          local wf, node = node_links(metas[i], lease)
          if wf then ENDED_NODES[#ENDED_NODES + 1] = { id = id, wf = wf, node = node, state = 'completed', result = data ~= '' and data or nil } end
        end
      else
        -- held_with decoded a record it did not find in the fast shape; only those are decoded here.
        local m = type(lease) == 'table' and lease or decode_json(metas[i])
        m.k = nil
        if finished then
          finish(id, m, 'completed', retention.completed)
          m.f = tonumber(finished)
        elseif m.x and kind ~= 'dead' and kind ~= 'cancelled' then
          -- An attempt that would run again (retry, hand-back, requeue) of a task asked to cancel
          -- (an operator, or its workflow failing) ends it cancelled instead, as a cancelled ack
          -- would, so the request is not lost to the next attempt: its attempt record (a
          -- hand-back's is none, nor counted), the ack's error or else the operator's cancel.
          if kind == 'hand-back' then
            m.le = m.le or 'cancelled by operator'
          else
            processed = processed + 1
            m.le = kind == 'requeue' and 'cancelled by operator' or data
          end
          finish(id, m, 'cancelled', retention.cancelled)
        elseif kind == 'retry' or kind == 'retry-free' or kind == 'hand-back' then
          -- A hand-back (no handler in that worker) waits for one that has it: no attempt, no
          -- error, no count.
          if kind == 'retry' then failed = failed + 1 else m.a = m.a - 1 end
          if kind ~= 'hand-back' then
            processed = processed + 1
            m.le = data
          end
          m.s = 'retrying'
          -- Not asked to cancel (m.x, the branch above): nothing to take out of K_CANCEL.
          m.n = NOW + tonumber(delays[i])
          redis.call('ZADD', K_RETRYING, m.n, id)
          note_lifecycle('r', id, m.t, m.a .. ',' .. m.n)
          wake_workers()
        elseif kind == 'dead' then
          processed = processed + 1
          failed = failed + 1
          m.le = data
          finish(id, m, 'dead', retention.dead)
        elseif kind == 'cancelled' then
          processed = processed + 1
          m.le = data
          finish(id, m, 'cancelled', retention.cancelled)
        else -- requeue: back to the front of the queue, attempt not counted
          m.a = m.a - 1
          m.s = 'queued'
          m.w = nil
          m.e = NOW
          line_up(K_QUEUED, { id }, m.g, true)
          wake_workers()
        end
        local links = m.l
        if links and links.workflowNode and (m.s == 'completed' or m.s == 'dead' or m.s == 'cancelled') then
          local completed_now = m.s == 'completed'
          ENDED_NODES[#ENDED_NODES + 1] = { id = id, wf = links.workflowId, node = links.workflowNode, state = m.s, result = completed_now and data ~= '' and data or nil, error = not completed_now and m.le or nil }
        end
        records[#records + 1] = id
        records[#records + 1] = cjson.encode(m)
      end
    end
    if #records > 0 then redis.call('HSET', K_META, unpack(records)) end
    if #attempts > 0 then redis.call('HSET', K_ATTEMPTS, unpack(attempts)) end
    if #results > 0 then redis.call('HSET', K_RESULT, unpack(results)) end
    if #completed > 0 then redis.call('ZADD', K_COMPLETED, unpack(completed)) end
    if #gone > 0 then delete_tasks(gone) end
    redis.call('ZREM', K_RUNNING, unpack(ended_ids))
    if keep_bounds().groups then
      -- Out of the groups' running tasks; their groups, if parked, take turns again (lib/groups.lua).
      local members = {}
      for _, i in ipairs(live) do
        local group = running_group(metas[i])
        if group then members[#members + 1] = group .. ' ' .. ids[i] end
      end
      if #members > 0 then left_groups(queue_tag(K_QUEUED), members, keep_bounds().group_concurrency) end
    end
    -- Slots freed under a concurrency limit: a worker waiting for one claims again.
    if keep_bounds().concurrency or keep_bounds().group_concurrency then wake_workers() end
  end
  count_stats(processed, failed)
  return out, at - 1
end
