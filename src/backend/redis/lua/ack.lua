-- Ends attempts: complete, retry, dead, cancelled or requeue (graceful shutdown), each checked
-- against its lease token; a stale token changes nothing.
-- ARGV 4 count n of full acks, 5 retention completed, 6 retention dead, 7 retention cancelled;
-- then per full ack 6 fields: kind, id, token, data (result or error), delay ms, attempt record
-- JSON — for `complete`, its finish time (ms) instead: the completing attempt is not stored, the
-- record holds all it says (codec.ts puts it back on read); for `hand-back`, '' (no attempt);
-- then the completions, short: the number of groups, then per group of one lease token: token,
-- m, r (1: with results), and m times id, finish time and, with r = 1, the result.
-- kind: complete | retry | retry-free (the attempt is given back) | dead | cancelled | requeue |
-- hand-back (no handler in that worker: retrying again, as if never claimed).
-- Returns per ack, full ones first then the short ones in order, 1 (applied) or 0 (stale); on a
-- Redis Cluster one applied ack is 2 when node ends were handed off (lib/node-ends.lua).
--
-- Every read and write is batched: one HMGET per hash for the whole batch, one HSET/ZADD per
-- structure written, one PUBLISH of all finished events.
local out = ack_batch(3)
-- Workflow nodes' fan-in, in this same call (on a Cluster, handed off): exactly once, as the
-- lease was (lib/workflow.lua settle_acked).
if #ENDED_NODES > 0 then settle_acked(out) end
trim_kept(TRIM_LIMIT)
publish_finished()
publish_lifecycle()
return out
