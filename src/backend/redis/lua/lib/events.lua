-- Waking blocked workers, and the events scripts publish: finished and lifecycle lines (a
-- workflow's own events: lib/workflow.lua).

local function wake_workers()
  redis.call('ZADD', K_MARKER, 0, '1')
end

-- Finished events: one PUBLISH per event, or, in a script that sets FINISHED_BATCH to a table,
-- one PUBLISH of all its lines (newline-separated) when it calls publish_finished().
local FINISHED_BATCH = nil

-- Who listens, looked up once per script call, the first time an event line is due. PUBLISH to a
-- channel nobody joined is dropped, so a line nobody hears is not built (with no task center and
-- no waiting client, ~8 % of Redis's work per task). A subscriber joining later misses the lines
-- exactly as it would miss a PUBLISH made before it joined. On a Redis Cluster, where PUBSUB
-- NUMSUB sees one node's subscribers only and a PUBLISH reaches every node's, lines are always
-- built and published (ON_CLUSTER, lib/queue.lua).
local HEARD = nil

local function heard()
  if not HEARD and ON_CLUSTER then HEARD = { finished = true, lifecycle = true } end
  if not HEARD then
    local counts = redis.call('PUBSUB', 'NUMSUB', CHANNEL, CHANNEL .. ':lifecycle')
    HEARD = { finished = counts[2] > 0, lifecycle = counts[4] > 0 }
  end
  return HEARD
end

-- `queue`: the task's queue when it is not the script's (a workflow's fan-in reaches others).
local function announce_finished(id, state, type, queue)
  if not heard().finished then return end
  local line = 'f\t' .. (queue or QUEUE) .. '\t' .. id .. '\t' .. state .. '\t' .. (type or '')
  if FINISHED_BATCH then
    FINISHED_BATCH[#FINISHED_BATCH + 1] = line
  else
    redis.call('PUBLISH', CHANNEL, line)
  end
end

local function publish_finished()
  if FINISHED_BATCH and #FINISHED_BATCH > 0 then redis.call('PUBLISH', CHANNEL, table.concat(FINISHED_BATCH, '\n')) end
end

-- Lifecycle events (enqueued, started, retrying) go to a channel of their own, '<channel>:lifecycle',
-- which only the task center listens to (workers hear finished and cancel-requested only). A
-- script gathers its lines and publishes them once, at its end: one PUBLISH per batch.
-- A line: kind (e | s | r) TAB queue TAB id TAB type TAB detail (state | attempt | attempt,due).
local LIFECYCLE = {}

-- `queue`: as for announce_finished.
local function note_lifecycle(kind, id, type, detail, queue)
  if not heard().lifecycle then return end
  LIFECYCLE[#LIFECYCLE + 1] = kind .. '\t' .. (queue or QUEUE) .. '\t' .. id .. '\t' .. (type or '') .. '\t' .. detail
end

local function publish_lifecycle()
  if #LIFECYCLE > 0 then redis.call('PUBLISH', CHANNEL .. ':lifecycle', table.concat(LIFECYCLE, '\n')) end
  LIFECYCLE = {}
end
