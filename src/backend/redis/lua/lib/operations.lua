-- An operator's transitions on one task: run, archive, delete, cancel (operate.lua, operate-all.lua).

-- Operator transitions, shared by the single-task and the bulk scripts. Which states each takes
-- is ACCEPTED and REQUESTED, generated from core/transitions.ts (lua-source.ts).
-- Each returns 'ok', 'requested' or 'invalid:<state>'.
local OPERATIONS = {}

function OPERATIONS.run(id, m, retention)
  local s = m.s
  if not ACCEPTED.run[s] then return 'invalid:' .. s end
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
  if not ACCEPTED.archive[s] then return 'invalid:' .. s end
  unlink(id, s)
  finish(id, m, 'dead', retention.dead)
  put_meta(id, m)
  return 'ok'
end

function OPERATIONS.delete(id, m, retention)
  -- A record with no state or one of no version (damaged by hand) can still be deleted.
  if TASK_STATES[m.s] and not ACCEPTED.delete[m.s] then return 'invalid:' .. m.s end
  unlink(id, m.s)
  delete_task(id)
  return 'ok'
end

function OPERATIONS.cancel(id, m, retention)
  local s = m.s
  if not ACCEPTED.cancel[s] then return 'invalid:' .. s end
  if REQUESTED.cancel[s] then
    redis.call('SADD', K_CANCEL, id)
    m.x = 1
    put_meta(id, m)
    -- On a channel of its own: workers listen to this one only, not to every finished task.
    redis.call('PUBLISH', CHANNEL .. ':cancel', 'c\t' .. QUEUE .. '\t' .. id)
    return 'requested'
  end
  unlink(id, s)
  m.le = m.le or 'cancelled by operator'
  finish(id, m, 'cancelled', retention.cancelled)
  put_meta(id, m)
  return 'ok'
end
