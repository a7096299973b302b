-- The claim transition: queued tasks to running under one lease (claim.lua, ack-claim.lua).

-- A sorted set made with a member longer than 64 bytes is a skiplist (see claim_batch).
local RUNNING_SEED = 'created as a skiplist: this member is removed at once, and is no task id'

-- How many of `count` tasks the queue's limits let start now (setQueueLimits, lib/keep.lua), and
-- which limit held it back ('' none, 'concurrency', 'rate'): running tasks are those with a live
-- lease (an expired one's slot is free before it is recovered); a rate counts the starts in the
-- sliding window (NOW - interval, NOW] of K_STARTS.
local function claim_room(count)
  local limits = keep_bounds()
  local room, limited = count, ''
  if limits.concurrency then
    local free = limits.concurrency - redis.call('ZCOUNT', K_RUNNING, '(' .. NOW_S, '+inf')
    if free < room then room, limited = math.max(free, 0), 'concurrency' end
  end
  if limits.rate_limit then
    redis.call('ZREMRANGEBYSCORE', K_STARTS, '-inf', NOW - limits.rate_ms)
    local free = limits.rate_limit - redis.call('ZCARD', K_STARTS)
    if free <= room and free < count then room, limited = math.max(free, 0), 'rate' end
  end
  return room, limited
end

-- Up to `room` queued ids of a queue whose groups have waiting tasks (lib/groups.lua), the groups
-- and the tasks without one ('') taking turns from the front of the ring; after its turn a group
-- goes to the back. A turn takes an equal share of the room left (rounded down, at least one; the
-- rest goes to the next turns), and a group running as many as the queue's groupConcurrency is
-- parked instead. Returns the ids and whether a group's limit held one back. The turns of a
-- round are taken in one call and put back in one.
local function claim_turns(room, lease_ms)
  local tag = queue_tag(K_QUEUED)
  local ring, parked = tag .. 'ring', tag .. 'gparked'
  local limit = keep_bounds().group_concurrency
  -- With fewer grouped tasks running in all than the limit allows one group, less this claim's
  -- room, no group can fill up: nothing is counted per group.
  local counting = limit and redis.call('ZCARD', tag .. 'grunning') + room > limit
  local ids, started, running, full, idle = {}, {}, {}, false, 0
  while #ids < room do
    local length = redis.call('LLEN', ring)
    if length == 0 or idle >= length then break end
    local turns = redis.call('RPOP', ring, math.min(length, room - #ids))
    local share = math.max(1, math.floor((room - #ids) / #turns))
    local back, parking = {}, {}
    for _, group in ipairs(turns) do
      local want, took, stays = math.min(share, room - #ids), nil, true
      if want > 0 then
        if group == '' then
          took = redis.call('RPOP', K_QUEUED, want)
        else
          local live, earliest = counting and running[group], nil
          if counting and not live then
            live, earliest = group_running(tag, group, limit)
            running[group] = live
          end
          if counting and live >= limit then
            -- Full: parked until a task of it ends, or its earliest lease expires. Counted before
            -- (this claim took some of it): the earliest of its other leases and this claim's.
            full, stays = true, false
            if not earliest then earliest = math.min(earliest_lease(tag, group) or math.huge, NOW + lease_ms) end
            parking[#parking + 1] = earliest
            parking[#parking + 1] = group
          else
            if counting and live + want > limit then want = limit - live end
            local list = tag .. 'gq:' .. group
            took = redis.call('RPOP', list, want)
            for _, id in ipairs(took or {}) do
              started[#started + 1] = 0
              started[#started + 1] = group .. ' ' .. id
            end
            if counting and took then running[group] = live + #took end
            -- Its line is empty: out of the turns.
            stays = redis.call('EXISTS', list) == 1
          end
        end
      end
      if took then
        for _, id in ipairs(took) do ids[#ids + 1] = id end
        idle = 0
      elseif stays then
        -- A turn that took nothing and stays ('' with an empty line): a round of only those ends the claim.
        idle = idle + 1
      end
      if stays then back[#back + 1] = group end
    end
    if #parking > 0 then redis.call('ZADD', parked, unpack(parking)) end
    -- To the back, in the order they had: the first of them has its next turn first.
    if #back > 0 then redis.call('LPUSH', ring, unpack(back)) end
    if #back < #turns and redis.call('LLEN', ring) <= 1 then
      -- Only the tasks without a group are left in the turns: they go, and the rest of the room
      -- is taken from their line.
      redis.call('DEL', ring)
      if #ids < room then
        for _, id in ipairs(redis.call('RPOP', K_QUEUED, room - #ids) or {}) do ids[#ids + 1] = id end
      end
      break
    end
  end
  if #started > 0 then
    redis.call('DECRBY', tag .. 'grouped', #started / 2)
    redis.call('ZADD', tag .. 'grunning', unpack(started))
  end
  return ids, full
end

-- claim.lua's work, its arguments from ARGV[o + 1] (count, worker id, lease ms, forward limit);
-- returns its reply: paused (1 | 0), next due, more (1 | 0), now, the lease token, the limit that
-- held the claim back ('' none, 'concurrency', 'rate', 'group': every group with waiting tasks runs
-- its groupConcurrency) and when it may let a task start (-1: not known): a rate's next start,
-- the earliest live lease's expiry (concurrency), the first parked group's (group); then per task
-- id, record (a workflow node's holds its inputs, lib/workflow.lua) and payload. The caller
-- publishes the lifecycle lines.
local function claim_batch(o)
  local count, worker, lease_ms = tonumber(ARGV[o + 1]), ARGV[o + 2], tonumber(ARGV[o + 3])
  -- Whether any task is scheduled or retrying (one EXISTS for both sets): most claims have none
  -- to forward or to report the next due time of, and skip four calls.
  local timed = redis.call('EXISTS', K_SCHEDULED, K_RETRYING) > 0
  if timed then forward_due(tonumber(ARGV[o + 4])) end
  if redis.call('EXISTS', K_PAUSED) == 1 then
    return { 1, timed and next_due() or -1, 0, NOW, '', '', -1 }
  end
  local out = { 0, 0, 0, NOW, '', '', -1 }
  local room, limited = claim_room(count)
  local ids = false
  local grouped = keep_bounds().groups or GROUPS_JOINED
  if room > 0 then
    local tag = queue_tag(K_QUEUED)
    if grouped then
      -- Parked groups whose earliest lease has expired since take turns again; all of them once
      -- the queue has no groupConcurrency any more.
      local due = keep_bounds().group_concurrency and redis.call('ZRANGEBYSCORE', tag .. 'gparked', '-inf', NOW_S, 'LIMIT', 0, 100)
        or (redis.call('EXISTS', tag .. 'gparked') == 1 and redis.call('ZRANGE', tag .. 'gparked', 0, 999)) or {}
      if #due > 0 then unpark(tag, due) end
    end
    if grouped and redis.call('EXISTS', tag .. 'ring') == 1 then
      ids = claim_turns(room, lease_ms)
      if #ids == 0 then ids = false end
    else
      ids = redis.call('RPOP', K_QUEUED, room)
    end
  end
  if ids then
    -- One token for the batch: a task appears once in it, so (id, token) still names one attempt.
    local token = tostring(redis.call('INCR', K_SEQ))
    out[5] = token
    -- As text once: a number passed to redis.call is formatted again for every member.
    local expires = string.format('%d', NOW + lease_ms)
    local running, records = {}, {}
    -- The running record's head, the same for every task of the batch that takes the fast path;
    -- the record holds the lease token (there is no other lease state than it and `running`).
    local head = lease_head(token) .. '"a":1,"sa":' .. NOW_S .. ',"w":' .. cjson.encode(worker) .. ','
    -- One HMGET per hash and one HSET for all records, instead of three calls per task.
    local metas = redis.call('HMGET', K_META, unpack(ids))
    local payloads = redis.call('HMGET', K_PAYLOAD, unpack(ids))
    for i, id in ipairs(ids) do
      local raw = metas[i]
      if raw then
        -- Fast path: a record never attempted is rewritten as text; anything else is decoded.
        local encoded, attempt, sent, type
        if first_record(raw) then
          encoded, attempt = head .. string.sub(raw, #QUEUED_HEAD + 1), '1'
          -- The worker is sent the record as it was queued: what the running one adds (state,
          -- token, attempt 1, start, worker) it knows from the reply's header.
          sent = raw
          if heard().lifecycle then type = first_record_type(raw) end
        else
          local m = decode_json(raw)
          m.s = 'running'
          m.a = (m.a or 0) + 1
          m.sa = NOW
          m.w = worker
          m.k = token
          encoded, attempt, type = cjson.encode(m), tostring(m.a), m.t
        end
        records[#records + 1] = id
        records[#records + 1] = encoded
        running[#running + 1] = expires
        running[#running + 1] = id
        out[#out + 1] = id
        out[#out + 1] = sent or encoded
        out[#out + 1] = payloads[i] or 'null'
        note_lifecycle('s', id, type, attempt)
      end
    end
    if keep_bounds().rate_limit and #running > 0 then
      -- Each start in the rate's window, under a member of its own (batch token and place).
      local starts = {}
      for i = 2, #running, 2 do
        starts[#starts + 1] = NOW
        starts[#starts + 1] = token .. ':' .. i
      end
      redis.call('ZADD', K_STARTS, unpack(starts))
    end
    if #running > 0 then
      if redis.call('EXISTS', K_RUNNING) == 1 then
        redis.call('ZADD', K_RUNNING, unpack(running))
      else
        -- Made with a member longer than 64 bytes, a sorted set is a skiplist, and stays one after
        -- that member goes, until it empties: under 128 members it would otherwise be a listpack,
        -- which every insert and removal scans (~3.3 µs per task claimed and acked with ~100
        -- running, against ~0.9 µs as a skiplist). Task ids have no spaces, so this one is no id.
        running[#running + 1] = '+inf'
        running[#running + 1] = RUNNING_SEED
        redis.call('ZADD', K_RUNNING, unpack(running))
        redis.call('ZREM', K_RUNNING, RUNNING_SEED)
      end
      redis.call('HSET', K_META, unpack(records))
    end
  end
  -- (The groups' lines are counted only in a queue that has had groups: one call less for others.)
  if (grouped and queued_count(K_QUEUED) or redis.call('LLEN', K_QUEUED)) > 0 then
    out[3] = 1
    local took = ids and #ids or 0
    -- Fewer taken than the room with tasks left: they are parked groups' (lib/groups.lua).
    if limited == '' and grouped and took < room then limited = 'group' end
    if limited ~= '' and took < count then
      -- Held back by a limit: the other workers are not woken for tasks none of them may start.
      out[6] = limited
      if limited == 'rate' then
        local oldest = redis.call('ZRANGE', K_STARTS, 0, 0, 'WITHSCORES')
        out[7] = oldest[2] and (tonumber(oldest[2]) + keep_bounds().rate_ms) or NOW
      elseif limited == 'concurrency' then
        -- When the earliest live lease expires: its slot frees then at the latest, also a crashed
        -- worker's, which no ack frees (an ack before then wakes the workers).
        local first = redis.call('ZRANGEBYSCORE', K_RUNNING, '(' .. NOW_S, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
        if first[2] then out[7] = tonumber(first[2]) end
      elseif limited == 'group' then
        -- When a parked group's earliest lease expires (an ack before then wakes the workers).
        local first = redis.call('ZRANGE', queue_tag(K_QUEUED) .. 'gparked', 0, 0, 'WITHSCORES')
        if first[2] then out[7] = tonumber(first[2]) end
      end
    else
      wake_workers()
    end
  end
  out[2] = timed and next_due() or -1
  return out
end
