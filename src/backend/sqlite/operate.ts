/**
 * Operator transitions on one task or on all tasks of a queue in one state: run (again),
 * archive (to the dead letter), delete, cancel. Which states each takes is core/transitions.ts's
 * table; a task in another state is refused with TL_INVALID_STATE (single) or left alone (bulk).
 */
import { TasklineError } from '../../core/errors.js';
import type { TaskState } from '../../core/task.js';
import { accepts, isRequest, type OperatorAction } from '../../core/transitions.js';
import type { BulkState } from '../contract.js';
import { operationError, workflowNodeError } from '../shared.js';
import { isFinished } from '../../core/task.js';
import { finishTask, queueTask } from './lifecycle.js';
import { deleteTaskRows, type Transition } from './transition.js';

/** Whether the task runs a node of a workflow still kept (its runs are the workflow's to start). */
function isWorkflowNode(t: Transition, id: string): boolean {
  return t.get('SELECT 1 FROM workflow_nodes WHERE task_id = ?', id) !== undefined;
}

/** `workflow`: the task is a node of a workflow, which runs it again (retryWorkflow), not an operator. */
type Outcome = 'ok' | 'requested' | 'workflow' | { invalid: TaskState };

interface OperatedRow {
  id: string;
  queue: string;
  state: TaskState;
  last_error: string | null;
}

/** Each action's work on a task in a state it takes (checked by operate). */
const OPERATIONS: Record<OperatorAction, (t: Transition, task: OperatedRow) => 'ok' | 'requested' | 'workflow'> = {
  run(t, task) {
    // A finished node's run again is its workflow's (retryWorkflow); a waiting one may run now.
    if ((task.state === 'dead' || task.state === 'cancelled') && isWorkflowNode(t, task.id)) return 'workflow';
    if (task.state === 'dead' || task.state === 'cancelled') {
      // A fresh start: all its retries again.
      t.run('UPDATE tasks SET attempt = 0, finished_at = NULL, cancel_requested = 0 WHERE id = ?', task.id);
      t.countKept(task.queue, task.state, -1);
    }
    queueTask(t, task.id, task.queue, task.state);
    return 'ok';
  },
  archive(t, task) {
    finishTask(t, task.id, task.queue, task.state, 'dead');
    return 'ok';
  },
  delete(t, task) {
    deleteTaskRows(t, task.id, task.queue, task.state);
    // A node's task deleted before it finished: the node ends cancelled (its workflow moves on).
    if (!isFinished(task.state)) t.finishedTasks.push({ id: task.id, state: 'cancelled' });
    return 'ok';
  },
  cancel(t, task) {
    if (isRequest('cancel', task.state)) {
      t.run('UPDATE tasks SET cancel_requested = 1 WHERE id = ?', task.id);
      t.emitCancelRequested(task.queue, task.id);
      return 'requested';
    }
    finishTask(t, task.id, task.queue, task.state, 'cancelled', task.last_error ?? 'cancelled by operator');
    return 'ok';
  },
};

/** Applies an action to a task if its state is one the action takes. */
function operate(t: Transition, task: OperatedRow, action: OperatorAction): Outcome {
  if (!accepts(action, task.state)) return { invalid: task.state };
  return OPERATIONS[action](t, task);
}

/** Applies an operator's action to one task. Throws TL_TASK_NOT_FOUND or TL_INVALID_STATE. */
export function operateTask(t: Transition, id: string, action: OperatorAction): 'ok' | 'requested' {
  const task = t.get<OperatedRow>('SELECT id, queue, state, last_error FROM tasks WHERE id = ?', id);
  if (!task) throw new TasklineError('TL_TASK_NOT_FOUND', `no task with id ${JSON.stringify(id)}`);
  const outcome = operate(t, task, action);
  if (typeof outcome === 'object') throw operationError(action, id, outcome.invalid);
  if (outcome === 'workflow') throw workflowNodeError(id);
  return outcome;
}

/** Tasks looked at per bulk transaction. */
export const BULK_BATCH = 500;

/**
 * Applies an action to up to BULK_BATCH tasks of a queue in one state (in their state's order).
 * Returns how many it acted on and how many it looked at; call again while both are non-zero
 * and a full batch was looked at.
 */
export function operateBatch(t: Transition, queue: string, state: BulkState, action: OperatorAction): { done: number; seen: number } {
  // Finished workflow nodes are not run again in bulk (see OPERATIONS.run): left out here, so
  // that a batch of them does not end the walk before the tasks behind them.
  const skipNodes = action === 'run' && (state === 'dead' || state === 'cancelled');
  const tasks = t.all<OperatedRow>(
    `SELECT id, queue, state, last_error FROM tasks WHERE queue = ? AND state = ?${skipNodes ? ' AND NOT EXISTS (SELECT 1 FROM workflow_nodes WHERE task_id = tasks.id)' : ''} ORDER BY sort_key LIMIT ?`,
    queue, state, BULK_BATCH,
  );
  let done = 0;
  for (const task of tasks) {
    const outcome = operate(t, task, action);
    if (outcome === 'ok' || outcome === 'requested') done += 1;
  }
  return { done, seen: tasks.length };
}
