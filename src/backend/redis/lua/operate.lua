-- An operator's action on one task: run | archive | delete | cancel.
-- ARGV 4 action, 5 id, 6 retention dead, 7 retention cancelled.
-- Returns 'ok', 'requested' (cancel of a running task), 'missing', 'invalid:<state>' or
-- 'workflow' (run of a workflow node's dead or cancelled task: its workflow's retry runs it again).
local m = get_meta(ARGV[5])
if not m then return 'missing' end
local reply = OPERATIONS[ARGV[4]](ARGV[5], m, { dead = tonumber(ARGV[6]), cancelled = tonumber(ARGV[7]) })
-- A workflow node's task that ended here moves its workflow on, in this same call.
settle_nodes()
trim_kept(TRIM_LIMIT)
publish_lifecycle()
return reply
