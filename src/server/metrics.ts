/**
 * The task center's Prometheus metrics, with exactly the names existing alert rules
 * expect (a worker's are in observability/worker-metrics.ts). Served on its HTTP port at /metrics:
 *   scheduler_queue_depth{queue_name} (queued tasks, read from the store at scrape time),
 *   scheduler_workers (live workers, at scrape time), scheduler_leader{instance} (1 on the scheduler
 *   instance holding the leader lease, 0 on the other live ones, at scrape time; Prometheus keeps
 *   the label as exported_instance unless honor_labels is set), scheduler_tasks_dead_total (tasks that went
 *   dead, from the store's events), scheduler_schedule_fires_total{schedule,outcome} and
 *   scheduler_schedule_fire_lag_seconds (fires of this instance's scheduler).
 *   scheduler_workflows_total{state} (workflow transitions, from the store's events).
 *   Queue controls, read from the store at scrape time: scheduler_queue_running{queue_name}
 *   (running tasks), scheduler_queue_held_tasks{queue_name,limit} (queued tasks a limit holds
 *   back now: rate or concurrency — not groupConcurrency, whose held tasks SQLite could only
 *   count per scrape; docs/http-api.md#metrics), scheduler_queue_refused_total{queue_name} (enqueued tasks
 *   its maxLength refused, counted by the store for every producer); and of the enqueue option
 *   `group`: scheduler_group_running{queue_name,group} (running tasks of each group that has
 *   some — at most 1,000 groups a queue, as the store lists them),
 *   scheduler_queue_full_groups{queue_name} (those of them at the queue's groupConcurrency: the
 *   groups it holds back) and scheduler_queue_waiting_groups{queue_name} (groups with queued tasks).
 * Each process uses its own Registry (no global state), so tests can run several in one process.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Backend, QueueInfo } from '../backend/contract.js';
import type { FireEvent, Scheduler } from '../scheduler/scheduler.js';
import type { EventHub } from './events.js';
import { WORKFLOW_STATES } from '../backend/contract.js';
import { iso } from './present.js';

export const LAG_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300];

export interface TaskCenterMetrics {
  /** Records a fire of this instance's scheduler. */
  observeFire(event: FireEvent): void;
}

