-- A worker's exchange with one queue (processor.ts): its acks, then a claim, in one call.
-- ARGV from 4: ack.lua's arguments (full acks, then short completions), then claim.lua's
-- (count, worker id, lease ms, forward limit).
-- Returns { n, ack.lua's n results, then claim.lua's reply }.
-- The acks' events are published before the claim runs: a script that fails halfway keeps what
-- it wrote, so were the claim to fail, the finished tasks would still be announced.
local acked, after = ack_batch(3)
-- Workflow nodes' fan-in, in this same call (on a Cluster, handed off): exactly once, as the
-- lease was (lib/workflow.lua settle_acked).
if #ENDED_NODES > 0 then settle_acked(acked) end
trim_kept(TRIM_LIMIT)
publish_finished()
publish_lifecycle()
local claimed = claim_batch(after)
local out = { #acked }
for i = 1, #acked do out[#out + 1] = acked[i] end
for i = 1, #claimed do out[#out + 1] = claimed[i] end
publish_lifecycle()
return out
