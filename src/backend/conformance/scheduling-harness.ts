/**
 * Helpers of the schedule, fire and lock conformance tests: schedule definitions as the
 * scheduler validates them, and fire requests built the way the scheduler builds them.
 */
import { type ScheduleDefinition, type ScheduleInput } from '../../core/schedule.js';
import { validateSchedule } from '../../scheduler/schedule.js';
import type { Backend, FireBatch, FireRequest } from '../contract.js';
import { newTask } from './harness.js';

/** A validated schedule definition: every minute, a `report` task into `default`, unless overridden. */
export function definition(id: string, overrides: Partial<ScheduleInput> = {}): ScheduleDefinition {
  return validateSchedule({ id, cron: '* * * * *', task: { type: 'report', payload: { id } }, ...overrides });
}

/** The fire id the scheduler gives a nominal time of a schedule. */
export function fireIdOf(scheduleId: string, nominalAt: number, generation = 1): string {
  return `schedule:${scheduleId}:${generation}:${nominalAt}`;
}

/** An `enqueue` fire with its task (id = fire id, linked to the fire), as the scheduler sends it. */
export function enqueueFire(scheduleId: string, nominalAt: number, options: { queue?: string; runAt?: number } = {}): FireRequest {
  const fireId = fireIdOf(scheduleId, nominalAt);
  const task = newTask('report', { nominalAt }, { id: fireId, queue: options.queue ?? 'default', links: { scheduleFireId: fireId } });
  if (options.runAt !== undefined) task.runAt = options.runAt;
  return { fireId, nominalAt, action: 'enqueue', task };
}

export function missedFire(scheduleId: string, nominalAt: number): FireRequest {
  return { fireId: fireIdOf(scheduleId, nominalAt), nominalAt, action: 'missed' };
}

export function skippedFire(scheduleId: string, nominalAt: number, reason: string): FireRequest {
  return { fireId: fireIdOf(scheduleId, nominalAt), nominalAt, action: 'skipped', reason };
}

/** A batch of one schedule's fires into `default` (overlap `allow`, no previous task, 100 records kept). */
export function batch(scheduleId: string, fires: FireRequest[], overrides: Partial<FireBatch> = {}): FireBatch {
  return { scheduleId, queue: 'default', overlap: 'allow', previousTaskId: null, fires, keepHistory: 100, ...overrides };
}

/** Fires one batch and returns its results. */
export async function fireOne(backend: Backend, fireBatch: FireBatch): Promise<{ fireId: string; outcome: string; taskId: string | null }[]> {
  const [results] = await backend.fire([fireBatch]);
  return results;
}
