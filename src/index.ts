/** Taskline's public API. */
export { connect, resolveBackendUrl, DEFAULT_BACKEND_URL, type ConnectOptions } from './backend/connect.js';
export type { Backend, QueueInfo, WorkerInfo, TaskPage, DailyStat, MinuteStat, BackendEvent, BulkState } from './backend/contract.js';
export { Client, type ClientOptions, type EnqueueItem, type WaitOptions } from './client/client.js';
export { defineTask, type TaskDefinition, type DefineTaskOptions, type PayloadSchema } from './client/define-task.js';
export { Worker, type WorkerOptions, type WorkerEvents } from './worker/worker.js';
export type { TaskContext, TaskMeta, AbortReason } from './worker/context.js';
export type { Handler } from './worker/handlers.js';
export type { Middleware } from './worker/attempt.js';
export { PermanentError, SkipRetry, RetryableError, TasklineError, TaskFailedError, isTasklineError, ERROR_CODES, type ErrorCode } from './core/errors.js';
export type { EnqueueOptions } from './core/options.js';
export type { TaskInfo, TaskRecord, TaskState, AttemptRecord, BackoffSpec, TaskLogLine, TaskLinks } from './core/task.js';
export { TASK_STATES } from './core/task.js';
export type { BackoffFunction, BackoffOption } from './core/backoff.js';
export { VERSION } from './version.js';
