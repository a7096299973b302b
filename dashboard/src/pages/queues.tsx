/** Queues: the table of every queue, and one queue's tasks by state with its operations and limits. */
import { useState } from 'react';
import { accepts, type OperatorAction } from '../../../src/core/transitions';
import { QUEUES_REFRESH_MS, enc, post, request, useApi } from '../api';
import { ActionButton, Empty, ErrorBox, Loading, Pager, Section, useCanAct } from '../components/common';
import { QueueGroupsSection } from '../components/queue-groups';
import { QueueLimitsSection } from '../components/queue-limits';
import { QueueTable } from '../components/queue-table';
import { TaskTable } from '../components/task-table';
import { limitsText, n } from '../format';
import { Link, setParams, useLocation } from '../router';
import { TASK_STATES, type Keep, type Queue, type TaskList, type TaskState } from '../types';

export function QueuesPage() {
  const queues = useApi<{ queues: Queue[] }>('/api/v1/queues', { refetchInterval: QUEUES_REFRESH_MS });
  return (
    <>
      <h1>Queues</h1>
      <ErrorBox error={queues.error} />
      {!queues.data ? (
        <Loading what="queues" />
      ) : queues.data.queues.length === 0 ? (
        <Empty>No queues yet: a queue appears when its first task is enqueued.</Empty>
      ) : (
        <div className="card">
          <QueueTable
            queues={queues.data.queues}
            more={[
              ['processed', (q) => n(q.processed), true],
              ['failed', (q) => n(q.failed), true],
              ['limits', (q) => limitsText(q.limits)],
              ['pause', (q) => <PauseButton queue={q} />],
            ]}
          />
        </div>
      )}
    </>
  );
}

function PauseButton({ queue }: { queue: Queue }) {
  return queue.paused ? (
    <ActionButton label="Resume" run={() => post(`/api/v1/queues/${enc(queue.name)}/resume`)} />
  ) : (
    <ActionButton label="Pause" run={() => post(`/api/v1/queues/${enc(queue.name)}/pause`)} />
  );
}

const BULK: [string, OperatorAction, string][] = [
  ['run-all', 'run', 'Run all'],
  ['archive-all', 'archive', 'Archive all'],
  ['delete-all', 'delete', 'Delete all'],
];

export function QueuePage({ queue }: { queue: string }) {
  const { params } = useLocation();
  const state = (TASK_STATES as string[]).includes(params.get('state') ?? '') ? (params.get('state') as TaskState) : 'queued';
  const cursor = params.get('cursor');
  const info = useApi<Queue>(`/api/v1/queues/${enc(queue)}`, { refetchInterval: QUEUES_REFRESH_MS });
  const tasks = useApi<TaskList>(`/api/v1/queues/${enc(queue)}/tasks?state=${state}&limit=50${cursor ? `&cursor=${enc(cursor)}` : ''}`);
  const q = info.data;
  return (
    <>
      <p className="crumbs">
        <Link to="/queues">Queues</Link> /
      </p>
      <h1>
        {queue} {q?.paused ? <span className="badge state-paused">paused</span> : null}
      </h1>
      <ErrorBox error={info.error} />
      {q ? (
        <div className="toolbar">
          <PauseButton queue={q} />
          <KeepEditor queue={queue} keep={q.keep} />
        </div>
      ) : null}
      {q ? <QueueLimitsSection key={queue} queue={queue} limits={q.limits} /> : null}
      {q ? <QueueGroupsSection queue={q} /> : null}
      <nav className="tabs" aria-label="task states">
        {TASK_STATES.map((s) => (
          <Link key={s} to={`/queues/${enc(queue)}?state=${s}`} aria-current={s === state ? 'page' : undefined}>
            {s} <span className="count">{n(q?.counts[s] ?? 0)}</span>
          </Link>
        ))}
      </nav>
      <Section
        title={`${state} tasks`}
        actions={
          state === 'running'
            ? null
            : BULK.filter(([, action]) => accepts(action, state)).map(([route, action, label]) => (
                <ActionButton
                  key={route}
                  label={label}
                  danger={action === 'delete'}
                  confirm={`${label}: every ${state} task of ${queue} (${n(q?.counts[state] ?? 0)})?`}
                  run={() => post(`/api/v1/queues/${enc(queue)}/tasks/${state}/${route}`)}
                />
              ))
        }
      >
        <ErrorBox error={tasks.error} />
        {tasks.data ? (
          tasks.data.tasks.length === 0 ? (
            <Empty>No {state} tasks in {queue}.</Empty>
          ) : (
            <>
              <TaskTable tasks={tasks.data.tasks} selectable />
              <Pager nextCursor={tasks.data.next_cursor} cursor={cursor} onPage={(next) => setParams({ cursor: next })} />
            </>
          )
        ) : (
          <Loading what="tasks" />
        )}
      </Section>
    </>
  );
}

function KeepEditor({ queue, keep }: { queue: string; keep: Keep }) {
  const canAct = useCanAct();
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState<Record<keyof Keep, string>>({ completed: '', dead: '', cancelled: '' });
  const text = (value: number | null) => (value === null ? 'no bound' : n(value));
  if (!editing) {
    return (
      <span className="keep">
        keeps completed {text(keep.completed)} · dead {text(keep.dead)} · cancelled {text(keep.cancelled)}{' '}
        {canAct ? (
          <button
            type="button"
            onClick={() => {
              setDraft({ completed: keep.completed === null ? '' : String(keep.completed), dead: keep.dead === null ? '' : String(keep.dead), cancelled: keep.cancelled === null ? '' : String(keep.cancelled) });
              setEditing(true);
            }}
          >
            Edit bounds
          </button>
        ) : null}
      </span>
    );
  }
  const parse = (value: string) => (value.trim() === '' ? null : /^\d+$/.test(value.trim()) ? Number(value.trim()) : NaN);
  const wrong = (['completed', 'dead', 'cancelled'] as const).filter((state) => Number.isNaN(parse(draft[state])));
  return (
    <form className="keep-form" onSubmit={(e) => e.preventDefault()}>
      {(['completed', 'dead', 'cancelled'] as const).map((state) => (
        <label key={state}>
          keep {state}{' '}
          <input inputMode="numeric" placeholder="no bound" value={draft[state]} onChange={(e) => setDraft({ ...draft, [state]: e.target.value })} size={8} />
        </label>
      ))}
      {wrong.length > 0 ? (
        <p className="error" role="alert">
          keep {wrong.join(', ')}: a whole number of tasks, or empty for no bound
        </p>
      ) : null}
      <ActionButton
        label="Save bounds"
        disabled={wrong.length > 0}
        run={() => request(`/api/v1/queues/${enc(queue)}/keep`, { method: 'PATCH', body: { completed: parse(draft.completed), dead: parse(draft.dead), cancelled: parse(draft.cancelled) } })}
        onDone={() => setEditing(false)}
      />
      <button type="button" onClick={() => setEditing(false)}>
        Cancel
      </button>
    </form>
  );
}

