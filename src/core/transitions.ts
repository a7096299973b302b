/**
 * Which task states each operator action (run, archive, delete, cancel) takes: the one table
 * every store checks against, and the error text quotes. A task in a state its action does not
 * take is refused with TL_INVALID_STATE (one task) or left alone (a bulk action).
 *
 * ACCEPTED_STATES and REQUEST_STATES are plain data (action → list of state names) so that a
 * store that cannot import this module, the Redis Lua prelude, can be generated from them: as
 * sets, `{ run = { dead = true, … }, … }` (the lists' order is the error text's).
 */
import { TASK_STATES, type TaskState } from './task.js';

/** What an operator can do to a task. */
export const OPERATOR_ACTIONS = ['run', 'archive', 'delete', 'cancel'] as const;
export type OperatorAction = (typeof OPERATOR_ACTIONS)[number];

/**
 * The states each action takes, in the order its error text names them.
 * - run → queued: a dead or cancelled task starts fresh, with all its retries again.
 * - archive → dead (the dead letter): a task still waiting to run.
 * - delete: a task in any state but running (its worker holds it).
 * - cancel → cancelled; a running task only gets a cancel request (REQUEST_STATES).
 */
export const ACCEPTED_STATES: Readonly<Record<OperatorAction, readonly TaskState[]>> = {
  run: ['dead', 'scheduled', 'retrying', 'cancelled'],
  archive: ['queued', 'scheduled', 'retrying'],
  delete: TASK_STATES.filter((state) => state !== 'running'),
  cancel: ['queued', 'scheduled', 'retrying', 'running'],
};

/**
 * The accepted states in which an action is a request, not a transition: the task keeps its
 * state and its worker is told (a cancel request aborts the handler's signal; the worker's ack
 * then finishes the task).
 */
export const REQUEST_STATES: Readonly<Record<OperatorAction, readonly TaskState[]>> = {
  run: [],
  archive: [],
  delete: [],
  cancel: ['running'],
};

/** Whether `action` takes a task in `state`. */
export function accepts(action: OperatorAction, state: TaskState): boolean {
  return ACCEPTED_STATES[action].includes(state);
}

/** Whether `action` on a task in `state` only asks (REQUEST_STATES) rather than moves it. */
export function isRequest(action: OperatorAction, state: TaskState): boolean {
  return REQUEST_STATES[action].includes(state);
}

/**
 * The states `action` takes, as the end of a sentence: "dead, scheduled, retrying or
 * cancelled"; an action that refuses one state only says so: "any state but running".
 */
export function acceptedStatesText(action: OperatorAction): string {
  const accepted = ACCEPTED_STATES[action];
  const refused = TASK_STATES.filter((state) => !accepted.includes(state));
  if (refused.length === 1) return `any state but ${refused[0]}`;
  return accepted.length === 1 ? accepted[0] : `${accepted.slice(0, -1).join(', ')} or ${accepted[accepted.length - 1]}`;
}
