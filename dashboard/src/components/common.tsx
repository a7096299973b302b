/** Small pieces every page uses: state badges, errors, JSON, pagers, confirmable actions. */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { createContext, useContext, useState, type ReactNode } from 'react';
import { ApiError } from '../api';
import { json } from '../format';
import type { NodeState, WorkflowState } from '../types';

/** What the signed-in token may do: a read-only token sees no action at all. */
export const AccessContext = createContext<'admin' | 'read'>('read');
export const useCanAct = () => useContext(AccessContext) === 'admin';

export function StateBadge({ state }: { state: NodeState | WorkflowState | 'paused' | 'leader' }) {
  return <span className={`badge state-${state}`}>{state}</span>;
}

export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  const message = error instanceof ApiError ? `${error.message} (${error.code})` : error instanceof Error ? error.message : JSON.stringify(error);
  return (
    <p className="error" role="alert">
      {message}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return <p className="muted" aria-busy="true">Loading {what}…</p>;
}

/** A value as text in a <pre>: payloads, results and errors are never HTML. */
export function JsonBlock({ value, label }: { value: unknown; label: string }) {
  const text = typeof value === 'string' ? value : json(value);
  return (
    <pre className="json" aria-label={label} tabIndex={0}>
      {text === '' ? '–' : text}
    </pre>
  );
}

export function Section({ title, actions, children }: { title: string; actions?: ReactNode; children: ReactNode }) {
  return (
    <section className="card">
      <header className="card-head">
        <h2>{title}</h2>
        {actions ? <div className="actions">{actions}</div> : null}
      </header>
      {children}
    </section>
  );
}

/**
 * A button that calls the API (after a confirmation when `confirm` is given), shows the error if
 * the call fails, and refetches what is on screen when it succeeds. Hidden for a read-only token.
 */
export function ActionButton({
  label,
  run,
  confirm,
  danger,
  onDone,
  disabled,
  title,
}: {
  label: string;
  run: () => Promise<unknown>;
  confirm?: string;
  danger?: boolean;
  onDone?: (result: unknown) => void;
  disabled?: boolean;
  title?: string;
}) {
  const canAct = useCanAct();
  const queryClient = useQueryClient();
  const [error, setError] = useState<unknown>(null);
  const mutation = useMutation({
    mutationFn: run,
    onSuccess: async (result) => {
      setError(null);
      onDone?.(result);
      await queryClient.invalidateQueries();
    },
    onError: (e) => setError(e),
  });
  if (!canAct) return null;
  return (
    <span className="action">
      <button
        type="button"
        className={danger ? 'danger' : undefined}
        disabled={disabled || mutation.isPending}
        title={title}
        onClick={() => {
          if (confirm && !window.confirm(confirm)) return;
          mutation.mutate();
        }}
      >
        {mutation.isPending ? `${label}…` : label}
      </button>
      {error ? <ErrorBox error={error} /> : null}
    </span>
  );
}

export function Pager({ nextCursor, cursor, onPage }: { nextCursor: string | null; cursor: string | null; onPage: (cursor: string | null) => void }) {
  if (!nextCursor && !cursor) return null;
  return (
    <nav className="pager" aria-label="pages">
      <button type="button" disabled={!cursor} onClick={() => onPage(null)}>
        First page
      </button>
      <button type="button" disabled={!nextCursor} onClick={() => onPage(nextCursor)}>
        Next page
      </button>
    </nav>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="muted empty">{children}</p>;
}
