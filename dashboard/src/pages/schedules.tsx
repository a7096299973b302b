/** Schedules: the list, one schedule with its next fires and fire ledger, and the editor. */
import { useEffect, useState, type FormEvent } from 'react';
import { ApiError, enc, post, request, useApi } from '../api';
import { ActionButton, Empty, ErrorBox, Loading, Section, StateBadge, useCanAct } from '../components/common';
import { duration, localTime, relative, utcTime } from '../format';
import { Link, navigate } from '../router';
import type { Fire, Schedule } from '../types';

interface PreviewTime {
  utc: string;
  local: string;
}

/** The UTC offset at the end of a local time (`…+02:00`). */
const offsetOf = (local: string) => /([+-]\d\d:\d\d)$/.exec(local)?.[1] ?? '';

/** Next fire times, in the schedule's zone and UTC, with the DST changes between them marked. */
function FireTimes({ times, timezone }: { times: PreviewTime[]; timezone: string }) {
  const utc = timezone === 'UTC' || timezone === 'Etc/UTC';
  return (
    <table className="fire-times">
      <thead>
        <tr>
          <th scope="col">{timezone}</th>
          {utc ? null : <th scope="col">UTC</th>}
          <th scope="col">in</th>
        </tr>
      </thead>
      <tbody>
        {times.map((t, i) => {
          const dst = i > 0 && offsetOf(t.local) !== offsetOf(times[i - 1].local);
          return (
            <tr key={t.utc}>
              <td className="mono">
                {t.local.replace('T', ' ')}
                {dst ? (
                  <span className="badge state-paused" title="the zone's UTC offset changes before this fire (daylight saving time)">
                    DST {offsetOf(times[i - 1].local)} → {offsetOf(t.local)}
                  </span>
                ) : null}
              </td>
              {utc ? null : <td className="mono">{utcTime(t.utc)}</td>}
              <td>{relative(t.utc)}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function usePreview(cron: string, timezone: string, count: number) {
  const [result, setResult] = useState<{ times: PreviewTime[] } | { error: unknown } | null>(null);
  useEffect(() => {
    if (cron.trim() === '') {
      setResult(null);
      return;
    }
    const controller = new AbortController();
    const timer = setTimeout(() => {
      request<{ times: PreviewTime[] }>('/api/v1/schedules/preview', { method: 'POST', body: { cron, ...(timezone ? { timezone } : {}), count }, signal: controller.signal })
        .then(setResult)
        .catch((error: unknown) => {
          if (!controller.signal.aborted) setResult({ error });
        });
    }, 250);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [cron, timezone, count]);
  return result;
}

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

interface Draft {
  id: string;
  cron: string;
  timezone: string;
  type: string;
  queue: string;
  payload: string;
  overlap: string;
  catchUp: string;
  paused: boolean;
}

function draftOf(s: Schedule | undefined): Draft {
  return {
    id: s?.id ?? '',
    cron: s?.cron ?? '*/5 * * * *',
    timezone: s?.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone,
    type: s?.task.type ?? '',
    queue: s?.task.queue ?? '',
    payload: s ? JSON.stringify(s.task.payload ?? {}, null, 2) : '{}',
    overlap: s?.overlap ?? 'skip',
    catchUp: s?.catch_up.policy ?? 'latest',
    paused: s?.paused ?? false,
  };
}

/** The fields of a stored schedule the editor does not show, as an update body takes them. */
function keptFields(s: Schedule): { task: Record<string, unknown>; pauseNote?: string; jitter?: number; startAt?: string; endAt?: string } {
  const task: Record<string, unknown> = {};
  for (const key of ['maxRetries', 'timeout', 'retention', 'headers'] as const) {
    const value = (s.task as Record<string, unknown>)[key];
    if (value !== undefined && value !== null) task[key] = value;
  }
  return {
    task,
    ...(s.pause_note ? { pauseNote: s.pause_note } : {}),
    ...(s.jitter_ms ? { jitter: s.jitter_ms } : {}),
    ...(s.start_at ? { startAt: s.start_at } : {}),
    ...(s.end_at ? { endAt: s.end_at } : {}),
  };
}

export function ScheduleEditPage({ id }: { id: string | null }) {
  // The form starts from the stored definition as it is now (one fresh read, not a cached view),
  // and keeps what is typed: later refetches (live updates) do not reset it.
  const existing = useApi<Schedule>(id === null ? null : `/api/v1/schedules/${enc(id)}`, { staleTime: 0, refetchOnMount: 'always' });
  const [start, setStart] = useState<Schedule | null>(null);
  useEffect(() => {
    if (start === null && existing.data && !existing.isFetching) setStart(existing.data);
  }, [start, existing.data, existing.isFetching]);
  if (id !== null && start === null) return existing.error ? <ErrorBox error={existing.error} /> : <Loading what="the schedule" />;
  return <ScheduleForm schedule={start ?? undefined} />;
}

function ScheduleForm({ schedule }: { schedule: Schedule | undefined }) {
  const canAct = useCanAct();
  const [draft, setDraft] = useState<Draft>(() => draftOf(schedule));
  const [error, setError] = useState<unknown>(null);
  const [saving, setSaving] = useState(false);
  const preview = usePreview(draft.cron, draft.timezone, 5);
  const set = (field: keyof Draft) => (e: { target: { value: string } }) => setDraft({ ...draft, [field]: e.target.value });
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    let payload: unknown;
    try {
      payload = JSON.parse(draft.payload || 'null');
    } catch (e) {
      setError(new ApiError(400, 'TL_INVALID_REQUEST', `the payload is not JSON: ${(e as Error).message}`));
      return;
    }
    // An edit keeps what the form does not show (retries, timeout, jitter, window, start and end).
    const kept = schedule ? keptFields(schedule) : { task: {} };
    const body = {
      ...kept,
      cron: draft.cron,
      timezone: draft.timezone,
      task: { ...kept.task, type: draft.type, payload, ...(draft.queue ? { queue: draft.queue } : {}) },
      overlap: draft.overlap,
      catchUp: { policy: draft.catchUp, ...(schedule ? { window: schedule.catch_up.window_ms } : {}) },
      paused: draft.paused,
    };
    setSaving(true);
    try {
      if (schedule) await request(`/api/v1/schedules/${enc(schedule.id)}`, { method: 'PUT', body });
      else await post('/api/v1/schedules', { id: draft.id, ...body });
      navigate(`/schedules/${enc(schedule?.id ?? draft.id)}`);
    } catch (e) {
      setError(e);
    } finally {
      setSaving(false);
    }
  };
  if (!canAct) {
    return (
      <>
        <h1>{schedule ? `Edit ${schedule.id}` : 'New schedule'}</h1>
        <p className="why">Signed in with the read-only token: schedules can be looked at, not changed.</p>
        <Link to={schedule ? `/schedules/${enc(schedule.id)}` : '/schedules'}>Back</Link>
      </>
    );
  }
  return (
    <>
      <p className="crumbs">
        <Link to="/schedules">Schedules</Link> /
      </p>
      <h1>{schedule ? `Edit ${schedule.id}` : 'New schedule'}</h1>
      <form className="card form" onSubmit={(e) => void submit(e)}>
        <label htmlFor="s-id">id</label>
        <input id="s-id" value={draft.id} onChange={set('id')} disabled={schedule !== undefined} required />
        <label htmlFor="s-cron">cron</label>
        <input id="s-cron" className="mono" value={draft.cron} onChange={set('cron')} required aria-describedby="s-preview" />
        <label htmlFor="s-tz">time zone</label>
        <input id="s-tz" value={draft.timezone} onChange={set('timezone')} />
        <label htmlFor="s-type">task type</label>
        <input id="s-type" value={draft.type} onChange={set('type')} required />
        <label htmlFor="s-queue">queue</label>
        <input id="s-queue" value={draft.queue} onChange={set('queue')} placeholder="default" />
        <label htmlFor="s-payload">payload (JSON)</label>
        <textarea id="s-payload" className="mono" rows={5} value={draft.payload} onChange={set('payload')} />
        <label htmlFor="s-overlap">overlap</label>
        <select id="s-overlap" value={draft.overlap} onChange={set('overlap')}>
          {['skip', 'allow', 'bufferOne', 'cancelPrevious'].map((o) => (
            <option key={o}>{o}</option>
          ))}
        </select>
        <label htmlFor="s-catchup">catch-up</label>
        <select id="s-catchup" value={draft.catchUp} onChange={set('catchUp')}>
          {['skip', 'latest', 'all'].map((o) => (
            <option key={o}>{o}</option>
          ))}
        </select>
        <label className="check">
          <input type="checkbox" checked={draft.paused} onChange={(e) => setDraft({ ...draft, paused: e.target.checked })} /> paused
        </label>
        <div id="s-preview" className="preview" aria-live="polite">
          <h3>Next fires</h3>
          {preview && 'times' in preview ? <FireTimes times={preview.times} timezone={draft.timezone} /> : preview && 'error' in preview ? <ErrorBox error={preview.error} /> : null}
        </div>
        <ErrorBox error={error} />
        <div className="toolbar">
          <button type="submit" disabled={saving}>
            {saving ? 'Saving…' : schedule ? 'Save' : 'Create'}
          </button>
          <Link to={schedule ? `/schedules/${enc(schedule.id)}` : '/schedules'}>Cancel</Link>
        </div>
      </form>
    </>
  );
}
