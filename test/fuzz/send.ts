/** Sends one request in-process with a deadline; an event stream is cut short on purpose. */
import type { FastifyInstance } from 'fastify';
import type { Wire } from './request.js';

/** A request that has not answered by then is a finding. */
export const ANSWER_WITHIN_MS = 10_000;
/** How long an SSE stream is read before the fuzzer hangs up. */
const STREAM_MS = 150;

export interface Answer {
  status: number;
  contentType: string;
  body: string;
  ms: number;
  /** No answer within ANSWER_WITHIN_MS. */
  timedOut: boolean;
  /** inject itself refused the request (nothing reached the server). */
  refused: string | null;
}

export function isStream(wire: Wire): boolean {
  return (wire.method === 'GET' || wire.headers.accept === 'text/event-stream') && wire.url.split('?')[0] === '/api/v1/events';
}

export async function send(app: FastifyInstance, wire: Wire): Promise<Answer> {
  const abort = new AbortController();
  const stream = isStream(wire);
  const timer = setTimeout(() => abort.abort(), stream ? STREAM_MS : ANSWER_WITHIN_MS);
  const started = performance.now();
  try {
    const res = await app.inject({ method: wire.method as 'GET', url: wire.url, headers: wire.headers, payload: wire.payload, signal: abort.signal });
    return { status: res.statusCode, contentType: String(res.headers['content-type'] ?? ''), body: res.body, ms: performance.now() - started, timedOut: false, refused: null };
  } catch (error) {
    const ms = performance.now() - started;
    const aborted = abort.signal.aborted;
    if (aborted && stream) return { status: 200, contentType: 'text/event-stream', body: '', ms, timedOut: false, refused: null };
    return { status: 0, contentType: '', body: '', ms, timedOut: aborted, refused: aborted ? null : String((error as Error).message ?? error) };
  } finally {
    clearTimeout(timer);
  }
}
