-- Cancels a running workflow (workflow-contract.ts cancelWorkflow): every node not final is
-- cancelled — pending ones at once, waiting tasks to cancelled, running ones asked to cancel —
-- and the workflow ends cancelled when its last node is final (now, when none is running).
-- KEYS from FIRST_EXTRA_KEY: the workflow's meta key.
-- ARGV 4 workflow id.
-- Returns 'ok', 'missing' or 'invalid:<state>' (finished).
local lib = workflow_lib()
local w = lib.load_workflow(ARGV[4])
if not w then return 'missing' end
if w.state ~= 'running' then return 'invalid:' .. w.state end
if not w.cancelling then
  w.cancelling = true
  lib.mark(w)
  lib.cancel_open_nodes(w, true)
  -- The tasks cancelled now settle their nodes now: a workflow with no running node ends here.
  settle_nodes()
  lib.finish_if_done(w)
  lib.flush_starts()
end
publish_lifecycle()
return 'ok'
