-- An operator's action on one task: run | archive | delete | cancel.
-- ARGV 4 action, 5 id, 6 retention dead, 7 retention cancelled.
-- Returns 'ok', 'requested' (cancel of a running task), 'missing' or 'invalid:<state>'.
local m = get_meta(ARGV[5])
if not m then return 'missing' end
local reply = OPERATIONS[ARGV[4]](ARGV[5], m, { dead = tonumber(ARGV[6]), cancelled = tonumber(ARGV[7]) })
trim_kept(TRIM_LIMIT)
return reply
