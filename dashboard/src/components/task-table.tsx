/** A list of tasks; with `selectable`, rows can be picked and acted on together. */
import { useState } from 'react';
import { accepts, OPERATOR_ACTIONS, type OperatorAction } from '../../../src/core/transitions';
import { enc, request } from '../api';
import { relative } from '../format';
import { Link } from '../router';
import type { Task } from '../types';
import { ActionButton, StateBadge, useCanAct } from './common';

/** One task action through the API: DELETE for delete, POST …/run, /archive, /cancel otherwise. */
export function taskAction(action: OperatorAction, id: string): Promise<unknown> {
  return action === 'delete' ? request(`/api/v1/tasks/${enc(id)}`, { method: 'DELETE' }) : request(`/api/v1/tasks/${enc(id)}/${action}`, { method: 'POST' });
}

export const LABELS: Record<OperatorAction, string> = { run: 'Run', archive: 'Archive', delete: 'Delete', cancel: 'Cancel' };

/**
 * One action on each of some tasks, all attempted: a task that changed state meanwhile (the
 * action no longer takes it) or went away is counted, not a reason to stop. Rejects with the
 * counts when any failed.
 */
export async function eachTask(tasks: Task[], action: OperatorAction): Promise<void> {
  const results = await Promise.allSettled(tasks.map((t) => taskAction(action, t.id)));
  const failed = results.filter((r) => r.status === 'rejected');
  if (failed.length === 0) return;
  const first = failed[0].reason as Error;
  throw new Error(`${LABELS[action]}: ${tasks.length - failed.length} of ${tasks.length} done; ${failed.length} not (${first.message})`);
}

function firstLine(text: string | null): string {
  if (!text) return '';
  const line = text.split('\n')[0];
  return line.length > 120 ? `${line.slice(0, 117)}…` : line;
}

export function TaskTable({ tasks, selectable = false, showQueue = false }: { tasks: Task[]; selectable?: boolean; showQueue?: boolean }) {
  const canAct = useCanAct() && selectable;
  const [picked, setPicked] = useState<Set<string>>(new Set());
  const chosen = tasks.filter((t) => picked.has(t.id));
  const toggle = (id: string) => {
    const next = new Set(picked);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setPicked(next);
  };
  return (
    <>
      {canAct && chosen.length > 0 ? (
        <div className="toolbar" aria-label="selected tasks">
          <span>{chosen.length} selected</span>
          {OPERATOR_ACTIONS.map((action) => {
            const able = chosen.filter((t) => accepts(action, t.state));
            if (able.length === 0) return null;
            return (
              <ActionButton
                key={action}
                label={`${LABELS[action]} ${able.length}`}
                danger={action === 'delete'}
                confirm={`${LABELS[action]} ${able.length} task(s)?`}
                run={() => eachTask(able, action)}
                onDone={() => setPicked(new Set())}
              />
            );
          })}
        </div>
      ) : null}
      <div className="table-wrap">
        <table className="tasks">
          <thead>
            <tr>
              {canAct ? (
                <th scope="col">
                  <input
                    type="checkbox"
                    aria-label="select all"
                    checked={chosen.length === tasks.length && tasks.length > 0}
                    onChange={(e) => setPicked(e.target.checked ? new Set(tasks.map((t) => t.id)) : new Set())}
                  />
                </th>
              ) : null}
              <th scope="col">id</th>
              <th scope="col">type</th>
              {showQueue ? <th scope="col">queue</th> : null}
              <th scope="col">state</th>
              <th scope="col" className="num">
                attempt
              </th>
              <th scope="col">when</th>
              <th scope="col">error</th>
            </tr>
          </thead>
          <tbody>
            {tasks.map((t) => (
              <tr key={t.id} data-row tabIndex={-1}>
                {canAct ? (
                  <td>
                    <input type="checkbox" aria-label={`select ${t.id}`} checked={picked.has(t.id)} onChange={() => toggle(t.id)} />
                  </td>
                ) : null}
                <td className="mono">
                  <Link to={`/tasks/${enc(t.id)}`}>{t.id}</Link>
                </td>
                <td>{t.type}</td>
                {showQueue ? <td>{t.queue}</td> : null}
                <td>
                  <StateBadge state={t.state} />
                </td>
                <td className="num">
                  {t.attempt}/{t.max_retries + 1}
                </td>
                <td>
                  {when(t)}
                  {t.waiting && t.waiting.reason !== 'scheduled' && t.waiting.reason !== 'retrying' ? <div className="why-inline">{t.waiting.message}</div> : null}
                </td>
                <td className="error-text">{firstLine(t.error)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

function when(t: Task): string {
  if (t.state === 'scheduled' || t.state === 'retrying') return `runs ${relative(t.next_run_at)}`;
  if (t.state === 'running') return `started ${relative(t.started_at)}`;
  if (t.finished_at) return `finished ${relative(t.finished_at)}`;
  return `created ${relative(t.created_at)}`;
}
