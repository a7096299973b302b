/** Schedules: the list, and one schedule with its next fires and fire ledger (the editor: schedule-edit.tsx). */
import { useState } from 'react';
import { enc, post, request, useApi } from '../api';
import { ActionButton, Empty, ErrorBox, Loading, Section, StateBadge, useCanAct } from '../components/common';
import { FireTimes, usePreview } from '../components/fire-times';
import { duration, localTime, relative, utcTime } from '../format';
import { Link, navigate } from '../router';
import type { Fire, Schedule } from '../types';

export function SchedulesPage() {
  const schedules = useApi<{ schedules: Schedule[] }>('/api/v1/schedules');
  const canAct = useCanAct();
  return (
    <>
      <h1>Schedules</h1>
      {canAct ? (
        <p>
          <Link to="/schedules/new" className="button">
            New schedule
          </Link>
        </p>
      ) : null}
      <ErrorBox error={schedules.error} />
      {!schedules.data ? (
        <Loading what="schedules" />
      ) : schedules.data.schedules.length === 0 ? (
        <Empty>No schedules yet.</Empty>
      ) : (
        <div className="table-wrap card">
          <table>
            <thead>
              <tr>
                <th scope="col">id</th>
                <th scope="col">cron</th>
                <th scope="col">zone</th>
                <th scope="col">task</th>
                <th scope="col">next fire (local / UTC)</th>
                <th scope="col">last fire</th>
                <th scope="col">state</th>
              </tr>
            </thead>
            <tbody>
              {schedules.data.schedules.map((s) => (
                <tr key={s.id} data-row tabIndex={-1}>
                  <th scope="row">
                    <Link to={`/schedules/${enc(s.id)}`}>{s.id}</Link>
                  </th>
                  <td className="mono">{s.cron}</td>
                  <td>{s.timezone}</td>
                  <td>{s.task.type}</td>
                  <td>
                    {s.next_run_at ? (
                      <>
                        {localTime(s.next_run_at)} <span className="muted">/ {utcTime(s.next_run_at)}</span>
                      </>
                    ) : (
                      '–'
                    )}
                  </td>
                  <td>
                    {s.last_fire_at ? `${relative(s.last_fire_at)}: ` : ''}
                    {s.last_outcome ?? '–'}
                  </td>
                  <td>
                    {s.paused ? <span className="badge state-paused">paused</span> : <span className="muted">active</span>} <PauseToggle schedule={s} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

function PauseToggle({ schedule }: { schedule: Schedule }) {
  const base = `/api/v1/schedules/${enc(schedule.id)}`;
  return schedule.paused ? <ActionButton label="Resume" run={() => post(`${base}/resume`)} /> : <ActionButton label="Pause" run={() => post(`${base}/pause`)} />;
}

export function SchedulePage({ id }: { id: string }) {
  const base = `/api/v1/schedules/${enc(id)}`;
  const schedule = useApi<Schedule>(base);
  const fires = useApi<{ fires: Fire[] }>(`${base}/fires?limit=100`);
  const s = schedule.data;
  const preview = usePreview(s?.cron ?? '', s?.timezone ?? '', 8);
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const canAct = useCanAct();
  if (schedule.error) {
    return (
      <>
        <h1>{id}</h1>
        <ErrorBox error={schedule.error} />
      </>
    );
  }
  if (!s) return <Loading what="the schedule" />;
  return (
    <>
      <p className="crumbs">
        <Link to="/schedules">Schedules</Link> /
      </p>
      <h1>
        {s.id} {s.paused ? <span className="badge state-paused">paused</span> : null}
      </h1>
      <div className="toolbar">
        <PauseToggle schedule={s} />
        <ActionButton label="Trigger now" run={() => post(`${base}/trigger`)} />
        {canAct ? (
          <Link to={`/schedules/${enc(s.id)}/edit`} className="button">
            Edit
          </Link>
        ) : null}
        <ActionButton label="Delete" danger confirm={`Delete schedule ${s.id}? Its fire history goes with it.`} run={() => request(base, { method: 'DELETE' })} onDone={() => navigate('/schedules')} />
      </div>
      <Section title="Definition">
        <dl className="fields">
          <dt>cron</dt>
          <dd className="mono">{s.cron}</dd>
          <dt>time zone</dt>
          <dd>{s.timezone}</dd>
          <dt>task</dt>
          <dd>
            {s.task.type} on {s.task.queue ?? 'default'}
          </dd>
          <dt>overlap</dt>
          <dd>{s.overlap}</dd>
          <dt>catch-up</dt>
          <dd>
            {s.catch_up.policy}, window {duration(s.catch_up.window_ms)}
          </dd>
          {s.jitter_ms ? (
            <>
              <dt>jitter</dt>
              <dd>{duration(s.jitter_ms)}</dd>
            </>
          ) : null}
          {s.pause_note ? (
            <>
              <dt>pause note</dt>
              <dd>{s.pause_note}</dd>
            </>
          ) : null}
          <dt>source</dt>
          <dd>{s.source}</dd>
          <dt>last fire</dt>
          <dd>
            {localTime(s.last_fire_at)} {s.last_outcome ? `(${s.last_outcome})` : ''}
          </dd>
        </dl>
        <h3>Task payload</h3>
        <pre className="json">{JSON.stringify(s.task.payload ?? null, null, 2)}</pre>
      </Section>
      <Section title="Next fires">
        {preview && 'times' in preview ? <FireTimes times={preview.times} timezone={s.timezone} /> : preview && 'error' in preview ? <ErrorBox error={preview.error} /> : <Loading what="fire times" />}
      </Section>
      {canAct ? (
        <Section title="Backfill">
          <form
            className="inline-form"
            onSubmit={(e) => e.preventDefault()}
          >
            <label>
              from <input type="datetime-local" step="1" value={from} onChange={(e) => setFrom(e.target.value)} />
            </label>
            <label>
              to <input type="datetime-local" step="1" value={to} onChange={(e) => setTo(e.target.value)} />
            </label>
            <ActionButton
              label="Backfill"
              disabled={!from || !to}
              confirm="Fire every nominal time in this range that has not fired?"
              run={() => post(`${base}/backfill`, { from: new Date(from).toISOString(), to: new Date(to).toISOString() })}
            />
          </form>
          <p className="muted">Times are in this browser's zone ({Intl.DateTimeFormat().resolvedOptions().timeZone}).</p>
        </Section>
      ) : null}
      <Section title="Fire ledger">
        <ErrorBox error={fires.error} />
        {!fires.data ? (
          <Loading what="fires" />
        ) : fires.data.fires.length === 0 ? (
          <Empty>No fires yet.</Empty>
        ) : (
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">nominal</th>
                  <th scope="col">enqueued</th>
                  <th scope="col" className="num">
                    lag
                  </th>
                  <th scope="col">outcome</th>
                  <th scope="col">task</th>
                </tr>
              </thead>
              <tbody>
                {fires.data.fires.map((f) => (
                  <tr key={f.fire_id} data-row tabIndex={-1}>
                    <td title={f.nominal_at ?? ''}>{localTime(f.nominal_at)}</td>
                    <td title={f.enqueued_at ?? ''}>{localTime(f.enqueued_at)}</td>
                    <td className={`num ${f.lag_ms !== null && f.lag_ms > 60_000 ? 'late' : ''}`}>{f.lag_ms === null ? '–' : duration(f.lag_ms)}</td>
                    <td>{f.outcome}</td>
                    <td>
                      {f.task_id ? (
                        <>
                          <Link to={`/tasks/${enc(f.task_id)}`} className="mono">
                            {f.task_id}
                          </Link>{' '}
                          {f.task_state ? <StateBadge state={f.task_state} /> : <span className="muted">gone</span>}
                        </>
                      ) : (
                        '–'
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Section>
    </>
  );
}
