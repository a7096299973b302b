/**
 * W3C trace context from enqueue to handler (DESIGN §10), through `@opentelemetry/api` only: no
 * SDK is forced on users. With an SDK registered by the application, the producer's active span
 * becomes the parent of the handler's spans; without one, nothing happens.
 */
import { context, propagation, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import type { Middleware } from '../worker/attempt.js';

/** Adds `traceparent` (and `tracestate`) to a task's headers when a span is active; headers given by the caller win. */
export function injectTraceContext(headers: Record<string, string> | null): Record<string, string> | null {
  const active = context.active();
  if (trace.getSpan(active) === undefined) return headers;
  const carrier: Record<string, string> = {};
  propagation.inject(active, carrier);
  if (Object.keys(carrier).length === 0) return headers;
  return { ...carrier, ...(headers ?? {}) };
}

/** Worker middleware: runs the handler in the context carried by the task's headers. */
export const traceContextMiddleware: Middleware = async (ctx, next) => {
  const headers = ctx.task.headers;
  if (headers.traceparent === undefined) return next();
  return context.with(propagation.extract(ROOT_CONTEXT, headers), next);
};
