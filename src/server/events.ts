/**
 * The task center's one subscription to the store: lifecycle events (enqueued, started, retrying,
 * finished, cancel requests) fan out from here to SSE clients, `?wait=` long-polls, metrics and
 * alerts. Local events (schedule changes and fires of this instance's scheduler) join the same
 * stream.
 */
import type { Backend, BackendEvent, Unsubscribe } from '../backend/contract.js';
import { iso } from './present.js';

/** An event as the API shows it (SSE `event:` is `name`). */
export interface ApiEvent {
  /** `task.enqueued`, `task.started`, `task.retrying`, `task.completed`, `task.dead`, `task.cancelled`, `task.cancel-requested`, `workflow.<state>`, `schedule.<what>`. */
  name: string;
  queue: string | null;
  type: string | null;
  data: Record<string, unknown>;
}

export type EventListener = (event: ApiEvent) => void;

export function toApiEvent(event: BackendEvent, at: number): ApiEvent {
  switch (event.kind) {
    case 'enqueued':
      return { name: 'task.enqueued', queue: event.queue, type: event.type, data: { id: event.id, queue: event.queue, type: event.type, state: event.state, at } };
    case 'started':
      return { name: 'task.started', queue: event.queue, type: event.type, data: { id: event.id, queue: event.queue, type: event.type, attempt: event.attempt, at } };
    case 'retrying':
      return {
        name: 'task.retrying',
        queue: event.queue,
        type: event.type,
        data: { id: event.id, queue: event.queue, type: event.type, attempt: event.attempt, next_run_at: iso(event.nextRunAt), at },
      };
    case 'finished':
      return { name: `task.${event.state}`, queue: event.queue, type: event.type ?? null, data: { id: event.id, queue: event.queue, type: event.type ?? null, state: event.state, at } };
    case 'cancel-requested':
      return { name: 'task.cancel-requested', queue: event.queue, type: null, data: { id: event.id, queue: event.queue, at } };
    case 'workflow':
      return { name: `workflow.${event.state}`, queue: null, type: null, data: { id: event.id, state: event.state, at } };
  }
}

export class EventHub {
  private readonly listeners = new Set<EventListener>();
  private readonly finishWaiters = new Map<string, Set<(state?: 'completed' | 'dead' | 'cancelled') => void>>();
  private unsubscribe: Unsubscribe | null = null;

  constructor(private readonly backend: Backend) {}

  async start(): Promise<void> {
    this.unsubscribe ??= await this.backend.subscribe((event) => this.onBackendEvent(event), { lifecycle: true });
  }

  async stop(): Promise<void> {
    const unsubscribe = this.unsubscribe;
    this.unsubscribe = null;
    this.listeners.clear();
    for (const set of this.finishWaiters.values()) for (const wake of set) wake();
    this.finishWaiters.clear();
    if (unsubscribe) await unsubscribe();
  }

  on(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  /** Publishes a local event (schedule operations, this instance's fires). */
  publish(event: ApiEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // one listener's failure does not stop the others
      }
    }
  }

  /** Calls `wake` when the task finishes (or the hub stops); returns a function that forgets it. */
  onFinished(id: string, wake: (state?: 'completed' | 'dead' | 'cancelled') => void): () => void {
    let set = this.finishWaiters.get(id);
    if (!set) this.finishWaiters.set(id, (set = new Set()));
    set.add(wake);
    return () => {
      set.delete(wake);
      if (set.size === 0 && this.finishWaiters.get(id) === set) this.finishWaiters.delete(id);
    };
  }

  private onBackendEvent(event: BackendEvent): void {
    if (event.kind === 'finished') {
      const waiters = this.finishWaiters.get(event.id);
      if (waiters) for (const wake of [...waiters]) wake(event.state);
    }
    this.publish(toApiEvent(event, Date.now()));
  }
}
