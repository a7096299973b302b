/** Structured JSON logs (pino) with the task id, type and queue on every task line. */
import { pino, type Logger } from 'pino';
import type { Worker } from '../worker/worker.js';

export function createLogger(name: string, level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({ name, level, base: { pid: process.pid } });
}

/** Logs each attempt's start and end as one JSON line each. */
export function logWorkerTasks(worker: Worker, logger: Logger): void {
  worker.use(async (ctx, next) => {
    logger.info({ task_id: ctx.task.id, type: ctx.task.type, queue: ctx.task.queue, attempt: ctx.task.attempt }, 'task started');
    return next();
  });
  worker.on('completed', (task) => logger.info({ task_id: task.id, type: task.type, queue: task.queue, attempt: task.attempt }, 'task completed'));
  worker.on('failed', (task, error, next) =>
    logger.warn({ task_id: task.id, type: task.type, queue: task.queue, attempt: task.attempt, next, err: error instanceof Error ? error.message : String(error) }, 'task failed'),
  );
  worker.on('stale', (task) => logger.warn({ task_id: task.id, type: task.type, queue: task.queue }, 'lease lost; result not written'));
  worker.on('error', (error, where) => logger.error({ where, err: error instanceof Error ? error.message : String(error) }, 'worker error'));
}
