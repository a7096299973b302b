/**
 * How the HTTP API fails (DESIGN §9): every error is `{"error":{"code","message"}}` with a status
 * that fits its stable code. This file is the one place that maps codes to statuses; bad input is
 * always a 4xx, never a 500.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isTasklineError, TasklineError, type ErrorCode } from '../core/errors.js';

export const HTTP_STATUS: Partial<Record<ErrorCode, number>> = {
  TL_INVALID_ARGUMENT: 400,
  TL_INVALID_OPTION: 400,
  TL_INVALID_REQUEST: 400,
  TL_PAYLOAD_NOT_JSON: 400,
  TL_UNAUTHORIZED: 401,
  TL_FORBIDDEN: 403,
  TL_NOT_FOUND: 404,
  TL_TASK_NOT_FOUND: 404,
  TL_SCHEDULE_NOT_FOUND: 404,
  TL_TASK_CONFLICT: 409,
  TL_SCHEDULE_CONFLICT: 409,
  TL_INVALID_STATE: 409,
  TL_TASK_FAILED: 409,
  TL_LOCK_NOT_HELD: 409,
  TL_PAYLOAD_TOO_LARGE: 413,
  TL_VALIDATION_FAILED: 422,
  TL_INVALID_CRON: 422,
  TL_INVALID_TIMEZONE: 422,
  TL_INVALID_SCHEDULE: 422,
  TL_NOT_SUPPORTED: 501,
  TL_STORE_UNAVAILABLE: 503,
  TL_CLOSED: 503,
  TL_TIMEOUT: 504,
};

export interface ErrorBody {
  error: { code: string; message: string };
}

/** Fastify's own request errors (parsing, limits) as Taskline codes. */
function fromFastify(error: FastifyError): TasklineError | null {
  const status = error.statusCode ?? 0;
  if (status === 413 || error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return new TasklineError('TL_PAYLOAD_TOO_LARGE', 'the request body is larger than the limit of this server');
  }
  if (status === 415 || error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return new TasklineError('TL_INVALID_REQUEST', 'unsupported content type: send application/json');
  }
  if (error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return new TasklineError('TL_INVALID_REQUEST', 'the body is empty; send a JSON document');
  if (error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError) {
    return new TasklineError('TL_INVALID_REQUEST', `malformed JSON body: ${error.message}`);
  }
  if (status >= 400 && status < 500) return new TasklineError('TL_INVALID_REQUEST', error.message);
  return null;
}

/** The status and body for any error thrown while serving a request. */
export function describeHttpError(error: unknown): { status: number; body: ErrorBody; internal: boolean } {
  let known: TasklineError | null = null;
  if (isTasklineError(error)) known = error;
  else if (error instanceof Error) known = fromFastify(error as FastifyError);
  if (known) {
    return { status: HTTP_STATUS[known.code] ?? 500, body: { error: { code: known.code, message: known.message } }, internal: HTTP_STATUS[known.code] === undefined };
  }
  return { status: 500, body: { error: { code: 'TL_INTERNAL', message: 'internal server error' } }, internal: true };
}

export function errorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const { status, body, internal } = describeHttpError(error);
  if (internal) request.log.error({ err: error }, 'request failed');
  else if (status >= 500) request.log.warn({ code: body.error.code }, body.error.message);
  void reply.status(status).send(body);
}

export function notFoundHandler(request: FastifyRequest, reply: FastifyReply): void {
  void reply.status(404).send({ error: { code: 'TL_NOT_FOUND', message: `no route ${request.method} ${request.url.split('?')[0]}` } } satisfies ErrorBody);
}
