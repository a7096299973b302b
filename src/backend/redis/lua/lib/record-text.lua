-- The hot paths' reading of records as text, without decoding them.

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
