/**
 * The example schedules that `taskline dev` reconciles as config-owned schedules:
 * a weekly report, a session clean-up every six hours, an external sync every five minutes (of
 * SYNC_URL, else of the built-in sample records).
 */
import type { ScheduleInput } from '../core/schedule.js';

export function exampleSchedules(env: NodeJS.ProcessEnv = process.env): ScheduleInput[] {
  return [
    {
      id: 'weekly-report',
      cron: '0 0 9 * * 1',
      task: { type: 'send_report', payload: { to: env.REPORT_TO?.trim() || 'team@example.com', title: 'Weekly report', days: 7 } },
    },
    {
      id: 'session-cleanup',
      cron: '0 0 */6 * * *',
      task: { type: 'clean_expired_sessions', payload: { olderThanDays: 30 } },
    },
    {
      id: 'external-sync',
      cron: '0 */5 * * * *',
      // SYNC_URL, else the built-in sample records: a fresh machine needs no network.
      task: { type: 'sync_external_data', queue: 'sync_workers', payload: env.SYNC_URL?.trim() ? { url: env.SYNC_URL.trim() } : {} },
    },
  ];
}
