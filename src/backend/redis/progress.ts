/** A running task's log lines and progress (lua/progress.lua), checked against its lease. */
import type { TaskLogLine } from '../../core/task.js';
import type { AckResult, LeaseRef } from '../contract.js';
import { MAX_LOG_LINES } from '../shared.js';
import type { RedisConnection } from './connection.js';

export async function reportProgress(c: RedisConnection, lease: LeaseRef, update: { logs?: TaskLogLine[]; progress?: unknown }): Promise<AckResult> {
  const logs = update.logs && update.logs.length > 0 ? JSON.stringify(update.logs) : '';
  const progress = update.progress === undefined ? '' : JSON.stringify(update.progress);
  const applied = await c.runScript('progress', lease.queue, [lease.id, lease.token, logs, progress, MAX_LOG_LINES]);
  return applied === 1 ? 'ok' : 'stale';
}
