/** The dead letter: dead tasks across queues, grouped by type and error, requeued by group. */
import { useQueries } from '@tanstack/react-query';
import { enc, request, useApi } from '../api';
import { ActionButton, Empty, ErrorBox, Loading, Section } from '../components/common';
import { TaskTable, eachTask } from '../components/task-table';
import { n, relative } from '../format';
import { Link, setParams, useLocation } from '../router';
import type { Queue, Task, TaskList } from '../types';

/** Dead tasks read per queue (the first page of each); a group's count is of these. */
const PER_QUEUE = 250;

interface Group {
  key: string;
  type: string;
  error: string;
  tasks: Task[];
}

/** The error's first line with numbers and ids blanked, so "timeout after 3012 ms" groups with "…3018 ms". */
export function errorShape(error: string | null): string {
  const line = (error ?? '').split('\n')[0].trim();
  return line.replace(/[0-9a-f]{8}-[0-9a-f-]{27,}/gi, '…').replace(/\d+/g, 'N').slice(0, 200) || '(no error)';
}

export function DeadPage() {
  const { params } = useLocation();
  const open = params.get('group');
  const queues = useApi<{ queues: Queue[] }>('/api/v1/queues');
  const withDead = (queues.data?.queues ?? []).filter((q) => (q.counts.dead ?? 0) > 0);
  const lists = useQueries({
    queries: withDead.map((q) => {
      const path = `/api/v1/queues/${enc(q.name)}/tasks?state=dead&limit=${PER_QUEUE}`;
      return { queryKey: [path], queryFn: () => request<TaskList>(path) };
    }),
  });
  const total = withDead.reduce((sum, q) => sum + (q.counts.dead ?? 0), 0);
  // A queue whose list failed shows its error; the others are grouped all the same.
  const loaded = lists.every((l) => l.data || l.error);
  const groups = new Map<string, Group>();
  for (const list of lists) {
    for (const task of list.data?.tasks ?? []) {
      const error = errorShape(task.error);
      const key = `${task.type}\u0000${error}`;
      const group = groups.get(key) ?? { key, type: task.type, error, tasks: [] };
      group.tasks.push(task);
      groups.set(key, group);
    }
  }
  const sorted = [...groups.values()].sort((a, b) => b.tasks.length - a.tasks.length);
  const shown = lists.reduce((sum, l) => sum + (l.data?.tasks.length ?? 0), 0);
  return (
    <>
      <h1>Dead letter</h1>
      <ErrorBox error={queues.error ?? lists.find((l) => l.error)?.error} />
      {!queues.data || !loaded ? (
        <Loading what="dead tasks" />
      ) : total === 0 ? (
        <Empty>No dead tasks. A task lands here when its retries run out or it is archived.</Empty>
      ) : (
        <>
          <p className="muted">
            {n(total)} dead task(s) in {withDead.length} queue(s), in {sorted.length} group(s) by type and error
            {shown < total ? ` (grouping the first ${n(PER_QUEUE)} of each queue: ${n(shown)}; search state:dead to reach them all)` : ''}.
          </p>
          <div className="table-wrap card">
            <table>
              <thead>
                <tr>
                  <th scope="col" className="num">
                    tasks
                  </th>
                  <th scope="col">type</th>
                  <th scope="col">error</th>
                  <th scope="col">queues</th>
                  <th scope="col">latest</th>
                  <th scope="col">actions</th>
                </tr>
              </thead>
              <tbody>
                {sorted.map((g) => (
                  <tr key={g.key} data-row tabIndex={-1}>
                    <td className="num">{n(g.tasks.length)}</td>
                    <td>
                      <Link to={`/dead?group=${enc(g.key)}`}>{g.type}</Link>
                    </td>
                    <td className="error-text">{g.error}</td>
                    <td>{[...new Set(g.tasks.map((t) => t.queue))].join(', ')}</td>
                    <td>{relative(g.tasks.map((t) => t.finished_at ?? '').sort().pop())}</td>
                    <td>
                      <ActionButton
                        label={`Requeue ${g.tasks.length}`}
                        confirm={`Run again the ${g.tasks.length} dead ${g.type} task(s) with this error?`}
                        run={() => eachTask(g.tasks, 'run')}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {open && groups.get(open) ? (
            <Section title={`${groups.get(open)!.type}: ${groups.get(open)!.error}`} actions={<button type="button" onClick={() => setParams({ group: null })}>Close</button>}>
              <TaskTable tasks={groups.get(open)!.tasks} selectable showQueue />
            </Section>
          ) : null}
        </>
      )}
    </>
  );
}
