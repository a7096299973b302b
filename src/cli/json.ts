/**
 * The JSON the CLI prints with --json. Fields are listed explicitly so the shape only changes on
 * purpose: camelCase names as in the library, instants as epoch milliseconds (null when unset).
 */
import type { FireRecord, QueueInfo, SchedulerStatus, WorkerInfo } from '../backend/contract.js';
import type { TaskInfo, TaskRecord } from '../core/task.js';
import type { Schedule } from '../core/schedule.js';

export function taskInfoJson(info: TaskInfo) {
  return { id: info.id, type: info.type, queue: info.queue, state: info.state };
}

/** A task in a list: everything but payload, result, attempts and logs. */
export function taskSummaryJson(task: TaskRecord) {
  return {
    id: task.id,
    type: task.type,
    queue: task.queue,
    state: task.state,
    attempt: task.attempt,
    maxRetries: task.maxRetries,
    lastError: task.lastError,
    createdAt: task.createdAt,
    startedAt: task.startedAt,
    finishedAt: task.finishedAt,
    nextRunAt: task.nextRunAt,
  };
}

export function taskJson(task: TaskRecord) {
  return {
    ...taskSummaryJson(task),
    payload: task.payload,
    result: task.result ?? null,
    progress: task.progress ?? null,
    timeout: task.timeout,
    deadline: task.deadline,
    enqueuedAt: task.enqueuedAt,
    workerId: task.workerId,
    cancelRequested: task.cancelRequested,
    headers: task.headers,
    links: task.links,
    group: typeof task.group === 'string' ? task.group : null,
    attempts: task.attempts.map((a) => ({
      attempt: a.attempt,
      startedAt: a.startedAt,
      finishedAt: a.finishedAt,
      outcome: a.outcome,
      error: a.error,
      workerId: a.workerId,
    })),
    logs: task.logs.map((line) => ({ at: line.at, message: line.message })),
  };
}

export function queueJson(queue: QueueInfo) {
  return {
    name: queue.name,
    paused: queue.paused,
    keep: queue.keep,
    limits: queue.limits,
    counts: {
      scheduled: queue.counts.scheduled ?? 0,
      queued: queue.counts.queued ?? 0,
      running: queue.counts.running ?? 0,
      retrying: queue.counts.retrying ?? 0,
      completed: queue.counts.completed ?? 0,
      dead: queue.counts.dead ?? 0,
      cancelled: queue.counts.cancelled ?? 0,
    },
    processed: queue.processed,
    failed: queue.failed,
    latencyMs: queue.latency,
    groups: { waiting: queue.groups?.waiting ?? 0, running: { ...queue.groups?.running } },
  };
}

export function workerJson(worker: WorkerInfo) {
  return {
    id: worker.id,
    host: worker.host,
    pid: worker.pid,
    queues: worker.queues,
    concurrency: worker.concurrency,
    running: worker.running,
    startedAt: worker.startedAt,
    lastHeartbeatAt: worker.lastHeartbeatAt ?? null,
    version: worker.version,
  };
}

export function schedulerJson(s: SchedulerStatus) {
  return {
    id: s.id,
    host: s.host,
    pid: s.pid,
    leader: s.leader,
    epoch: s.epoch,
    startedAt: s.startedAt,
    lastTickAt: s.lastTickAt,
    lastSeenAt: s.lastSeenAt,
    firesLastMinute: s.firesLastMinute,
    version: s.version,
  };
}

/** A schedule with its next fire (computed from the store clock when it was listed). */
export function scheduleJson(schedule: Schedule, nextRunAt: number | null) {
  return {
    id: schedule.id,
    cron: schedule.cron,
    timezone: schedule.timezone,
    task: {
      type: schedule.task.type,
      queue: schedule.task.queue,
      payload: schedule.task.payload ?? null,
      maxRetries: schedule.task.maxRetries ?? null,
      timeout: schedule.task.timeout ?? null,
    },
    overlap: schedule.overlap,
    catchUp: { policy: schedule.catchUp.policy, window: schedule.catchUp.window },
    jitter: schedule.jitter,
    startAt: schedule.startAt,
    endAt: schedule.endAt,
    paused: schedule.paused,
    pauseNote: schedule.pauseNote,
    pausedUntil: schedule.pausedUntil,
    source: schedule.source,
    generation: schedule.generation,
    createdAt: schedule.createdAt,
    updatedAt: schedule.updatedAt,
    nextRunAt,
    lastFireAt: schedule.state.lastFireAt,
    lastOutcome: schedule.state.lastOutcome,
    lastTaskId: schedule.state.lastTaskId,
  };
}

export function fireJson(fire: FireRecord) {
  return {
    fireId: fire.fireId,
    nominalAt: fire.nominalAt,
    enqueuedAt: fire.enqueuedAt,
    lagMs: fire.lagMs,
    outcome: fire.outcome,
    taskId: fire.taskId,
    taskState: fire.taskState,
  };
}
