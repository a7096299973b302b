/**
 * W3C trace context from enqueue to handler. Taskline uses @opentelemetry/api only;
 * an application brings the SDK. Here a minimal context manager (AsyncLocalStorage) and W3C
 * propagator stand in for that SDK; the store is real.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  context, propagation, ROOT_CONTEXT, trace, TraceFlags,
  type Context, type ContextManager, type TextMapGetter, type TextMapPropagator, type TextMapSetter,
} from '@opentelemetry/api';
import { Worker } from '../../src/index.js';
import { STORES } from '../helpers/stores.js';
import { useClientStore } from '../helpers/client-store.js';

class AsyncLocalContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.storage.run(ctx, () => fn.apply(thisArg, args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.storage.disable();
    return this;
  }
}

class W3CPropagator implements TextMapPropagator {
  inject(ctx: Context, carrier: unknown, setter: TextMapSetter): void {
    const span = trace.getSpanContext(ctx);
    if (span) setter.set(carrier, 'traceparent', `00-${span.traceId}-${span.spanId}-0${span.traceFlags & 1}`);
  }
  extract(ctx: Context, carrier: unknown, getter: TextMapGetter): Context {
    const header = getter.get(carrier, 'traceparent');
    const match = typeof header === 'string' ? /^00-([0-9a-f]{32})-([0-9a-f]{16})-0([01])$/.exec(header) : null;
    if (!match) return ctx;
    return trace.setSpanContext(ctx, { traceId: match[1], spanId: match[2], traceFlags: Number(match[3]), isRemote: true });
  }
  fields(): string[] {
    return ['traceparent'];
  }
}

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';

describe.each(STORES)('trace context on %s', (_name, openStore) => {
  const t = useClientStore(openStore);

  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalContextManager());
    propagation.setGlobalPropagator(new W3CPropagator());
  });

  afterAll(() => {
    context.disable();
    propagation.disable();
  });

  it('the producer\'s span travels in the task headers and is the active context in the handler', async () => {
    const producer = trace.setSpanContext(ROOT_CONTEXT, { traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: TraceFlags.SAMPLED });
    const info = await context.with(producer, () => t.client.enqueue('traced', { n: 1 }));
    const stored = await t.client.getTask(info.id);
    expect(stored!.headers.traceparent).toBe(`00-${TRACE_ID}-${SPAN_ID}-01`);

    let seen: { traceId: string; spanId: string; remote: boolean | undefined } | null = null;
    t.worker = new Worker(t.store.backend, { idleWait: 500 });
    t.worker.handle('traced', async () => {
      const span = trace.getSpanContext(context.active());
      seen = span ? { traceId: span.traceId, spanId: span.spanId, remote: span.isRemote } : null;
    });
    await t.worker.start();
    await t.client.waitFor(info.id, { timeout: 5000 });
    expect(seen).toEqual({ traceId: TRACE_ID, spanId: SPAN_ID, remote: true });
  });

  it('without an active span nothing is added; headers given by the caller win', async () => {
    const plain = await t.client.enqueue('plain', {});
    expect((await t.client.getTask(plain.id))!.headers).toEqual({});
    const producer = trace.setSpanContext(ROOT_CONTEXT, { traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: TraceFlags.SAMPLED });
    const own = await context.with(producer, () => t.client.enqueue('own', {}, { headers: { traceparent: 'mine' } }));
    expect((await t.client.getTask(own.id))!.headers.traceparent).toBe('mine');
  });
});
