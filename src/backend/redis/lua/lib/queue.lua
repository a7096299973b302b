-- The helpers in lib/ are prepended to the queue scripts at load time (scripts.ts): each script
-- gets the clock (clock.lua), a binding of the queue keys it receives, and the helpers it uses.
--
-- KEYS: the keys of one queue, all under the hash tag {prefix:queue}, as locals K_META, K_QUEUED
-- … (QUEUE_KEY_NAMES in keys.ts says what each holds). A script listed in SCRIPT_KEYS receives
-- only the keys it touches, in that list's order, and the other K_ locals are nil; every other
-- script receives all of them. Script-specific keys (unique keys at enqueue, a schedule's fire
-- history) follow from KEYS[FIRST_EXTRA_KEY]. The generated header of each script lists its KEYS.
-- ARGV 1 clock offset (ms, tests only), 2 event channel (with a leading newline, which no key
-- prefix holds, on a Redis Cluster: ON_CLUSTER — publish even when no subscriber is seen,
-- lib/events.lua; hand workflow steps between slots, lib/node-ends.lua), 3 queue name; then
-- script-specific.
--
-- Task record fields: t type, s state, a attempt, m maxRetries, o timeout, d deadline,
-- c createdAt, e enqueuedAt, sa startedAt, f finishedAt, n nextRunAt, w worker, le lastError,
-- u unique key, r retention, b backoff, h headers, l links, p progress, x cancel requested,
-- k lease token (while running: the record is the lease, with its expiry in `running`).

local CHANNEL, QUEUE, ON_CLUSTER = ARGV[2], ARGV[3], string.byte(ARGV[2], 1) == 10
if ON_CLUSTER then CHANNEL = string.sub(CHANNEL, 2) end

-- The key that holds each state but queued (a list).
local ZSET_OF = {
  scheduled = K_SCHEDULED, retrying = K_RETRYING, running = K_RUNNING,
  completed = K_COMPLETED, dead = K_DEAD, cancelled = K_CANCELLED,
}
