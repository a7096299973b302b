/** The API's view of stored things: snake_case fields and ISO-8601 times (DESIGN §9). */
import type { FireRecord, QueueInfo, SchedulerLease, SchedulerStatus, WorkerInfo } from '../backend/contract.js';
import type { TaskRecord } from '../core/task.js';
import type { Schedule } from '../scheduler/schedule.js';

export function iso(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}

export function taskStatus(task: TaskRecord) {
  return {
    id: task.id,
    type: task.type,
    queue: task.queue,
    state: task.state,
    payload: task.payload,
    result: task.result,
    error: task.lastError,
    attempt: task.attempt,
    max_retries: task.maxRetries,
    created_at: iso(task.createdAt)!,
    enqueued_at: iso(task.enqueuedAt),
    started_at: iso(task.startedAt),
    finished_at: iso(task.finishedAt),
    next_run_at: iso(task.nextRunAt),
    worker_id: task.workerId,
    progress: task.progress ?? null,
    attempts: task.attempts.map((a) => ({
      attempt: a.attempt,
      started_at: iso(a.startedAt),
      finished_at: iso(a.finishedAt),
      outcome: a.outcome,
      error: a.error,
      worker_id: a.workerId,
    })),
  };
}

export function queueView(queue: QueueInfo) {
  return {
    name: queue.name,
    paused: queue.paused,
    keep: queue.keep,
    counts: queue.counts,
    size: Object.values(queue.counts).reduce((a, b) => a + b, 0),
    processed: queue.processed,
    failed: queue.failed,
    latency_ms: queue.latency,
  };
}

export function scheduleView(s: Schedule) {
  return {
    id: s.id,
    cron: s.cron,
    timezone: s.timezone,
    task: s.task as Record<string, unknown>,
    overlap: s.overlap,
    catch_up: { policy: s.catchUp.policy, window_ms: s.catchUp.window },
    jitter_ms: s.jitter,
    start_at: iso(s.startAt),
    end_at: iso(s.endAt),
    paused: s.paused,
    pause_note: s.pauseNote,
    paused_until: iso(s.pausedUntil),
    source: s.source,
    generation: s.generation,
    created_at: iso(s.createdAt)!,
    updated_at: iso(s.updatedAt)!,
    next_run_at: iso(s.state.nextRunAt),
    last_fire_at: iso(s.state.lastFireAt),
    last_outcome: s.state.lastOutcome,
  };
}

export function fireView(f: FireRecord) {
  return {
    fire_id: f.fireId,
    nominal_at: iso(f.nominalAt)!,
    enqueued_at: iso(f.enqueuedAt),
    lag_ms: f.lagMs,
    outcome: f.outcome,
    task_id: f.taskId,
    task_state: f.taskState,
  };
}

export function workerView(w: WorkerInfo) {
  return {
    id: w.id,
    host: w.host,
    pid: w.pid,
    queues: w.queues,
    concurrency: w.concurrency,
    running: w.running,
    started_at: iso(w.startedAt)!,
    last_heartbeat_at: iso(w.lastHeartbeatAt),
    version: w.version,
  };
}

export function schedulerView(s: SchedulerStatus) {
  return {
    id: s.id,
    host: s.host,
    pid: s.pid,
    leader: s.leader,
    epoch: s.epoch,
    started_at: iso(s.startedAt)!,
    last_tick_at: iso(s.lastTickAt)!,
    last_seen_at: iso(s.lastSeenAt)!,
    fires_last_minute: s.firesLastMinute,
    version: s.version,
  };
}

export function leaseView(lease: SchedulerLease | null) {
  if (!lease) return null;
  return { id: lease.holder, epoch: lease.epoch, expires_at: iso(lease.expiresAt)!, fired_through: iso(lease.firedThrough) };
}
