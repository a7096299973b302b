-- Shared prelude of every queue script (prepended at load time).
--
-- KEYS — the keys of one queue, all under the hash tag {prefix:queue}. The locals K_META … are
-- bound by scripts.ts before this prelude: a script listed in SCRIPT_KEYS (the hot ones: enqueue,
-- claim, ack, ack-claim, renew, forward, recover, progress) receives only the keys it touches,
-- in that list's order, and the other K_ locals are nil; every other script receives all of them, in
-- this order:
--   1 meta      hash  id -> task record (JSON, short field names)
--   2 payload   hash  id -> payload (JSON text)
--   3 queued    list  ids; LPUSH to enqueue, RPOP to claim (oldest first)
--   4 scheduled zset  id -> due time
--   5 retrying  zset  id -> due time
--   6 running   zset  id -> lease expiry
--   7 completed zset  id -> expiry of retention
--   8 dead      zset  id -> expiry of retention
--   9 cancelled zset  id -> expiry of retention
--  10 paused    string, present while the queue is paused
--  11 marker    zset  one member; a blocked worker wakes when it is added
--  12 stats     hash  processed/failed totals and per-day/per-minute counters
--  13 result    hash  id -> result (JSON text)
--  14 attempts  hash  id -> JSON array of attempt records
--  15 logs      hash  id -> JSON array of log lines
--  16 seq       string counter for lease tokens
--  17 cancel    set   ids of running tasks an operator asked to cancel
--  18 fires     hash  fire id -> fire record (JSON) of the schedules enqueueing here
--  19 firefloor hash  schedule id -> nominal time up to which fire records were pruned;
--                     run:<schedule id> -> the task of its latest run (fire.lua)
--  20 keep      hash  completed/dead/cancelled -> most tasks of that state kept (setQueueKeep)
--  21…          (FIRST_EXTRA_KEY) script-specific extra keys after the queue keys (unique keys at enqueue; a
--                schedule's fire history)
-- ARGV 1 clock offset (ms, tests only), 2 event channel, 3 queue name; then script-specific.
--
-- Task record fields: t type, s state, a attempt, m maxRetries, o timeout, d deadline,
-- c createdAt, e enqueuedAt, sa startedAt, f finishedAt, n nextRunAt, w worker, le lastError,
-- u unique key, r retention, b backoff, h headers, l links, p progress, x cancel requested,
-- k lease token (while running: the record is the lease, with its expiry in `running`).

local CHANNEL, QUEUE = ARGV[2], ARGV[3]

local ZSET_OF = {
  scheduled = K_SCHEDULED, retrying = K_RETRYING, running = K_RUNNING,
  completed = K_COMPLETED, dead = K_DEAD, cancelled = K_CANCELLED,
}
local FINISHED = { completed = true, dead = true, cancelled = true }

-- cjson refuses a \u escape of half a surrogate pair that stands alone (JSON.stringify writes
-- one for a JS string with a lone surrogate). Such text — a record stored before enqueue refused
-- lone surrogates, or a log line — is decoded with each lone half read as U+FFFD (re-encoded so
-- when the record is next written), rather than failing every script that reads it: one task
-- must not stop its queue's claims and counts.
local function without_lone_surrogates(raw)
  local out, from, at = {}, 1, 1
  while true do
    at = string.find(raw, '\\', at, true)
    if not at then break end
    if string.sub(raw, at + 1, at + 1) ~= 'u' then
      at = at + 2 -- an escaped character (\\ included): skipped whole
    else
      local code = tonumber(string.sub(raw, at + 2, at + 5), 16) or 0
      local low = string.sub(raw, at + 6, at + 7) == '\\u' and tonumber(string.sub(raw, at + 8, at + 11), 16) or 0
      if code >= 0xD800 and code <= 0xDBFF and low >= 0xDC00 and low <= 0xDFFF then
        at = at + 12 -- a pair
      elseif code >= 0xD800 and code <= 0xDFFF then
        out[#out + 1] = string.sub(raw, from, at - 1)
        out[#out + 1] = '\\ufffd'
        at = at + 6
        from = at
      else
        at = at + 6
      end
    end
  end
  if from == 1 then return raw end
  out[#out + 1] = string.sub(raw, from)
  return table.concat(out)
end

-- cjson.decode, reading lone surrogate escapes as U+FFFD (see above).
local function decode_json(raw)
  local ok, value = pcall(cjson.decode, raw)
  if ok then return value end
  local repaired = without_lone_surrogates(raw)
  if repaired == raw then error(value) end
  return cjson.decode(repaired)
end

local function get_meta(id)
  local raw = redis.call('HGET', K_META, id)
  if not raw then return nil end
  return decode_json(raw)
end

local function put_meta(id, m)
  local encoded = cjson.encode(m)
  redis.call('HSET', K_META, id, encoded)
  return encoded
end

-- Removes an id from the structure that holds its current state.
local function unlink(id, state)
  if state == 'queued' then
    redis.call('LREM', K_QUEUED, 0, id)
  elseif ZSET_OF[state] then
    redis.call('ZREM', ZSET_OF[state], id)
  end
end

local function wake_workers()
  redis.call('ZADD', K_MARKER, 0, '1')
end

-- Finished events: one PUBLISH per event, or, in a script that sets FINISHED_BATCH to a table,
-- one PUBLISH of all its lines (newline-separated) when it calls publish_finished().
local FINISHED_BATCH = nil

-- Who listens, looked up once per script call, the first time an event line is due. PUBLISH to a
-- channel nobody joined is dropped, so a line nobody hears is not built (with no task center and
-- no waiting client, ~8 % of Redis's work per task). A subscriber joining later misses the lines
-- exactly as it would miss a PUBLISH made before it joined. On Redis Cluster, where PUBSUB NUMSUB
-- sees one node's subscribers only, this would need sharded pub/sub (SPUBLISH).
local HEARD = nil

local function heard()
  if not HEARD then
    local counts = redis.call('PUBSUB', 'NUMSUB', CHANNEL, CHANNEL .. ':lifecycle')
    HEARD = { finished = counts[2] > 0, lifecycle = counts[4] > 0 }
  end
  return HEARD
end

local function announce_finished(id, state, type)
  if not heard().finished then return end
  local line = 'f\t' .. QUEUE .. '\t' .. id .. '\t' .. state .. '\t' .. (type or '')
  if FINISHED_BATCH then
    FINISHED_BATCH[#FINISHED_BATCH + 1] = line
  else
    redis.call('PUBLISH', CHANNEL, line)
  end
end

local function publish_finished()
  if FINISHED_BATCH and #FINISHED_BATCH > 0 then redis.call('PUBLISH', CHANNEL, table.concat(FINISHED_BATCH, '\n')) end
end

-- Records are JSON, but the hot paths rewrite the two commonest shapes as text instead of a
-- cjson round trip (several times cheaper in Redis's Lua). The patterns are anchored and match
-- only primitive values, and inside a JSON string every quote is escaped, so a match always
-- reads top-level members; any other record takes the decoding path.
--
-- Redis's Lua hashes every byte of every string it creates (Redis patched the sampling out), so
-- the hot paths read records in place, by offsets, rather than cutting them into substrings.
--
-- A record never attempted, with the state member first: '{"s":"queued",…}' (as enqueue writes
-- it, and as cjson may) and no "a" member anywhere (not even inside headers: such records just
-- take the slow path). Its other members need no check: only an attempt adds a start, worker or
-- lease, and every attempt leaves an "a" member (a requeue sets it back, not away).
local QUEUED_HEAD = '{"s":"queued",'

local function first_record(raw)
  -- 'a":' rather than '"a":': the search skips from one first character to the next, and 'a' is
  -- rarer than '"' (a key merely ending in "a" only sends the record the slow way).
  return string.find(raw, QUEUED_HEAD, 1, true) == 1 and not string.find(raw, 'a":', #QUEUED_HEAD, true)
end

-- The type of such a record, for a lifecycle line only (a pattern costs ~5k instructions per record
-- in Redis's Lua): after the c and e members as enqueue writes them, else decoded.
local function first_record_type(raw)
  return string.match(raw, '^{"s":"queued","c":%d+,"e":%d+,"t":"([^"\\]*)",') or decode_json(raw).t
end

-- The head claim writes for a lease: a running record starts with it (fast path) or holds the
-- same state and token in any order (after a cjson round trip).
local LAST_TOKEN, LAST_HEAD = nil, nil

local function lease_head(token)
  -- A batch's acks mostly share their claim's token: its head is made once.
  if token ~= LAST_TOKEN then LAST_TOKEN, LAST_HEAD = token, '{"s":"running","k":"' .. token .. '",' end
  return LAST_HEAD
end

-- Whether a record is running under the lease `token`. Returns the position after the lease
-- head when the record starts with it, the decoded record when it holds the lease in another
-- order (so callers do not decode it again), or false.
local function held_with(raw, token)
  if not raw then return false end
  local head = lease_head(token)
  if string.find(raw, head, 1, true) == 1 then return #head + 1 end
  if not string.find(raw, token, 1, true) then return false end
  local m = decode_json(raw)
  return m.s == 'running' and m.k == token and m
end

-- The type of a running record whose lease head ends before `from`, when it has no retention
-- override ("r") or cancel request ("x") (the "t" member right before the "m" member, as
-- enqueue writes them); nil for any other. A running record has no "f" or "n" member.
local function plain_running_type(rest, from)
  if string.find(rest, '"r":', from, true) or string.find(rest, '"x":', from, true) then return nil end
  -- Found as plain text, then matched anchored there: an unanchored pattern is tried at every
  -- quote of the record (~13 % of Redis's instructions per task, measured with callgrind). In
  -- the shape enqueue writes, the first '"t":"' is the type member. A record cjson wrote (claimed
  -- on the fast path when its state member came first) may have headers, links or a backoff
  -- before it: a header or link named "t" holds a string, and no backoff member is named "t", so
  -- '"t":"…","m":<digit>' can only be the type member followed by maxRetries; anything else fails
  -- the match and the record is decoded instead.
  local at = string.find(rest, '"t":"', from, true)
  return at and string.match(rest, '^"t":"([^"\\]*)","m":%d', at)
end

-- Lifecycle events (enqueued, started, retrying) go to a channel of their own, '<channel>:lifecycle',
-- which only the task center listens to (workers hear finished and cancel-requested only). A
-- script gathers its lines and publishes them once, at its end: one PUBLISH per batch.
-- A line: kind (e | s | r) TAB queue TAB id TAB type TAB detail (state | attempt | attempt,due).
local LIFECYCLE = {}

local function note_lifecycle(kind, id, type, detail)
  if not heard().lifecycle then return end
  LIFECYCLE[#LIFECYCLE + 1] = kind .. '\t' .. QUEUE .. '\t' .. id .. '\t' .. (type or '') .. '\t' .. detail
end

local function publish_lifecycle()
  if #LIFECYCLE > 0 then redis.call('PUBLISH', CHANNEL .. ':lifecycle', table.concat(LIFECYCLE, '\n')) end
  LIFECYCLE = {}
end

local function append_attempt(id, record_json)
  local raw = redis.call('HGET', K_ATTEMPTS, id)
  if raw then
    redis.call('HSET', K_ATTEMPTS, id, string.sub(raw, 1, -2) .. ',' .. record_json .. ']')
  else
    redis.call('HSET', K_ATTEMPTS, id, '[' .. record_json .. ']')
  end
end

-- Final states this call moved tasks to, trimmed to the queue's keep bounds at its end (trim_kept).
local TRIM = {}

-- Moves a task to a final state; its retention starts now.
local function finish(id, m, state, retention)
  TRIM[state] = true
  m.s = state
  m.f = NOW
  m.n = nil
  m.k = nil
  redis.call('ZADD', ZSET_OF[state], NOW + (m.r or retention), id)
  -- m.x is set exactly while the id is in K_CANCEL (OPERATIONS.cancel sets both).
  if m.x then redis.call('SREM', K_CANCEL, id) end
  m.x = nil
  announce_finished(id, state, m.t)
end

local function to_queued(id, m)
  m.s = 'queued'
  m.e = NOW
  m.n = nil
  m.k = nil
  redis.call('LPUSH', K_QUEUED, id)
end

-- Moves due scheduled and retrying tasks to queued, at most `limit` of each.
local function forward_due(limit)
  local moved = 0
  for _, zkey in ipairs({ K_SCHEDULED, K_RETRYING }) do
    local ids = redis.call('ZRANGEBYSCORE', zkey, '-inf', NOW, 'LIMIT', 0, limit)
    if #ids > 0 then
      redis.call('ZREM', zkey, unpack(ids))
      for _, id in ipairs(ids) do
        local m = get_meta(id)
        if m then
          to_queued(id, m)
          put_meta(id, m)
          moved = moved + 1
        end
      end
    end
  end
  if moved > 0 then wake_workers() end
  return moved
end

local function next_due()
  local due = nil
  for _, zkey in ipairs({ K_SCHEDULED, K_RETRYING }) do
    local first = redis.call('ZRANGE', zkey, 0, 0, 'WITHSCORES')
    if first[2] then
      local at = tonumber(first[2])
      if due == nil or at < due then due = at end
    end
  end
  return due or -1
end

-- Deletes the records of tasks already removed from their state's structure (at most ~4,000 ids).
local function delete_tasks(ids)
  redis.call('HDEL', K_META, unpack(ids))
  redis.call('HDEL', K_PAYLOAD, unpack(ids))
  -- What most tasks never write (a result, failed attempts, logs, a cancel request) only where it
  -- exists: a command with the batch's ids costs far more than EXISTS (each id is copied in).
  for _, key in ipairs({ K_RESULT, K_ATTEMPTS, K_LOGS }) do
    if redis.call('EXISTS', key) == 1 then redis.call('HDEL', key, unpack(ids)) end
  end
  if redis.call('EXISTS', K_CANCEL) == 1 then redis.call('SREM', K_CANCEL, unpack(ids)) end
end

local function delete_task(id)
  delete_tasks({ id })
end

-- The queue's bounds on finished tasks kept (nil: none), read once per call.
local KEEP = nil

local function keep_bounds()
  if not KEEP then
    local v = redis.call('HMGET', K_KEEP, 'completed', 'dead', 'cancelled')
    KEEP = { completed = tonumber(v[1]), dead = tonumber(v[2]), cancelled = tonumber(v[3]) }
  end
  return KEEP
end

-- Most tasks one call deletes per state for the keep bounds; the janitor's passes do the rest.
local TRIM_LIMIT = 1000

-- Deletes, in each state of TRIM with a bound, the tasks past it whose retention ends first (at
-- most `limit`). Returns how many were deleted.
local function trim_kept(limit)
  local deleted = 0
  for _, state in ipairs({ 'completed', 'dead', 'cancelled' }) do
    local bound = TRIM[state] and keep_bounds()[state]
    if bound then
      local excess = redis.call('ZCARD', ZSET_OF[state]) - bound
      if excess > 0 then
        local popped = redis.call('ZPOPMIN', ZSET_OF[state], math.min(excess, limit))
        local ids = {}
        for i = 1, #popped, 2 do ids[#ids + 1] = popped[i] end
        delete_tasks(ids)
        deleted = deleted + #ids
      end
    end
  end
  TRIM = {}
  return deleted
end

local function count_stats(processed, failed)
  if processed == 0 and failed == 0 then return end
  local day = math.floor(NOW / 86400000)
  local minute = math.floor(NOW / 60000)
  if processed > 0 then
    redis.call('HINCRBY', K_STATS, 'processed', processed)
    redis.call('HINCRBY', K_STATS, 'pd:' .. day, processed)
    redis.call('HINCRBY', K_STATS, 'pm:' .. minute, processed)
  end
  if failed > 0 then
    redis.call('HINCRBY', K_STATS, 'failed', failed)
    redis.call('HINCRBY', K_STATS, 'fd:' .. day, failed)
    redis.call('HINCRBY', K_STATS, 'fm:' .. minute, failed)
  end
end

-- Backoff as in core/backoff.ts: exponential with up to 25 % jitter, or fixed.
local function backoff_delay(spec, attempt, default_base, default_max)
  if spec and spec.type == 'fixed' then return spec.delay end
  local base = (spec and spec.base) or default_base
  local max = (spec and spec.max) or default_max
  local exponent = attempt - 1
  if exponent < 0 then exponent = 0 end
  if exponent > 52 then exponent = 52 end
  local raw = math.min(max, base * (2 ^ exponent))
  return math.floor(raw + raw * 0.25 * math.random() + 0.5)
end

-- The type of a new task's record fragment, which starts with it as a JSON string
-- ("t":"…","m":…; see codec.ts): read as text unless it holds an escape.
local function fragment_type(fragment)
  local plain = string.match(fragment, '^"t":"([^"\\]*)","m":')
  if plain then return plain end
  local type_json = string.match(fragment, '^"t":(".-"),"m":')
  return type_json and decode_json(type_json) or ''
end

-- Stores one new task. Returns its state ('queued' | 'scheduled'), 'id' (the id exists) or
-- 'u:<holder id>' (its unique key is held by an unfinished task).
local function store_task(id, fragment, payload, delay, run_at, unique_key, unique_ttl)
  if redis.call('HEXISTS', K_META, id) == 1 then return 'id' end
  if unique_key then
    -- The key holds '<holder id>\t<expiry>': the TTL is judged by the store clock (NOW); the PX
    -- expiry only removes keys nobody looks at any more.
    local value = redis.call('GET', unique_key)
    if value then
      local holder, expires = string.match(value, '^(.*)\t(%d+)$')
      if not holder then holder = value end -- written before the expiry was stored
      if expires == nil or tonumber(expires) > NOW then
        local held = get_meta(holder)
        if held and not FINISHED[held.s] then return 'u:' .. holder end
      end
    end
    redis.call('SET', unique_key, id .. '\t' .. string.format('%d', NOW + tonumber(unique_ttl)), 'PX', unique_ttl)
  end
  local due = nil
  if run_at >= 0 then due = run_at elseif delay > 0 then due = NOW + delay end
  local record, state
  if due and due > NOW then
    record = '{"s":"scheduled","c":' .. NOW .. ',"n":' .. due .. ',' .. fragment .. '}'
    redis.call('ZADD', K_SCHEDULED, due, id)
    state = 'scheduled'
  else
    record = '{"s":"queued","c":' .. NOW .. ',"e":' .. NOW .. ',' .. fragment .. '}'
    redis.call('LPUSH', K_QUEUED, id)
    state = 'queued'
  end
  redis.call('HSET', K_META, id, record)
  redis.call('HSET', K_PAYLOAD, id, payload)
  wake_workers()
  if heard().lifecycle then note_lifecycle('e', id, fragment_type(fragment), state) end
  return state
end

-- Operator transitions, shared by the single-task and the bulk scripts.
-- Each returns 'ok' or 'invalid:<state>'.
local OPERATIONS = {}

function OPERATIONS.run(id, m, retention)
  local s = m.s
  if s ~= 'dead' and s ~= 'scheduled' and s ~= 'retrying' and s ~= 'cancelled' then return 'invalid:' .. s end
  unlink(id, s)
  if s == 'dead' or s == 'cancelled' then
    m.a = 0
    m.f = nil
    m.x = nil
  end
  to_queued(id, m)
  put_meta(id, m)
  wake_workers()
  return 'ok'
end

function OPERATIONS.archive(id, m, retention)
  local s = m.s
  if s ~= 'queued' and s ~= 'scheduled' and s ~= 'retrying' then return 'invalid:' .. s end
  unlink(id, s)
  finish(id, m, 'dead', retention.dead)
  put_meta(id, m)
  return 'ok'
end

function OPERATIONS.delete(id, m, retention)
  if m.s == 'running' then return 'invalid:running' end
  unlink(id, m.s)
  delete_task(id)
  return 'ok'
end

function OPERATIONS.cancel(id, m, retention)
  local s = m.s
  if s == 'running' then
    redis.call('SADD', K_CANCEL, id)
    m.x = 1
    put_meta(id, m)
    -- On a channel of its own: workers listen to this one only, not to every finished task.
    redis.call('PUBLISH', CHANNEL .. ':cancel', 'c\t' .. QUEUE .. '\t' .. id)
    return 'requested'
  end
  if s ~= 'queued' and s ~= 'scheduled' and s ~= 'retrying' then return 'invalid:' .. s end
  unlink(id, s)
  m.le = m.le or 'cancelled by operator'
  finish(id, m, 'cancelled', retention.cancelled)
  put_meta(id, m)
  return 'ok'
end

-- A sorted set made with a member longer than 64 bytes is a skiplist (see claim_batch).
local RUNNING_SEED = 'created as a skiplist: this member is removed at once, and is no task id'

-- claim.lua's work, its arguments from ARGV[o + 1] (count, worker id, lease ms, forward limit);
-- returns its reply. The caller publishes the lifecycle lines.
local function claim_batch(o)
  local count, worker, lease_ms = tonumber(ARGV[o + 1]), ARGV[o + 2], tonumber(ARGV[o + 3])
  forward_due(tonumber(ARGV[o + 4]))
  if redis.call('EXISTS', K_PAUSED) == 1 then
    return { 1, next_due(), 0, NOW, '' }
  end
  local out = { 0, 0, 0, NOW, '' }
  local ids = redis.call('RPOP', K_QUEUED, count)
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
  if redis.call('LLEN', K_QUEUED) > 0 then
    out[3] = 1
    wake_workers()
  end
  out[2] = next_due()
  return out
end

-- ack.lua's work, its arguments from ARGV[o + 1] (see ack.lua); returns its reply, and the
-- offset of the arguments that follow the acks (as `o` is of the acks'). The caller publishes
-- the finished and lifecycle lines.
local function ack_batch(o)
  local full = tonumber(ARGV[o + 1])
  local retention = { completed = tonumber(ARGV[o + 2]), dead = tonumber(ARGV[o + 3]), cancelled = tonumber(ARGV[o + 4]) }
  -- Each ack's fields, read once: the full acks' 6 each, then the short completions, sent in
  -- groups of one lease token (token, m, then m times id and finish time).
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
    local token, m = ARGV[at], tonumber(ARGV[at + 1])
    at = at + 2
    for _ = 1, m do
      count = count + 1
      kinds[count], ids[count], tokens[count], datas[count], attempts_in[count] = 'complete', ARGV[at], token, '', ARGV[at + 1]
      at = at + 2
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
      elseif plain_type then
        -- The common case, as text: completed, finished then, kept for the default retention.
        TRIM.completed = true
        records[#records + 1] = id
        records[#records + 1] = '{"s":"completed","f":' .. finished .. ',' .. string.sub(metas[i], lease)
        completed[#completed + 1] = completed_until
        completed[#completed + 1] = id
        announce_finished(id, 'completed', plain_type)
      else
        -- held_with decoded a record it did not find in the fast shape; only those are decoded here.
        local m = type(lease) == 'table' and lease or decode_json(metas[i])
        m.k = nil
        if finished then
          finish(id, m, 'completed', retention.completed)
          m.f = tonumber(finished)
        elseif kind == 'retry' or kind == 'retry-free' or kind == 'hand-back' then
          -- A hand-back (no handler in that worker) waits for one that has it: no attempt, no
          -- error, no count.
          if kind == 'retry' then failed = failed + 1 else m.a = m.a - 1 end
          if kind ~= 'hand-back' then
            processed = processed + 1
            m.le = data
          end
          m.s = 'retrying'
          m.n = NOW + tonumber(delays[i])
          m.x = nil
          redis.call('SREM', K_CANCEL, id)
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
          redis.call('RPUSH', K_QUEUED, id)
          wake_workers()
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
  end
  count_stats(processed, failed)
  return out, at - 1
end
