/**
 * One live stream per tab: the task center's Server-Sent Events (read with fetch, so the token
 * travels in a header, never in the URL). An event marks the shown data stale; at most once a
 * second the queries on screen refetch. While the tab is hidden the stream is closed; when it
 * shows again, it reopens and everything refetches once.
 */
import type { QueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { authHeaders, reportUnauthorized } from './api';

export type LiveState = 'connecting' | 'live' | 'paused' | 'offline';

const REFRESH_MS = 1000;
/**
 * What events make stale: the data on screen — not the API index (who is signed in), nor a query
 * marked `meta: { live: false }` (a search, which may take a second of store time to redo).
 */
const isData = (query: { queryKey: readonly unknown[]; meta?: Record<string, unknown> }) => query.queryKey[0] !== '/api/v1' && query.meta?.live !== false;
/** A stream that stayed open this long (or carried an event) resets the reconnect backoff. */
const HEALTHY_MS = 10_000;

export function useLiveUpdates(queryClient: QueryClient, enabled: boolean): LiveState {
  const [state, setState] = useState<LiveState>('connecting');
  useEffect(() => {
    if (!enabled) return;
    let stream: AbortController | null = null;
    let dirty = false;
    let stopped = false;
    let retry: ReturnType<typeof setTimeout> | null = null;
    let failures = 0;

    const refresh = setInterval(() => {
      if (!dirty || document.visibilityState === 'hidden') return;
      dirty = false;
      void queryClient.invalidateQueries({ refetchType: 'active', predicate: isData });
    }, REFRESH_MS);

    const connect = async () => {
      if (stopped || stream || document.visibilityState === 'hidden') return;
      const controller = new AbortController();
      stream = controller;
      setState('connecting');
      try {
        const res = await fetch('/api/v1/events', { headers: { accept: 'text/event-stream', ...authHeaders() }, signal: controller.signal });
        if (res.status === 401) {
          reportUnauthorized();
          return;
        }
        if (!res.ok || !res.body) throw new Error(`events: ${res.status}`);
        setState('live');
        // Whatever changed while no stream was open was not heard: refetch once.
        dirty = true;
        const opened = Date.now();
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          const blocks = buffer.split('\n\n');
          buffer = blocks.pop() ?? '';
          // Any event (comments are keep-alives) makes what is shown stale.
          if (blocks.some((block) => block.split('\n').some((line) => line.startsWith('data:')))) {
            dirty = true;
            failures = 0;
          }
          if (Date.now() - opened > HEALTHY_MS) failures = 0;
        }
        throw new Error('events: the stream ended');
      } catch {
        if (controller.signal.aborted) return;
        setState('offline');
        failures += 1;
        retry = setTimeout(() => {
          retry = null;
          void connect();
        }, Math.min(10_000, 500 * 2 ** failures));
      } finally {
        if (stream === controller) stream = null;
      }
    };

    const onVisibility = () => {
      if (document.visibilityState === 'hidden') {
        stream?.abort();
        stream = null;
        setState('paused');
      } else {
        void queryClient.invalidateQueries({ refetchType: 'active', predicate: isData });
        void connect();
      }
    };
    document.addEventListener('visibilitychange', onVisibility);
    void connect();
    return () => {
      stopped = true;
      clearInterval(refresh);
      if (retry) clearTimeout(retry);
      stream?.abort();
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, [queryClient, enabled]);
  return state;
}