/** The task center's gauges (read from the store at scrape time) and counters. */
export function instrumentTaskCenter(registry: Registry, backend: Backend, hub: EventHub): TaskCenterMetrics {
  // The queues, read once per scrape for the gauges below: they collect together, and share the
  // one read in flight.
  let listing: Promise<QueueInfo[]> | null = null;
  const queues = (): Promise<QueueInfo[]> => {
    listing ??= backend.listQueues().finally(() => setImmediate(() => (listing = null)));
    return listing;
  };
  /** A gauge's (or counter's) values per queue, set afresh from the listing at every scrape. */
  const collectQueues = <M extends Gauge<string> | Counter<string>>(apply: (metric: M, queue: QueueInfo) => void) =>
    async function collect(this: M): Promise<void> {
      try {
        const list = await queues();
        this.reset();
        for (const queue of list) apply(this, queue);
      } catch {
        // the store is unreachable: /readyz says so; the scrape keeps the last values
      }
    };
  new Gauge({
    name: 'scheduler_queue_depth',
    help: 'Queued tasks per queue (read from the store at scrape time)',
    labelNames: ['queue_name'],
    registers: [registry],
    collect: collectQueues<Gauge<string>>((gauge, q) => gauge.set({ queue_name: q.name }, q.counts.queued)),
  });
  new Gauge({
    name: 'scheduler_queue_oldest_age_seconds',
    help: 'Age of the oldest queued task per queue, 0 when none (read from the store at scrape time)',
    labelNames: ['queue_name'],
    registers: [registry],
    collect: collectQueues<Gauge<string>>((gauge, q) => gauge.set({ queue_name: q.name }, q.latency / 1000)),
  });
  new Gauge({
    name: 'scheduler_queue_running',
    help: 'Running tasks per queue (read from the store at scrape time)',
    labelNames: ['queue_name'],
    registers: [registry],
    collect: collectQueues<Gauge<string>>((gauge, q) => gauge.set({ queue_name: q.name }, q.counts.running)),
  });
  new Gauge({
    name: 'scheduler_queue_held_tasks',
    help: 'Queued tasks that a limit of their queue holds back now, by the limit (rate or concurrency; read from the store at scrape time)',
    labelNames: ['queue_name', 'limit'],
    registers: [registry],
    collect: collectQueues<Gauge<string>>((gauge, q) => {
      for (const limit of ['rate', 'concurrency']) gauge.set({ queue_name: q.name, limit }, q.held?.limit === limit ? q.counts.queued : 0);
    }),
  });
  new Gauge({
    name: 'scheduler_group_running',
    help: 'Running tasks per queue and enqueue group, for the groups with running tasks (at most 1,000 a queue; read from the store at scrape time)',
    labelNames: ['queue_name', 'group'],
    registers: [registry],
    collect: collectQueues<Gauge<string>>((gauge, q) => {
      for (const [group, running] of Object.entries(q.groups?.running ?? {})) gauge.set({ queue_name: q.name, group }, running);
    }),
  });
  new Gauge({
    name: 'scheduler_queue_full_groups',
    help: 'Enqueue groups running as many tasks as the queue\'s groupConcurrency: their other tasks wait (of the groups the store lists, at most 1,000 a queue; read at scrape time)',
    labelNames: ['queue_name'],
    registers: [registry],
    collect: collectQueues<Gauge<string>>((gauge, q) => {
      const limit = q.limits.groupConcurrency;
      const full = limit === null ? 0 : Object.values(q.groups?.running ?? {}).filter((running) => running >= limit).length;
      gauge.set({ queue_name: q.name }, full);
    }),
  });
  new Gauge({
    name: 'scheduler_queue_waiting_groups',
    help: 'Enqueue groups with queued tasks per queue (read from the store at scrape time)',
    labelNames: ['queue_name'],
    registers: [registry],
    collect: collectQueues<Gauge<string>>((gauge, q) => gauge.set({ queue_name: q.name }, q.groups?.waiting ?? 0)),
  });
  new Counter({
    name: 'scheduler_queue_refused_total',
    help: 'Enqueued tasks refused by the queue\'s maxLength, by every producer (counted by the store, read at scrape time)',
    labelNames: ['queue_name'],
    registers: [registry],
    collect: collectQueues<Counter<string>>((counter, q) => counter.inc({ queue_name: q.name }, q.refused)),
  });
  new Gauge({
    name: 'scheduler_workers',
    help: 'Workers with a live heartbeat',
    registers: [registry],
    async collect() {
      try {
        this.set((await backend.listWorkers()).length);
      } catch {
        // as above
      }
    },
  });
  new Gauge({
    name: 'scheduler_leader',
    help: 'Live scheduler instances: 1 on the one holding the leader lease, 0 on the others (read from the store at scrape time)',
    labelNames: ['instance'],
    registers: [registry],
    async collect() {
      try {
        const { instances } = await backend.listSchedulers();
        this.reset();
        for (const s of instances) this.set({ instance: s.id }, s.leader ? 1 : 0);
      } catch {
        // as above
      }
    },
  });
  const dead = new Counter({ name: 'scheduler_tasks_dead_total', help: 'Tasks that went to the dead letter (seen by this task center)', registers: [registry] });
  const workflows = new Counter({
    name: 'scheduler_workflows_total',
    help: 'Workflow transitions by the state reached: running (created or retried), completed, failed, cancelled (seen by this task center)',
    labelNames: ['state'],
    registers: [registry],
  });
  for (const state of WORKFLOW_STATES) workflows.inc({ state }, 0);
  hub.on((event) => {
    if (event.name === 'task.dead') dead.inc();
    else if (event.name.startsWith('workflow.') && typeof event.data.state === 'string') workflows.inc({ state: event.data.state });
  });
  const fires = new Counter({ name: 'scheduler_schedule_fires_total', help: 'Schedule fires by outcome', labelNames: ['schedule', 'outcome'], registers: [registry] });
  const lag = new Histogram({
    name: 'scheduler_schedule_fire_lag_seconds',
    help: 'Seconds between a fire’s nominal time and its enqueue',
    buckets: LAG_BUCKETS,
    registers: [registry],
  });
  return {
    observeFire(event) {
      const outcome = event.outcome.startsWith('skipped') ? 'skipped' : event.outcome;
      fires.inc({ schedule: event.scheduleId, outcome });
      if (event.outcome === 'enqueued') lag.observe(Math.max(0, event.lagMs) / 1000);
    },
  };
}

/** Feeds a scheduler's fires into the metrics and the event stream. */
export function followScheduler(scheduler: Scheduler, metrics: TaskCenterMetrics, hub: EventHub): () => void {
  const onFire = (event: FireEvent) => {
    metrics.observeFire(event);
    hub.publish({
      name: 'schedule.fired',
      queue: null,
      type: null,
      data: {
        schedule: event.scheduleId,
        fire_id: event.fireId,
        nominal_at: iso(event.nominalAt),
        outcome: event.outcome,
        task_id: event.taskId,
        lag_ms: event.lagMs,
        takeover: event.takeover,
        at: Date.now(),
      },
    });
  };
  scheduler.on('fire', onFire);
  return () => scheduler.off('fire', onFire);
}
