/**
 * Notifications (the events, cancel and lifecycle channels the scripts publish on), on a
 * subscriber connection of its own, opened at the first subscription. The events channel
 * carries finished lines and workflow messages.
 */
import { WORKFLOW_STATES, type BackendEvent, type LifecycleEvent, type SubscribeOptions, type Unsubscribe, type WorkflowState } from '../contract.js';
import { quit, type RedisClient, type RedisConnection } from './connection.js';

type Listener = (event: BackendEvent) => void;

export class RedisEvents {
  private subscriber: RedisClient | null = null;
  private readonly listeners = new Set<Listener>();
  private readonly lifecycleListeners = new Set<Listener>();
  private readonly cancelListeners = new Set<Listener>();
  private readonly joined = new Map<string, Promise<void>>();
  private subscribing: Promise<void> = Promise.resolve();

  constructor(private readonly c: RedisConnection) {}

  async subscribe(listener: Listener, options: SubscribeOptions = {}): Promise<Unsubscribe> {
    if (!this.subscriber) {
      const subscriber = this.c.open('subscriber');
      this.subscriber = subscriber;
      subscriber.on('message', (channel: string, message: string) => this.deliver(channel, message));
    }
    // Channels are joined on first demand: a worker (cancelsOnly) joins only the cancel channel,
    // so it does not receive a message for every finished task.
    const set = options.lifecycle === true ? this.lifecycleListeners : options.cancelsOnly === true ? this.cancelListeners : this.listeners;
    const { keys } = this.c;
    const channels = [keys.cancels];
    if (set !== this.cancelListeners) channels.push(keys.events);
    if (set === this.lifecycleListeners) channels.push(keys.lifecycle);
    await this.join(channels);
    set.add(listener);
    return async () => {
      set.delete(listener);
    };
  }

  private deliver(channel: string, message: string): void {
    if (channel === this.c.keys.lifecycle) {
      for (const event of parseLifecycle(message)) for (const l of this.lifecycleListeners) l(event);
      return;
    }
    // A workflow event is a message of its own, its id last (lua/lib/workflow.lua announce_workflow):
    // plain and lifecycle subscribers hear it, workers (cancelsOnly) do not.
    if (message.startsWith('w\t')) {
      const event = parseWorkflowEvent(message);
      if (event) for (const l of [...this.lifecycleListeners, ...this.listeners]) l(event);
      return;
    }
    // A message is one event, or several finished events, one per line (lua/ack.lua).
    for (const line of message.split('\n')) {
      const event = parseEvent(line);
      if (!event) continue;
      if (event.kind === 'cancel-requested') for (const l of this.cancelListeners) l(event);
      for (const l of this.lifecycleListeners) l(event);
      if (this.listeners.size === 0) continue;
      // Plain subscribers get the finished event without the type (their contract predates it).
      const plain: BackendEvent = event.kind === 'finished' ? { kind: 'finished', id: event.id, queue: event.queue, state: event.state } : event;
      for (const l of this.listeners) l(plain);
    }
  }

  /**
   * Joins the channels not joined yet. SUBSCRIBEs go one after another: a second one sent while
   * the connection is still connecting breaks its ready check.
   */
  private async join(channels: string[]): Promise<void> {
    const fresh = channels.filter((c) => !this.joined.has(c));
    if (fresh.length > 0) {
      const subscriber = this.subscriber!;
      const joined = this.subscribing.catch(() => undefined).then(() => this.c.call(() => subscriber.subscribe(...fresh))).then(() => undefined);
      this.subscribing = joined;
      for (const channel of fresh) this.joined.set(channel, joined);
      joined.catch(() => fresh.forEach((c) => this.joined.get(c) === joined && this.joined.delete(c)));
    }
    for (const channel of channels) await this.joined.get(channel);
  }

  async close(): Promise<void> {
    this.listeners.clear();
    this.lifecycleListeners.clear();
    this.cancelListeners.clear();
    if (this.subscriber) await quit(this.subscriber);
  }
}

function parseEvent(message: string): BackendEvent | null {
  const parts = message.split('\t');
  if (parts[0] === 'f' && (parts.length === 4 || parts.length === 5)) {
    const event: BackendEvent = { kind: 'finished', queue: parts[1], id: parts[2], state: parts[3] as 'completed' | 'dead' | 'cancelled' };
    if (parts.length === 5 && parts[4] !== '') event.type = parts[4];
    return event;
  }
  if (parts[0] === 'c' && parts.length === 3) return { kind: 'cancel-requested', queue: parts[1], id: parts[2] };
  return null;
}

/** 'w' TAB state TAB id: a workflow created or retried (running), or finished. */
function parseWorkflowEvent(message: string): BackendEvent | null {
  const tab = message.indexOf('\t', 2);
  if (tab < 0) return null;
  const state = message.slice(2, tab);
  if (!(WORKFLOW_STATES as readonly string[]).includes(state)) return null;
  return { kind: 'workflow', id: message.slice(tab + 1), state: state as WorkflowState };
}

/** A batch of lifecycle lines (lua/lib/events.lua note_lifecycle): kind, queue, id, type, detail. */
function parseLifecycle(message: string): LifecycleEvent[] {
  const events: LifecycleEvent[] = [];
  for (const line of message.split('\n')) {
    const [kind, queue, id, type, detail] = line.split('\t');
    if (detail === undefined) continue;
    if (kind === 'e') events.push({ kind: 'enqueued', queue, id, type, state: detail === 'scheduled' ? 'scheduled' : 'queued' });
    else if (kind === 's') events.push({ kind: 'started', queue, id, type, attempt: Number(detail) });
    else if (kind === 'r') {
      const [attempt, due] = detail.split(',');
      events.push({ kind: 'retrying', queue, id, type, attempt: Number(attempt), nextRunAt: Number(due) });
    }
  }
  return events;
}
