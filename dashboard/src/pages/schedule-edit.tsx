/** Creating and editing a schedule, with a live preview of its next fires. */
import { useEffect, useState, type FormEvent } from 'react';
import { ApiError, enc, post, request, useApi } from '../api';
import { ErrorBox, Loading, useCanAct } from '../components/common';
import { FireTimes, usePreview } from '../components/fire-times';
import { Link, navigate } from '../router';
import type { Schedule } from '../types';

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
