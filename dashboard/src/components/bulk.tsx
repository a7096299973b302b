/**
 * Bulk actions by filter: every task a search query matches, not only the page shown. A dry run
 * counts first; the server then works in batches, and the job's progress shows until it ends
 * (it can be cancelled midway).
 */
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { OPERATOR_ACTIONS, acceptedStatesText, type OperatorAction } from '../../../src/core/transitions';
import { enc, post, useApi } from '../api';
import { n } from '../format';
import { ErrorBox, useCanAct } from './common';
import { LABELS } from './task-table';

interface BulkJob {
  id: string;
  action: OperatorAction;
  q: string;
  state: 'running' | 'done' | 'cancelled' | 'failed';
  matched: number;
  done: number;
  failed: number;
  error: string | null;
}


export function BulkByFilter({ q }: { q: string }) {
  const canAct = useCanAct();
  const queryClient = useQueryClient();
  const [planned, setPlanned] = useState<{ action: OperatorAction; count: number } | null>(null);
  const [jobId, setJobId] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const job = useApi<{ job: BulkJob }>(jobId === null ? null : `/api/v1/bulk/${enc(jobId)}`, {
    refetchInterval: (query) => (query.state.data?.job.state === 'running' ? 500 : false),
  });
  const finished = job.data && job.data.job.state !== 'running';
  useEffect(() => {
    if (finished) void queryClient.invalidateQueries();
  }, [finished, queryClient]);
  useEffect(() => {
    setPlanned(null);
    setError(null);
  }, [q]);
  if (!canAct) return null;

  const dryRun = async (action: OperatorAction) => {
    setBusy(true);
    setError(null);
    try {
      const { count } = await post<{ count: number }>('/api/v1/bulk', { action, q, dryRun: true });
      setPlanned({ action, count });
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const start = async () => {
    if (!planned) return;
    setBusy(true);
    try {
      const { job: started } = await post<{ job: BulkJob }>('/api/v1/bulk', { action: planned.action, q });
      setJobId(started.id);
      setPlanned(null);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const j = job.data?.job;
  return (
    <div className="bulk" aria-label="act on every match">
      <span>Every match:</span>
      {OPERATOR_ACTIONS.map((action) => (
        <button key={action} type="button" disabled={busy || j?.state === 'running'} onClick={() => void dryRun(action)} title={`${LABELS[action]} every matching task in a state it takes (${acceptedStatesText(action)})`}>
          {LABELS[action]} all…
        </button>
      ))}
      {planned ? (
        <p role="status" className="bulk-plan">
          {planned.count === 0 ? (
            <>No matching task is in a state {LABELS[planned.action].toLowerCase()} takes.</>
          ) : (
            <>
              {LABELS[planned.action]} {n(planned.count)} task(s)?{' '}
              <button type="button" className={planned.action === 'delete' ? 'danger' : undefined} disabled={busy} onClick={() => void start()}>
                {LABELS[planned.action]} {n(planned.count)}
              </button>{' '}
              <button type="button" onClick={() => setPlanned(null)}>
                Not now
              </button>
            </>
          )}
        </p>
      ) : null}
      {j ? (
        <p role="status" className="bulk-job">
          {LABELS[j.action]}: {n(j.done)} of {n(j.matched)} done{j.failed ? `, ${n(j.failed)} no longer in a state it takes` : ''} — {j.state}
          {j.error ? ` (${j.error})` : ''}{' '}
          <progress max={Math.max(1, j.matched)} value={j.done + j.failed} aria-label="bulk progress" />{' '}
          {j.state === 'running' ? (
            <button type="button" onClick={() => void post(`/api/v1/bulk/${enc(j.id)}/cancel`).then(() => job.refetch())}>
              Stop
            </button>
          ) : null}
        </p>
      ) : null}
      <ErrorBox error={error} />
    </div>
  );
}
