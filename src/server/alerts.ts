/**
 * Alert webhooks, sent by the task center — never by a worker, so a slow webhook
 * never holds up a task: a task going dead, a schedule missing or failing N fires in a row, a
 * queue's backlog over a threshold, a queue refusing enqueues (its maxLength). Each alert is POSTed to every webhook (generic JSON, or
 * Slack-compatible `{text}`), with a timeout and retries; at most `maxPending` deliveries wait,
 * further alerts are dropped (and logged) rather than piling up.
 */
import type { Backend } from '../backend/contract.js';
import type { FireEvent, Scheduler } from '../scheduler/scheduler.js';
import type { ApiEvent, EventHub } from './events.js';
import { iso } from './present.js';

export interface Webhook {
  url: string;
  /** `json`: the alert object; `slack`: `{ text }` for Slack-compatible incoming webhooks. Default json. */
  format: 'json' | 'slack';
}

export interface AlertOptions {
  webhooks: Webhook[];
  /** Alert when a task goes dead. Default true. */
  onDead?: boolean;
  /** Alert when a schedule misses or fails this many fires in a row. Default 3. */
  scheduleFailures?: number;
  /** Alert when a queue holds more queued tasks than this. Default: no backlog alert. */
  backlogThreshold?: number | null;
  /** ms between backlog checks. Default 60 000. */
  backlogCheckMs?: number;
  /** Alert when a queue's maxLength refuses enqueues (once, and again after a check without refusals). Default true. */
  onQueueFull?: boolean;
  /** ms between checks for refusals. Default 15 000. */
  queueFullCheckMs?: number;
  /** ms one delivery may take. Default 5 000. */
  timeoutMs?: number;
  /** Attempts per delivery. Default 3. */
  attempts?: number;
  /** Deliveries waiting at most. Default 100. */
  maxPending?: number;
}

export interface Alert {
  kind: 'task_dead' | 'schedule_missing' | 'schedule_failing' | 'queue_backlog' | 'queue_full';
  summary: string;
  details: Record<string, unknown>;
  at: string;
}

interface Log {
  warn(obj: object, message: string): void;
}

/**
 * Alert settings from the environment: TASKLINE_ALERT_WEBHOOKS (comma-separated URLs; `slack:` prefix for Slack), TASKLINE_ALERT_BACKLOG,
 * TASKLINE_ALERT_SCHEDULE_FAILURES, TASKLINE_ALERT_DEAD and TASKLINE_ALERT_QUEUE_FULL (0 to turn either off).
 */
export function alertOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): AlertOptions | null {
  const list = env.TASKLINE_ALERT_WEBHOOKS?.trim();
  if (!list) return null;
  const webhooks = list.split(',').map((entry): Webhook => {
    const value = entry.trim();
    if (value.startsWith('slack:')) return { url: value.slice('slack:'.length), format: 'slack' };
    return { url: value, format: 'json' };
  });
  for (const w of webhooks) {
    if (!/^https?:\/\//.test(w.url)) throw new Error(`TASKLINE_ALERT_WEBHOOKS: ${JSON.stringify(w.url)} is not an http(s) URL (prefix Slack webhooks with slack:)`);
  }
  const number = (name: string): number | undefined => {
    const raw = env[name]?.trim();
    if (!raw) return undefined;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 0) throw new Error(`${name}=${JSON.stringify(raw)}: a whole number >= 0`);
    return n;
  };
  return {
    webhooks,
    onDead: env.TASKLINE_ALERT_DEAD?.trim() !== '0',
    onQueueFull: env.TASKLINE_ALERT_QUEUE_FULL?.trim() !== '0',
    scheduleFailures: number('TASKLINE_ALERT_SCHEDULE_FAILURES'),
    backlogThreshold: number('TASKLINE_ALERT_BACKLOG') ?? null,
  };
}

const SCHEDULE_TASK = /^schedule:(.+):\d+:\d+(?::manual)?$/;

export class AlertManager {
  private readonly options: Required<Omit<AlertOptions, 'backlogThreshold'>> & { backlogThreshold: number | null };
  private readonly streaks = new Map<string, { missed: number; failed: number }>();
  private readonly overBacklog = new Set<string>();
  /** Per queue, its refused total at the last check (QueueInfo.refused), and whether an alert is out for its refusals. */
  private readonly refusals = new Map<string, { seen: number; alerted: boolean }>();
  private fullTimer: NodeJS.Timeout | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly stopping = new AbortController();
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private readonly onFire = (event: FireEvent) => this.fire(event);

  constructor(
    options: AlertOptions,
    private readonly deps: { backend: Backend; hub: EventHub; scheduler: Scheduler | null; log: Log; fetch?: typeof fetch },
  ) {
    this.options = {
      webhooks: options.webhooks,
      onDead: options.onDead ?? true,
      scheduleFailures: options.scheduleFailures ?? 3,
      backlogThreshold: options.backlogThreshold ?? null,
      backlogCheckMs: options.backlogCheckMs ?? 60_000,
      onQueueFull: options.onQueueFull ?? true,
      queueFullCheckMs: options.queueFullCheckMs ?? 15_000,
      timeoutMs: options.timeoutMs ?? 5_000,
      attempts: options.attempts ?? 3,
      maxPending: options.maxPending ?? 100,
    };
  }

  start(): void {
    this.unsubscribe = this.deps.hub.on((event) => this.taskEvent(event));
    this.deps.scheduler?.on('fire', this.onFire);
    if (this.options.backlogThreshold !== null) {
      this.timer = setInterval(() => void this.checkBacklog(), this.options.backlogCheckMs);
      this.timer.unref();
    }
    if (this.options.onQueueFull) {
      void this.checkRefusals();
      this.fullTimer = setInterval(() => void this.checkRefusals(), this.options.queueFullCheckMs);
      this.fullTimer.unref();
    }
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.deps.scheduler?.off('fire', this.onFire);
    if (this.timer) clearInterval(this.timer);
    if (this.fullTimer) clearInterval(this.fullTimer);
    this.timer = null;
    this.fullTimer = null;
    this.stopping.abort();
    await Promise.all([...this.inFlight]);
  }

