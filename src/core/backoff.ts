import type { BackoffSpec, TaskRecord } from './task.js';
import { TasklineError } from './errors.js';

/** Exponential backoff defaults: base 10 s, max 1 h, up to 25 % jitter. */
export const DEFAULT_BACKOFF: BackoffSpec = { type: 'exponential', base: 10_000, max: 3_600_000 };
export const JITTER_FRACTION = 0.25;

/** A backoff function: `(attempt, error, task) => ms`. */
export type BackoffFunction = (attempt: number, error: unknown, task: TaskView) => number;
export type BackoffOption = BackoffSpec | BackoffFunction;

/** What a backoff function sees of the task. */
export type TaskView = Pick<TaskRecord, 'id' | 'type' | 'queue' | 'attempt' | 'maxRetries' | 'createdAt' | 'headers'>;

/**
 * The delay before the next attempt after `attempt` failed.
 * `random` returns [0, 1) and is injected so tests can pin the jitter.
 */
export function backoffDelay(spec: BackoffSpec, attempt: number, random: () => number = Math.random): number {
  if (spec.type === 'fixed') return spec.delay;
  const exponent = Math.max(0, attempt - 1);
  const raw = Math.min(spec.max, spec.base * 2 ** Math.min(exponent, 52));
  return Math.round(raw + raw * JITTER_FRACTION * random());
}

export function validateBackoffSpec(value: unknown, where: string): BackoffSpec {
  const fail = (): never => {
    throw new TasklineError(
      'TL_INVALID_OPTION',
      `${where}: backoff must be { type: 'exponential', base: ms, max: ms } or { type: 'fixed', delay: ms } (ms >= 0)${
        typeof value === 'function' ? '; a backoff function is accepted only by the Worker' : ''
      }`,
    );
  };
  if (typeof value !== 'object' || value === null) return fail();
  const spec = value as Record<string, unknown>;
  const ms = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;
  if (spec.type === 'fixed') {
    if (!ms(spec.delay)) fail();
    return { type: 'fixed', delay: spec.delay as number };
  }
  if (spec.type === 'exponential') {
    const base = spec.base ?? 10_000;
    const max = spec.max ?? 3_600_000;
    if (!ms(base) || !ms(max)) fail();
    return { type: 'exponential', base: base as number, max: max as number };
  }
  return fail();
}
