/**
 * W3C trace context from enqueue to handler, through `@opentelemetry/api` only: no
 * SDK is forced on users. With an SDK registered by the application, the producer's active span
 * becomes the parent of the handler's spans; without one, nothing happens.
 */
import { context, propagation, ROOT_CONTEXT, trace } from '@opentelemetry/api';

/**
 * The active span's `traceparent` (and `tracestate`), or null when there is none: read once per
 * enqueue or workflow call and added to each of its tasks' headers (withTraceContext).
 */
export function activeTraceContext(): Record<string, string> | null {
  const active = context.active();
  if (trace.getSpan(active) === undefined) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(active, carrier);
  return Object.keys(carrier).length === 0 ? null : carrier;
}

/** A task's headers with the trace headers added; the task's own win. */
export function withTraceContext(carrier: Record<string, string>, headers: Record<string, string> | null): Record<string, string> {
  return { ...carrier, ...(headers ?? {}) };
}

/**
 * Runs an attempt (middleware and handler) in the context carried by the task's headers. The
 * worker calls it only for tasks that carry a `traceparent`: the others pay nothing for tracing.
 */
export function inTraceContext<T>(headers: Record<string, string>, run: () => T): T {
  return context.with(propagation.extract(ROOT_CONTEXT, headers), run);
}
