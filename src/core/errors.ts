/**
 * Errors. Two kinds:
 * - flow errors a handler throws to steer retries: PermanentError (alias SkipRetry), RetryableError;
 * - system errors with a stable code, all defined here: TasklineError.
 */

export const ERROR_CODES = {
  TL_INVALID_ARGUMENT: 'a value given to Taskline is not accepted',
  TL_INVALID_OPTION: 'an unknown option or an option with a wrong value',
  TL_PAYLOAD_TOO_LARGE: 'the payload is larger than the configured maximum',
  TL_PAYLOAD_NOT_JSON: 'the payload cannot be serialised as JSON',
  TL_VALIDATION_FAILED: 'the payload does not match the task schema',
  TL_TASK_CONFLICT: 'a task with this id, or this unique key, already exists',
  TL_QUEUE_FULL: 'the queue holds as many waiting tasks as its maxLength allows',
  TL_TASK_NOT_FOUND: 'no task with this id',
  TL_INVALID_STATE: 'the operation is not possible in the task’s current state',
  TL_STORE_UNAVAILABLE: 'the store cannot be reached',
  TL_STORE_ERROR: 'the store answered with an error',
  TL_TIMEOUT: 'an operation did not finish in time',
  TL_TASK_FAILED: 'the task died or was cancelled',
  TL_INVALID_CONFIG: 'a configuration setting is not accepted',
  TL_CLOSED: 'the backend or worker was closed',
  TL_INVALID_CRON: 'a cron expression is not accepted, or never fires',
  TL_INVALID_TIMEZONE: 'an unknown time zone',
  TL_INVALID_SCHEDULE: 'a schedule definition is not accepted',
  TL_SCHEDULE_NOT_FOUND: 'no schedule with this id',
  TL_SCHEDULE_CONFLICT: 'a schedule with this id already exists',
  TL_LOCK_NOT_HELD: 'the lock is no longer held by this owner',
  TL_INVALID_REQUEST: 'an HTTP request whose body, query or path does not match the API schema',
  TL_UNAUTHORIZED: 'the HTTP request has no valid bearer token',
  TL_FORBIDDEN: 'the bearer token does not allow this operation',
  TL_NOT_FOUND: 'no such HTTP route',
  TL_METHOD_NOT_ALLOWED: 'the HTTP route does not take this method',
  TL_REQUEST_TIMEOUT: 'the HTTP request did not arrive in time',
  TL_URI_TOO_LONG: 'the HTTP request URL, or a segment of its path, is too long',
  TL_HEADERS_TOO_LARGE: 'the HTTP request headers are larger than the server accepts',
  TL_NOT_SUPPORTED: 'the store does not support this operation',
  TL_INVALID_WORKFLOW: 'a workflow is not accepted: a node, its dependencies or its payload',
  TL_WORKFLOW_NOT_FOUND: 'no workflow with this id',
  TL_WORKFLOW_CONFLICT: 'a workflow with this id already exists',
  TL_WORKFLOW_FAILED: 'the workflow failed or was cancelled',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export class TasklineError extends Error {
  override readonly name = 'TasklineError';
  readonly code: ErrorCode;
  readonly details: unknown;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; details?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details;
  }
}

export function isTasklineError(error: unknown, code?: ErrorCode): error is TasklineError {
  return error instanceof TasklineError && (code === undefined || error.code === code);
}

/** Thrown by a handler: the task goes to the dead letter now, without further retries. */
export class PermanentError extends Error {
  override name = 'PermanentError';
}

/** Alias of PermanentError (asynq's name). */
export const SkipRetry = PermanentError;

/** Thrown by a handler: retry after exactly `retryIn` ms (e.g. an HTTP 429's Retry-After). */
export class RetryableError extends Error {
  override name = 'RetryableError';
  readonly retryIn: number | undefined;

  constructor(message: string, options: { retryIn?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    if (options.retryIn !== undefined && !(Number.isFinite(options.retryIn) && options.retryIn >= 0)) {
      throw new TasklineError('TL_INVALID_ARGUMENT', `RetryableError: retryIn must be a number of ms >= 0, got ${String(options.retryIn)}`);
    }
    this.retryIn = options.retryIn;
  }
}

/** The error `waitFor` rejects with when the task dies or is cancelled. */
export class TaskFailedError extends TasklineError {
  readonly taskId: string;
  readonly state: 'dead' | 'cancelled';

  constructor(taskId: string, state: 'dead' | 'cancelled', lastError: string | null) {
    super('TL_TASK_FAILED', `task ${taskId} is ${state}${lastError ? `: ${lastError}` : ''}`);
    this.taskId = taskId;
    this.state = state;
  }
}
