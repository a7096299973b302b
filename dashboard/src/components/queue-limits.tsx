/**
 * A queue's controls — rate, concurrency, group concurrency, max length — as a small form: an
 * empty field removes its limit, only what was changed is sent (a limit set elsewhere meanwhile
 * is kept), and the server's refusal shows beside it. A read-only token sees the form disabled.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { enc, request } from '../api';
import { limitsText } from '../format';
import type { QueueLimits } from '../types';
import { ErrorBox, Section, useCanAct } from './common';

type Unit = 'ms' | 's' | 'min' | 'h';
const UNITS: [Unit, number][] = [
  ['ms', 1],
  ['s', 1000],
  ['min', 60_000],
  ['h', 3_600_000],
];
const unitSize = (unit: Unit) => UNITS.find(([u]) => u === unit)![1];

interface Draft {
  rateLimit: string;
  rateEvery: string;
  rateUnit: Unit;
  concurrency: string;
  groupConcurrency: string;
  maxLength: string;
}

/** The body PATCH /api/v1/queues/{q}/limits takes (a limit left out keeps its value). */
interface LimitsBody {
  rate?: { limit: number; intervalMs: number } | null;
  concurrency?: number | null;
  groupConcurrency?: number | null;
  maxLength?: number | null;
}

const text = (value: number | null) => (value === null ? '' : String(value));

function draftOf(limits: QueueLimits): Draft {
  const every = limits.rate?.interval_ms ?? 1000;
  // The largest unit the interval is a whole number of: 60000 ms reads "1 min".
  const [unit, size] = [...UNITS].reverse().find(([, s]) => every % s === 0) ?? UNITS[0];
  return {
    rateLimit: limits.rate ? String(limits.rate.limit) : '',
    rateEvery: limits.rate ? String(every / size) : '',
    rateUnit: limits.rate ? unit : 's',
    concurrency: text(limits.concurrency),
    groupConcurrency: text(limits.group_concurrency),
    maxLength: text(limits.max_length),
  };
}

const sameDraft = (a: Draft, b: Draft) => (Object.keys(a) as (keyof Draft)[]).every((key) => a[key].trim() === b[key].trim());
const sameLimits = (a: QueueLimits, b: QueueLimits) =>
  a.rate?.limit === b.rate?.limit && a.rate?.interval_ms === b.rate?.interval_ms && a.concurrency === b.concurrency && a.group_concurrency === b.group_concurrency && a.max_length === b.max_length;

/** A whole number as typed ("100,000" and "100 000" too); null when empty; NaN when it is not one. */
function count(value: string): number | null {
  const plain = value.replace(/[\s,_]/g, '');
  if (plain === '') return null;
  return /^\d+$/.test(plain) ? Number(plain) : NaN;
}

/** The interval in milliseconds ("1.5" s is 1500); null when empty; NaN unless a whole number of ms. */
function milliseconds(value: string, unit: Unit): number | null {
  const plain = value.replace(/[\s,_]/g, '');
  if (plain === '') return null;
  if (!/^\d+(\.\d+)?$/.test(plain)) return NaN;
  const ms = Number(plain) * unitSize(unit);
  const whole = Math.round(ms);
  return Math.abs(whole - ms) < 1e-6 ? whole : NaN;
}

/** What the draft asks for, the changes from `base` as a body, and what is wrong with it. */
function readDraft(draft: Draft, base: QueueLimits): { body: LimitsBody; wrong: string[] } {
  const wrong: string[] = [];
  const body: LimitsBody = {};
  const limit = count(draft.rateLimit);
  const every = milliseconds(draft.rateEvery, draft.rateUnit);
  if (Number.isNaN(limit)) wrong.push('rate: the number of tasks is a whole number');
  if (Number.isNaN(every)) wrong.push('rate: the interval is a whole number of milliseconds');
  if (!Number.isNaN(limit) && !Number.isNaN(every)) {
    if ((limit === null) !== (every === null)) wrong.push('rate: give both a number of tasks and an interval, or neither for no rate limit');
    else {
      const rate = limit === null || every === null ? null : { limit, intervalMs: every };
      const was = base.rate && { limit: base.rate.limit, intervalMs: base.rate.interval_ms };
      if (JSON.stringify(rate) !== JSON.stringify(was)) body.rate = rate;
    }
  }
  const counts: [keyof Draft & keyof LimitsBody, string, number | null][] = [
    ['concurrency', 'concurrency', base.concurrency],
    ['groupConcurrency', 'group concurrency', base.group_concurrency],
    ['maxLength', 'max length', base.max_length],
  ];
  for (const [field, label, was] of counts) {
    const value = count(draft[field]);
    if (Number.isNaN(value)) wrong.push(`${label}: a whole number of tasks, or empty for no limit`);
    else if (value !== was) body[field] = value;
  }
  return { body, wrong };
}

