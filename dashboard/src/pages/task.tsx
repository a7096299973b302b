/** One task: its fields, payload, result, error, every attempt, log lines, progress, links, actions. */
import { accepts, isRequest, OPERATOR_ACTIONS } from '../../../src/core/transitions';
import { enc, useApi } from '../api';
import { ActionButton, ErrorBox, JsonBlock, Loading, Section, StateBadge } from '../components/common';
import { taskAction } from '../components/task-table';
import { duration, localTime, relative } from '../format';
import { Link, navigate } from '../router';
import type { Task } from '../types';

const LABELS = { run: 'Run now', archive: 'Archive', delete: 'Delete', cancel: 'Cancel' } as const;

export function TaskPage({ id }: { id: string }) {
  const task = useApi<Task>(`/api/v1/tasks/${enc(id)}`);
  if (task.error) {
    return (
      <>
        <h1 className="mono">{id}</h1>
        <ErrorBox error={task.error} />
      </>
    );
  }
  if (!task.data) return <Loading what="the task" />;
  const t = task.data;
  return (
    <>
      <p className="crumbs">
        <Link to={`/queues/${enc(t.queue)}?state=${t.state}`}>{t.queue}</Link> / {t.state} /
      </p>
      <h1 className="mono">
        {t.id} <StateBadge state={t.state} />
      </h1>
      {t.waiting ? (
        <p className="why" role="status">
          Not running yet: {t.waiting.message}
        </p>
      ) : null}
      {t.cancel_requested ? <p className="why">A cancel was requested; the worker is told.</p> : null}
      <div className="toolbar">
        {OPERATOR_ACTIONS.filter((action) => accepts(action, t.state)).map((action) => (
          <ActionButton
            key={action}
            label={isRequest(action, t.state) ? 'Request cancel' : LABELS[action]}
            danger={action === 'delete'}
            confirm={action === 'delete' ? `Delete task ${t.id}?` : undefined}
            run={() => taskAction(action, t.id)}
            onDone={action === 'delete' ? () => navigate(`/queues/${enc(t.queue)}?state=${t.state}`) : undefined}
          />
        ))}
      </div>
      <Section title="Task">
        <dl className="fields">
          <dt>type</dt>
          <dd>{t.type}</dd>
          <dt>queue</dt>
          <dd>
            <Link to={`/queues/${enc(t.queue)}`}>{t.queue}</Link>
          </dd>
          {t.group !== null && t.group !== undefined ? (
            <>
              <dt>group</dt>
              <dd className="mono">{t.group}</dd>
            </>
          ) : null}
          <dt>attempt</dt>
          <dd>
            {t.attempt} of {t.max_retries + 1}
          </dd>
          <dt>created</dt>
          <dd title={t.created_at ?? ''}>{localTime(t.created_at)}</dd>
          {t.next_run_at ? (
            <>
              <dt>next run</dt>
              <dd title={t.next_run_at}>
                {localTime(t.next_run_at)} ({relative(t.next_run_at)})
              </dd>
            </>
          ) : null}
          {t.started_at ? (
            <>
              <dt>started</dt>
              <dd title={t.started_at}>{localTime(t.started_at)}</dd>
            </>
          ) : null}
          {t.finished_at ? (
            <>
              <dt>finished</dt>
              <dd title={t.finished_at}>
                {localTime(t.finished_at)}
                {t.started_at ? ` (ran ${duration(Date.parse(t.finished_at) - Date.parse(t.started_at))})` : ''}
              </dd>
            </>
          ) : null}
          {t.worker_id ? (
            <>
              <dt>worker</dt>
              <dd className="mono">{t.worker_id}</dd>
            </>
          ) : null}
          {t.links.schedule_id ? (
            <>
              <dt>schedule</dt>
              <dd>
                <Link to={`/schedules/${enc(t.links.schedule_id)}`}>{t.links.schedule_id}</Link> <span className="muted mono">fire {t.links.schedule_fire_id}</span>
              </dd>
            </>
          ) : null}
          {t.links.workflow_id ? (
            <>
              <dt>workflow</dt>
              <dd>
                <Link to={`/workflows/${enc(t.links.workflow_id)}`} className="mono">
                  {t.links.workflow_id}
                </Link>{' '}
                {t.links.workflow_node !== null ? <span className="muted mono">node {t.links.workflow_node}</span> : null}
              </dd>
            </>
          ) : null}
          {t.links.parent_id ? (
            <>
              <dt>parent task</dt>
              <dd>
                <Link to={`/tasks/${enc(t.links.parent_id)}`} className="mono">
                  {t.links.parent_id}
                </Link>
              </dd>
            </>
          ) : null}
        </dl>
      </Section>
      <Section title="Payload">
        <JsonBlock value={t.payload} label="payload" />
      </Section>
      {t.result !== null && t.result !== undefined ? (
        <Section title="Result">
          <JsonBlock value={t.result} label="result" />
        </Section>
      ) : null}
      {t.error ? (
        <Section title="Error">
          <pre className="json error-text" aria-label="error">
            {t.error}
          </pre>
        </Section>
      ) : null}
      {t.progress !== null && t.progress !== undefined ? (
        <Section title="Progress">
          <JsonBlock value={t.progress} label="progress" />
        </Section>
      ) : null}
      <Section title={`Attempts (${t.attempts.length})`}>
        {t.attempts.length === 0 ? (
          <p className="muted">No attempt has ended yet.</p>
        ) : (
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">#</th>
                  <th scope="col">outcome</th>
                  <th scope="col">started</th>
                  <th scope="col">took</th>
                  <th scope="col">worker</th>
                  <th scope="col">error</th>
                </tr>
              </thead>
              <tbody>
                {t.attempts.map((a) => (
                  <tr key={a.attempt}>
                    <td>{a.attempt}</td>
                    <td>{a.outcome}</td>
                    <td>{localTime(a.started_at)}</td>
                    <td>{a.started_at && a.finished_at ? duration(Date.parse(a.finished_at) - Date.parse(a.started_at)) : '–'}</td>
                    <td className="mono">{a.worker_id ?? '–'}</td>
                    <td className="error-text">{a.error ?? ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Section>
      <Section title={`Log (${t.logs.length})`}>
        {t.logs.length === 0 ? (
          <p className="muted">The handler wrote no log lines.</p>
        ) : (
          <ol className="log" aria-label="log lines">
            {t.logs.map((line, i) => (
              <li key={i}>
                <time dateTime={line.at ?? undefined}>{localTime(line.at)}</time> <span className="log-line">{line.message}</span>
              </li>
            ))}
          </ol>
        )}
      </Section>
    </>
  );
}
