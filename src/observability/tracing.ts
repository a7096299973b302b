/**
 * W3C trace context from enqueue to handler, through `@opentelemetry/api` only: no
 * SDK is forced on users. With an SDK registered by the application, the producer's active span
 * becomes the parent of the handler's spans; without one, nothing happens.
 */
import { context, propagation, ROOT_CONTEXT, trace } from '@opentelemetry/api';

/** Adds `traceparent` (and `tracestate`) to a task's headers when a span is active; headers given by the caller win. */
export function injectTraceContext(headers: Record<string, string> | null): Record<string, string> | null {
  const active = context.active();
  if (trace.getSpan(active) === undefined) return headers;
  const carrier: Record<string, string> = {};
  propagation.inject(active, carrier);
  if (Object.keys(carrier).length === 0) return headers;
  return { ...carrier, ...(headers ?? {}) };
}

/**
 * Runs an attempt (middleware and handler) in the context carried by the task's headers. The
 * worker calls it only for tasks that carry a `traceparent`: the others pay nothing for tracing.
 */
export function inTraceContext<T>(headers: Record<string, string>, run: () => T): T {
  return context.with(propagation.extract(ROOT_CONTEXT, headers), run);
}
