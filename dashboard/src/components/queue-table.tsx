/** Queues with their counts per state (each linked to that list) and the oldest queued age. */
import type { ReactNode } from 'react';
import { enc } from '../api';
import { duration, n } from '../format';
import { Link } from '../router';
import { TASK_STATES, type Queue } from '../types';

/** `more`: extra columns (header, then a cell per queue) after the counts. */
export function QueueTable({ queues, more = [] }: { queues: Queue[]; more?: [string, (q: Queue) => ReactNode, boolean?][] }) {
  return (
    <div className="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">queue</th>
            {TASK_STATES.map((s) => (
              <th key={s} scope="col" className="num">
                {s}
              </th>
            ))}
            <th scope="col" className="num">
              oldest queued
            </th>
            {more.map(([header, , numeric]) => (
              <th key={header} scope="col" className={numeric ? 'num' : undefined}>
                {header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {queues.map((q) => (
            <tr key={q.name} data-row tabIndex={-1}>
              <th scope="row">
                <Link to={`/queues/${enc(q.name)}`}>{q.name}</Link> {q.paused ? <span className="badge state-paused">paused</span> : null}
              </th>
              {TASK_STATES.map((s) => (
                <td key={s} className="num">
                  {q.counts[s] ? <Link to={`/queues/${enc(q.name)}?state=${s}`}>{n(q.counts[s])}</Link> : <span className="muted">0</span>}
                </td>
              ))}
              <td className="num">{q.counts.queued ? duration(q.latency_ms) : '–'}</td>
              {more.map(([header, cell, numeric]) => (
                <td key={header} className={numeric ? 'num' : undefined}>
                  {cell(q)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
