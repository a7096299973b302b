/**
 * A queue's groups (the enqueue option `group`): how many have queued tasks, and the groups with
 * the most running tasks, each against the queue's group concurrency when it has one. Shown only
 * when the queue has groups or a group concurrency.
 */
import { n } from '../format';
import type { Queue } from '../types';
import { Section } from './common';

/** Groups listed, the most running first; the store lists at most 1,000. */
const SHOWN = 10;

export function QueueGroupsSection({ queue }: { queue: Queue }) {
  const { groups } = queue;
  const limit = queue.limits.group_concurrency;
  const running = Object.entries(groups?.running ?? {}).sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
  const waiting = groups?.waiting ?? 0;
  if (waiting === 0 && running.length === 0 && limit === null) return null;
  const full = limit === null ? 0 : running.filter(([, count]) => count >= limit).length;
  const summary = [
    `${n(waiting)} group${waiting === 1 ? '' : 's'} waiting`,
    `${n(running.length)} group${running.length === 1 ? '' : 's'} running`,
    ...(full > 0 ? [`${n(full)} at the group concurrency (${n(limit)})`] : []),
  ].join(' · ');
  return (
    <Section title="Groups" actions={<span className="muted">{summary}</span>}>
      {running.length === 0 ? (
        <p className="muted">No group has a running task.</p>
      ) : (
        <div className="table-wrap">
          <table aria-label={`running tasks per group of ${queue.name}`}>
            <thead>
              <tr>
                <th scope="col">group</th>
                <th scope="col" className="num">
                  running
                </th>
              </tr>
            </thead>
            <tbody>
              {running.slice(0, SHOWN).map(([group, count]) => (
                <tr key={group}>
                  <th scope="row" className="mono">
                    {group}
                  </th>
                  <td className="num">
                    {n(count)}
                    {limit === null ? '' : ` of ${n(limit)}`}
                    {limit !== null && count >= limit ? (
                      <>
                        {' '}
                        <span className="badge state-paused">full</span>
                      </>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {running.length > SHOWN ? <p className="muted">and {n(running.length - SHOWN)} more groups with running tasks</p> : null}
        </div>
      )}
    </Section>
  );
}