  private streak(schedule: string) {
    let s = this.streaks.get(schedule);
    if (!s) this.streaks.set(schedule, (s = { missed: 0, failed: 0 }));
    return s;
  }

  private taskEvent(event: ApiEvent): void {
    const id = typeof event.data.id === 'string' ? event.data.id : '';
    if (event.name === 'task.dead' && this.options.onDead) {
      this.send({ kind: 'task_dead', summary: `task ${id} (${event.type ?? '?'}) in queue ${event.queue ?? '?'} is dead`, details: event.data, at: new Date().toISOString() });
    }
    const schedule = SCHEDULE_TASK.exec(id)?.[1];
    if (schedule === undefined) return;
    const streak = this.streak(schedule);
    if (event.name === 'task.completed') streak.failed = 0;
    if (event.name === 'task.dead') {
      streak.failed += 1;
      if (streak.failed === this.options.scheduleFailures) {
        this.send({ kind: 'schedule_failing', summary: `schedule ${schedule} failed ${streak.failed} runs in a row`, details: { schedule, last_task_id: id }, at: new Date().toISOString() });
      }
    }
  }

  private fire(event: FireEvent): void {
    const streak = this.streak(event.scheduleId);
    if (event.outcome === 'missed') {
      streak.missed += 1;
      if (streak.missed === this.options.scheduleFailures) {
        this.send({
          kind: 'schedule_missing',
          summary: `schedule ${event.scheduleId} missed ${streak.missed} fires in a row`,
          details: { schedule: event.scheduleId, nominal_at: iso(event.nominalAt) },
          at: new Date().toISOString(),
        });
      }
    } else if (event.outcome === 'enqueued') streak.missed = 0;
  }

  /** Alerts once when a queue crosses the threshold, again only after it went back under. */
  async checkBacklog(): Promise<void> {
    const threshold = this.options.backlogThreshold;
    if (threshold === null) return;
    try {
      for (const queue of await this.deps.backend.listQueues()) {
        const depth = queue.counts.queued;
        if (depth > threshold && !this.overBacklog.has(queue.name)) {
          this.overBacklog.add(queue.name);
          this.send({ kind: 'queue_backlog', summary: `queue ${queue.name} holds ${depth} queued tasks (threshold ${threshold})`, details: { queue: queue.name, depth, threshold }, at: new Date().toISOString() });
        } else if (depth <= threshold) this.overBacklog.delete(queue.name);
      }
    } catch (error) {
      this.deps.log.warn({ err: error instanceof Error ? error.message : String(error) }, 'alerts: backlog check failed');
    }
  }

  /**
   * Alerts when a queue's maxLength refused enqueues since the last check (the store counts them
   * for every producer), once, and again only after a check that found none. The first check
   * learns the totals: refusals from before the task center started are not alerted.
   */
  async checkRefusals(): Promise<void> {
    try {
      for (const queue of await this.deps.backend.listQueues()) {
        const last = this.refusals.get(queue.name);
        this.refusals.set(queue.name, { seen: queue.refused, alerted: last?.alerted ?? false });
        if (last === undefined) continue;
        const refused = queue.refused - last.seen;
        if (refused > 0 && !last.alerted) {
          this.refusals.set(queue.name, { seen: queue.refused, alerted: true });
          const limit = queue.limits.maxLength;
          this.send({
            kind: 'queue_full',
            summary: `queue ${queue.name} is full: its maxLength (${limit ?? 'now removed'}) refused ${refused} enqueued task(s); ${queue.counts.queued} queued`,
            details: { queue: queue.name, refused, max_length: limit, queued: queue.counts.queued },
            at: new Date().toISOString(),
          });
        } else if (refused <= 0) this.refusals.set(queue.name, { seen: queue.refused, alerted: false });
      }
    } catch (error) {
      this.deps.log.warn({ err: error instanceof Error ? error.message : String(error) }, 'alerts: queue-full check failed');
    }
  }

  private send(alert: Alert): void {
    for (const webhook of this.options.webhooks) {
      if (this.inFlight.size >= this.options.maxPending) {
        this.deps.log.warn({ alert: alert.kind, url: webhook.url }, 'alerts: too many deliveries pending; alert dropped');
        continue;
      }
      const delivery = this.deliver(webhook, alert).finally(() => this.inFlight.delete(delivery));
      this.inFlight.add(delivery);
    }
  }

  private async deliver(webhook: Webhook, alert: Alert): Promise<void> {
    const body = webhook.format === 'slack' ? { text: `:rotating_light: Taskline: ${alert.summary}` } : alert;
    const doFetch = this.deps.fetch ?? fetch;
    for (let attempt = 1; attempt <= this.options.attempts; attempt++) {
      if (this.stopping.signal.aborted && attempt > 1) return;
      try {
        const response = await doFetch(webhook.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
          signal: AbortSignal.any([AbortSignal.timeout(this.options.timeoutMs), this.stopping.signal]),
        });
        await response.arrayBuffer().catch(() => undefined);
        if (response.ok) return;
        if (response.status >= 400 && response.status < 500 && response.status !== 429) break;
      } catch {
        // timeout or network error: retry
      }
      if (attempt < this.options.attempts) await pause(250 * 2 ** (attempt - 1), this.stopping.signal);
    }
    this.deps.log.warn({ alert: alert.kind, url: webhook.url }, 'alerts: webhook delivery failed');
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
