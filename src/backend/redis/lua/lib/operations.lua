-- An operator's transitions on one task: run, archive, delete, cancel (operate.lua, operate-all.lua);
-- and the cancel request of a running task, which a workflow's cancel makes too.

-- Asks a running task to cancel: its worker, told on the cancel channel (workers listen to that
-- one only, not to every finished task), aborts the handler's signal. The keys and queue are
-- the task's (an operator's cancel, or a workflow's, which may reach another queue).
local function request_cancel(cancel_key, meta_key, queue, id, m)
  redis.call('SADD', cancel_key, id)
  m.x = 1
  redis.call('HSET', meta_key, id, cjson.encode(m))
  redis.call('PUBLISH', CHANNEL .. ':cancel', 'c\t' .. queue .. '\t' .. id)
end

-- Operator transitions, shared by the single-task and the bulk scripts. Which states each takes
-- is ACCEPTED and REQUESTED, generated from core/transitions.ts (lua-source.ts).
-- Each returns 'ok', 'requested', 'invalid:<state>' or (run of a node's dead or cancelled task)
-- 'workflow'. A task they finish that runs a workflow node is noted for the script to settle
-- (settle_nodes) once its writes are done.
local OPERATIONS = {}

function OPERATIONS.run(id, m, retention)
  local s = m.s
  if not ACCEPTED.run[s] then return 'invalid:' .. s end
  -- A node's finished task (dead, cancelled) runs again only as its workflow's retry
  -- (retryWorkflow), never on its own; one waiting for its next attempt (scheduled, retrying)
  -- can be run now like any task: that is still the node's current run.
  if (s == 'dead' or s == 'cancelled') and runs_workflow_node(m) then return 'workflow' end
  unlink(id, s, m.g)
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
  if not ACCEPTED.archive[s] then return 'invalid:' .. s end
  unlink(id, s, m.g)
  finish(id, m, 'dead', retention.dead)
  put_meta(id, m)
  note_node_end(id, m.l, 'dead', nil, m.le)
  return 'ok'
end

function OPERATIONS.delete(id, m, retention)
  -- A record with no state or one of no version (damaged by hand) can still be deleted.
  if TASK_STATES[m.s] and not ACCEPTED.delete[m.s] then return 'invalid:' .. m.s end
  unlink(id, m.s, m.g)
  delete_task(id)
  -- A node's task deleted before it finished: the node ends cancelled (its workflow moves on).
  if not FINISHED[m.s] then note_node_end(id, m.l, 'cancelled', nil, nil) end
  return 'ok'
end

function OPERATIONS.cancel(id, m, retention)
  local s = m.s
  if not ACCEPTED.cancel[s] then return 'invalid:' .. s end
  if REQUESTED.cancel[s] then
    request_cancel(K_CANCEL, K_META, QUEUE, id, m)
    return 'requested'
  end
  unlink(id, s, m.g)
  m.le = m.le or 'cancelled by operator'
  finish(id, m, 'cancelled', retention.cancelled)
  put_meta(id, m)
  note_node_end(id, m.l, 'cancelled', nil, m.le)
  return 'ok'
end
