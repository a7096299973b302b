/**
 * A worker's Prometheus metrics, with exactly the names existing alert rules expect;
 * `taskline worker` serves them on METRICS_PORT (metrics-endpoint.ts), `taskline dev` on its one
 * port: scheduler_tasks_dispatched_total{task_name}, scheduler_tasks_completed_total{task_name},
 * scheduler_tasks_failed_total{task_name} (attempts that failed),
 * scheduler_task_retries_total{task_name}, scheduler_task_duration_seconds{task_name}.
 * Each process uses its own Registry (no global state), so tests can run several in one process.
 */
import { Counter, Histogram, Registry } from 'prom-client';
import type { Worker } from '../worker/worker.js';

export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 1800];
/** Counts the attempts a worker runs, by task type, in `registry` (default: a new one), which it returns. */
export function instrumentWorker(worker: Worker, registry: Registry = new Registry()): Registry {
  const labelNames = ['task_name'] as const;
  const dispatched = new Counter({ name: 'scheduler_tasks_dispatched_total', help: 'Attempts handed to a handler', labelNames, registers: [registry] });
  const completed = new Counter({ name: 'scheduler_tasks_completed_total', help: 'Attempts that completed', labelNames, registers: [registry] });
  const failed = new Counter({ name: 'scheduler_tasks_failed_total', help: 'Attempts that failed', labelNames, registers: [registry] });
  const retries = new Counter({ name: 'scheduler_task_retries_total', help: 'Failed attempts that will be retried', labelNames, registers: [registry] });
  const duration = new Histogram({
    name: 'scheduler_task_duration_seconds',
    help: 'How long attempts ran, seconds',
    labelNames,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const started = new Map<string, number>();
  const took = (id: string): number | null => {
    const at = started.get(id);
    started.delete(id);
    return at === undefined ? null : (performance.now() - at) / 1000;
  };
  worker.use(async (ctx, next) => {
    dispatched.inc({ task_name: ctx.task.type });
    started.set(ctx.task.id, performance.now());
    return next();
  });
  worker.on('completed', (task) => {
    completed.inc({ task_name: task.type });
    const seconds = took(task.id);
    if (seconds !== null) duration.observe({ task_name: task.type }, seconds);
  });
  worker.on('failed', (task, _error, next) => {
    const seconds = took(task.id);
    // `queued`: interrupted by a shutdown and put back — not a failure of the task.
    if (next === 'queued') return;
    failed.inc({ task_name: task.type });
    if (next === 'retrying') retries.inc({ task_name: task.type });
    if (seconds !== null) duration.observe({ task_name: task.type }, seconds);
  });
  worker.on('stale', (task) => started.delete(task.id));
  return registry;
}
