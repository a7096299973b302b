/**
 * `GET /api/v1/events`: Server-Sent Events of task and schedule lifecycle events, optionally only
 * for one queue and/or task type (`type=email:*` matches a prefix). Each client has a bounded
 * send buffer: a client that cannot keep up (its socket buffer holds more than `maxBufferBytes`)
 * is dropped, never buffered without bound. A comment line every `heartbeatMs` keeps proxies
 * from closing an idle stream.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiEvent, EventHub } from './events.js';

export interface SseOptions {
  /** Bytes a client may have pending before it is dropped. Default 1 MiB. */
  maxBufferBytes?: number;
  /** ms between keep-alive comments. Default 15 000. */
  heartbeatMs?: number;
}

export interface SseFilter {
  queue?: string;
  type?: string;
  /** Event names or prefixes (comma-separated in the query), e.g. `task.completed,schedule.`. */
  kinds?: string[];
}

export function matches(event: ApiEvent, filter: SseFilter): boolean {
  if (filter.queue !== undefined && event.queue !== filter.queue) return false;
  if (filter.type !== undefined) {
    if (event.type === null) return false;
    if (filter.type.endsWith('*')) {
      if (!event.type.startsWith(filter.type.slice(0, -1))) return false;
    } else if (event.type !== filter.type) return false;
  }
  if (filter.kinds !== undefined && !filter.kinds.some((k) => event.name === k || (k.endsWith('.') && event.name.startsWith(k)))) return false;
  return true;
}

/** Streams events to one client until it goes away, falls behind or the hub stops. */
export function streamEvents(hub: EventHub, streams: SseStreams, request: FastifyRequest, reply: FastifyReply, filter: SseFilter, options: SseOptions = {}): FastifyReply {
  const maxBuffer = options.maxBufferBytes ?? 1024 * 1024;
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const res = reply.raw;
  reply.hijack();
  const headers = {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    'x-accel-buffering': 'no',
  };
  // HEAD: the headers a GET would get, and no stream.
  if (request.method === 'HEAD') {
    res.writeHead(200, headers);
    res.end();
    return reply;
  }
  res.writeHead(200, { ...headers, connection: 'keep-alive' });
  res.write(': taskline events\nretry: 2000\n\n');
  let sequence = 0;
  let closed = false;
  const close = (reason: string | null) => {
    if (closed) return;
    closed = true;
    unsubscribe();
    clearInterval(heartbeat);
    request.raw.off('close', onClose);
    if (reason !== null) {
      request.log.warn({ reason }, 'SSE client dropped');
      res.destroy();
    } else res.end();
  };
  const send = (chunk: string) => {
    if (closed) return;
    if (res.writableLength + chunk.length > maxBuffer) {
      close(`slow consumer: more than ${maxBuffer} bytes pending`);
      return;
    }
    res.write(chunk);
  };
  const unsubscribe = hub.on((event) => {
    if (!matches(event, filter)) return;
    sequence += 1;
    send(`id: ${sequence}\nevent: ${event.name}\ndata: ${JSON.stringify(event.data)}\n\n`);
  });
  const heartbeat = setInterval(() => send(': keep-alive\n\n'), heartbeatMs);
  const onClose = () => close(null);
  request.raw.on('close', onClose);
  res.on('error', () => close(null));
  const end = () => close(null);
  streams.add(end);
  res.once('close', () => {
    streams.delete(end);
    close(null);
  });
  return reply;
}

/** A server's open streams, ended when it closes (so closing does not wait for clients). */
export class SseStreams {
  private readonly open = new Set<() => void>();

  add(end: () => void): void {
    this.open.add(end);
  }

  delete(end: () => void): void {
    this.open.delete(end);
  }

  get size(): number {
    return this.open.size;
  }

  endAll(): void {
    for (const end of [...this.open]) end();
    this.open.clear();
  }
}
