import { describe, expect, it } from 'vitest';
import { operationError } from '../../src/backend/shared.js';
import { TASK_STATES, type TaskState } from '../../src/core/task.js';
import {
  ACCEPTED_STATES, OPERATOR_ACTIONS, REQUEST_STATES, accepts, acceptedStatesText, isRequest, type OperatorAction,
} from '../../src/core/transitions.js';

/** Every (action, state) pair the table answers, as "action state". */
function acceptedPairs(rule: (action: OperatorAction, state: TaskState) => boolean): string[] {
  return OPERATOR_ACTIONS.flatMap((action) => TASK_STATES.filter((state) => rule(action, state)).map((state) => `${action} ${state}`));
}

describe('operator transitions', () => {
  it('says which states each action takes', () => {
    expect(ACCEPTED_STATES).toEqual({
      run: ['dead', 'scheduled', 'retrying', 'cancelled'],
      archive: ['queued', 'scheduled', 'retrying'],
      delete: ['scheduled', 'queued', 'retrying', 'completed', 'dead', 'cancelled'],
      cancel: ['queued', 'scheduled', 'retrying', 'running'],
    });
    expect(Object.keys(ACCEPTED_STATES)).toEqual([...OPERATOR_ACTIONS]);
    expect(acceptedPairs(accepts)).toEqual([
      'run scheduled', 'run retrying', 'run dead', 'run cancelled',
      'archive scheduled', 'archive queued', 'archive retrying',
      'delete scheduled', 'delete queued', 'delete retrying', 'delete completed', 'delete dead', 'delete cancelled',
      'cancel scheduled', 'cancel queued', 'cancel running', 'cancel retrying',
    ]);
  });

  it('makes cancelling a running task a request, and nothing else', () => {
    expect(acceptedPairs(isRequest)).toEqual(['cancel running']);
    expect(Object.keys(REQUEST_STATES)).toEqual([...OPERATOR_ACTIONS]);
    // A request is one of the accepted states: it is taken, not refused.
    for (const action of OPERATOR_ACTIONS) for (const state of REQUEST_STATES[action]) expect(accepts(action, state)).toBe(true);
  });

  it('lists each state once, and only real states', () => {
    for (const table of [ACCEPTED_STATES, REQUEST_STATES]) {
      for (const states of Object.values(table)) {
        expect(new Set(states).size).toBe(states.length);
        for (const state of states) expect(TASK_STATES).toContain(state);
      }
    }
  });

  it('is plain data, which serialises and reads back the same', () => {
    expect(JSON.parse(JSON.stringify({ accepted: ACCEPTED_STATES, requests: REQUEST_STATES }))).toEqual({
      accepted: ACCEPTED_STATES,
      requests: REQUEST_STATES,
    });
  });

  it('names the states an action takes as the error messages do', () => {
    expect(acceptedStatesText('run')).toBe('dead, scheduled, retrying or cancelled');
    expect(acceptedStatesText('archive')).toBe('queued, scheduled or retrying');
    expect(acceptedStatesText('delete')).toBe('any state but running');
    expect(acceptedStatesText('cancel')).toBe('queued, scheduled, retrying or running');
  });

  it('quotes them in the TL_INVALID_STATE error a refused action throws', () => {
    const error = operationError('archive', 't1', 'completed');
    expect(error.code).toBe('TL_INVALID_STATE');
    expect(error.message).toBe('cannot archive task t1: it is completed; archive works on a task that is queued, scheduled or retrying');
    expect(operationError('delete', 't2', 'running').message).toBe('cannot delete task t2: it is running; delete works on a task that is any state but running');
  });
});