export function QueueLimitsSection({ queue, limits }: { queue: string; limits: QueueLimits }) {
  const canAct = useCanAct();
  const queryClient = useQueryClient();
  // What the draft started from (the changes sent are its differences from it), and the store's
  // limits as last read: limits changed elsewhere show here at once, unless something is typed.
  const [base, setBase] = useState(limits);
  const [seen, setSeen] = useState(limits);
  const [draft, setDraft] = useState(() => draftOf(limits));
  const [saved, setSaved] = useState<QueueLimits | null>(null);
  const dirty = !sameDraft(draft, draftOf(base));
  if (!sameLimits(limits, seen)) {
    setSeen(limits);
    if (!dirty) {
      setBase(limits);
      setDraft(draftOf(limits));
    }
  }
  const mutation = useMutation({
    mutationFn: (body: LimitsBody) => request<QueueLimits>(`/api/v1/queues/${enc(queue)}/limits`, { method: 'PATCH', body }),
    onSuccess: async (now) => {
      setBase(now);
      setDraft(draftOf(now));
      setSaved(now);
      await queryClient.invalidateQueries();
    },
  });
  const { body, wrong } = readDraft(draft, base);
  const changed = Object.keys(body).length > 0;
  const edit = (field: keyof Draft) => (event: { target: { value: string } }) => {
    setDraft({ ...draft, [field]: event.target.value });
    setSaved(null);
    mutation.reset();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!canAct || wrong.length > 0 || !changed || mutation.isPending) return;
    mutation.mutate(body);
  };
  const field = (id: keyof Draft, label: string, hint: string) => (
    <>
      <label htmlFor={`limit-${id}`}>{label}</label>
      <span className="controls">
        <input id={`limit-${id}`} inputMode="numeric" autoComplete="off" placeholder="none" value={draft[id]} onChange={edit(id)} aria-describedby={`limit-${id}-hint`} />
      </span>
      <span id={`limit-${id}-hint`} className="hint">
        {hint}
      </span>
    </>
  );
  return (
    <Section title="Limits" actions={<span className="muted">{limitsText(limits)}</span>}>
      <form className="limits" onSubmit={submit} aria-label={`limits of ${queue}`}>
        <fieldset disabled={!canAct}>
          <legend className="visually-hidden">limits of {queue}</legend>
          <label htmlFor="limit-rateLimit">rate</label>
          <span className="controls">
            <input id="limit-rateLimit" inputMode="numeric" autoComplete="off" placeholder="none" value={draft.rateLimit} onChange={edit('rateLimit')} aria-describedby="limit-rate-hint" />
            <label htmlFor="limit-rateEvery">tasks per</label>
            <input id="limit-rateEvery" inputMode="decimal" autoComplete="off" placeholder="none" value={draft.rateEvery} onChange={edit('rateEvery')} aria-describedby="limit-rate-hint" />
            <select aria-label="interval unit" value={draft.rateUnit} onChange={edit('rateUnit')}>
              {UNITS.map(([unit]) => (
                <option key={unit}>{unit}</option>
              ))}
            </select>
          </span>
          <span id="limit-rate-hint" className="hint">
            at most this many tasks start in any such interval, across all workers
          </span>
          {field('concurrency', 'concurrency', 'at most this many running at once')}
          {field('groupConcurrency', 'group concurrency', 'at most this many running at once per enqueue group')}
          {field('maxLength', 'max length', 'at most this many waiting (queued, scheduled, retrying); an enqueue past it is refused (429)')}
        </fieldset>
        {canAct ? (
          <>
            <p className="muted">An empty field removes its limit.</p>
            {wrong.length > 0 ? (
              <p className="error" role="alert">
                {wrong.join('\n')}
              </p>
            ) : null}
            <ErrorBox error={mutation.error} />
            <div className="toolbar">
              <button type="submit" disabled={wrong.length > 0 || !changed || mutation.isPending}>
                {mutation.isPending ? 'Saving limits…' : 'Save limits'}
              </button>
              {dirty ? (
                <button
                  type="button"
                  onClick={() => {
                    setBase(limits);
                    setDraft(draftOf(limits));
                    mutation.reset();
                  }}
                >
                  Undo changes
                </button>
              ) : null}
              <span role="status" className="muted">
                {saved ? `Saved: ${limitsText(saved)}` : ''}
              </span>
            </div>
          </>
        ) : (
          <p className="muted">This token is read-only: the admin token can change the limits.</p>
        )}
      </form>
    </Section>
  );
}
