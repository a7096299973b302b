/** The shell: sign-in when the server asks for a token, the navigation, the page for the URL. */
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { ApiError, getToken, onUnauthorized, request, setToken } from './api';
import { AccessContext, ErrorBox } from './components/common';
import { GO_KEYS, useKeyboard } from './keyboard';
import { useLiveUpdates } from './live';
import { Link, match, navigate, useLocation } from './router';
import type { ApiIndex } from './types';
import { AuditPage } from './pages/audit';
import { DeadPage } from './pages/dead';
import { OverviewPage } from './pages/overview';
import { QueuePage, QueuesPage } from './pages/queues';
import { ScheduleEditPage } from './pages/schedule-edit';
import { SchedulePage, SchedulesPage } from './pages/schedules';
import { SearchPage } from './pages/search';
import { TaskPage } from './pages/task';
import { WorkersPage } from './pages/workers';
import { WorkflowPage, WorkflowsPage } from './pages/workflows';

const NAV: [string, string][] = [
  ['/', 'Overview'],
  ['/queues', 'Queues'],
  ['/dead', 'Dead letter'],
  ['/schedules', 'Schedules'],
  ['/workflows', 'Workflows'],
  ['/workers', 'Workers'],
  ['/audit', 'Audit'],
];

function Page({ path }: { path: string }) {
  let params: Record<string, string> | null;
  if (path === '/' || path === '') return <OverviewPage />;
  if (path === '/queues') return <QueuesPage />;
  if ((params = match('/queues/:queue', path))) return <QueuePage queue={params.queue} />;
  if ((params = match('/tasks/:id', path))) return <TaskPage id={params.id} />;
  if (path === '/dead') return <DeadPage />;
  if (path === '/schedules') return <SchedulesPage />;
  if (path === '/schedules/new') return <ScheduleEditPage id={null} />;
  if ((params = match('/schedules/:id/edit', path))) return <ScheduleEditPage id={params.id} />;
  if ((params = match('/schedules/:id', path))) return <SchedulePage id={params.id} />;
  if (path === '/workflows') return <WorkflowsPage />;
  if ((params = match('/workflows/:id', path))) return <WorkflowPage id={params.id} />;
  if (path === '/workers') return <WorkersPage />;
  if (path === '/search') return <SearchPage />;
  if (path === '/audit') return <AuditPage />;
  return (
    <div className="card">
      <h1>Not found</h1>
      <p>
        No page at <code>{path}</code>. <Link to="/">Back to the overview</Link>
      </p>
    </div>
  );
}

/** The tab's title for a path: the page, and the queue, task, schedule or workflow it shows. */
function titleOf(path: string): string {
  const [, first = '', second] = path.split('/');
  const page = NAV.find(([to]) => to === `/${first}`)?.[1] ?? (first === 'tasks' ? 'Task' : first === 'search' ? 'Search' : 'Overview');
  if (!second) return page;
  try {
    return `${decodeURIComponent(second)} · ${page}`;
  } catch {
    return page;
  }
}

function SignIn({ failed }: { failed: boolean }) {
  const queryClient = useQueryClient();
  const [value, setValue] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setToken(value.trim());
    void queryClient.resetQueries();
  };
  return (
    <main className="signin">
      <form className="card" onSubmit={submit}>
        <h1>Sign in to Taskline</h1>
        <p>This task center asks for a token: the admin token, or the read-only token to look without changing anything.</p>
        <label htmlFor="token">Token</label>
        <input id="token" type="password" autoComplete="current-password" value={value} onChange={(e) => setValue(e.target.value)} autoFocus />
        {failed ? <p className="error" role="alert">That token was not accepted.</p> : null}
        <button type="submit" disabled={value.trim() === ''}>
          Sign in
        </button>
        <p className="muted">The token stays in this tab (session storage) and is sent as a header, never in a URL.</p>
      </form>
    </main>
  );
}

function Help({ close }: { close: () => void }) {
  // Focus goes back where it was when the dialog closes.
  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    return () => before?.focus?.();
  }, []);
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') close();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [close]);
  return (
    <div className="overlay" role="dialog" aria-modal="true" aria-labelledby="help-title" onClick={close}>
      <div className="card help" onClick={(e) => e.stopPropagation()}>
        <h2 id="help-title">Keys</h2>
        <dl>
          <dt>/</dt>
          <dd>search</dd>
          <dt>j / k</dt>
          <dd>next / previous row</dd>
          <dt>Enter</dt>
          <dd>open the row</dd>
          {GO_KEYS.map(([key, , label]) => (
            <div key={key}>
              <dt>g {key}</dt>
              <dd>{label}</dd>
            </div>
          ))}
          <dt>?</dt>
          <dd>this help</dd>
        </dl>
        <button type="button" onClick={close} autoFocus>
          Close
        </button>
      </div>
    </div>
  );
}

export function App() {
  const queryClient = useQueryClient();
  const { path, params } = useLocation();
  const [help, setHelp] = useState(false);
  const toggleHelp = useCallback(() => setHelp((open) => !open), []);
  const closeHelp = useCallback(() => setHelp(false), []);
  useKeyboard(toggleHelp);
  // Retried (with backoff) unless the answer is a refusal: a server that is away for a moment
  // must not leave the app on an error page once it is back.
  const index = useQuery<ApiIndex, ApiError>({
    queryKey: ['/api/v1'],
    queryFn: () => request<ApiIndex>('/api/v1'),
    retry: (count, error) => error.status !== 401 && error.status !== 403 && count < 1000,
    retryDelay: (count) => Math.min(10_000, 500 * 2 ** count),
    staleTime: Infinity,
  });
  const signedIn = index.data !== undefined && index.error?.status !== 401;
  const live = useLiveUpdates(queryClient, signedIn);
  useEffect(() => onUnauthorized(() => void queryClient.invalidateQueries({ queryKey: ['/api/v1'] })), [queryClient]);
  const [search, setSearch] = useState(path === '/search' ? (params.get('q') ?? '') : '');
  useEffect(() => {
    document.title = `${titleOf(path)} · Taskline`;
  }, [path]);
  const urlQuery = path === '/search' ? (params.get('q') ?? '') : null;
  useEffect(() => {
    if (urlQuery !== null) setSearch(urlQuery);
  }, [urlQuery]);

  if (index.error?.status === 401) return <SignIn failed={getToken() !== null} />;
  if (index.isPending && index.failureCount === 0) return <p className="muted">Loading…</p>;
  if (!index.data) {
    return (
      <main className="signin">
        <ErrorBox error={index.error ?? index.failureReason} />
        <p className="muted">Trying again…</p>
      </main>
    );
  }
  const access = index.data.access;
  const current = (to: string) => (to === '/' ? path === '/' : path === to || path.startsWith(`${to}/`));
  return (
    <AccessContext.Provider value={access}>
      <a className="skip" href="#main">
        Skip to the page
      </a>
      <header className="top">
        <Link to="/" className="brand">
          Taskline
        </Link>
        <nav aria-label="pages">
          {NAV.map(([to, label]) => (
            <Link key={to} to={to} aria-current={current(to) ? 'page' : undefined}>
              {label}
            </Link>
          ))}
        </nav>
        <form
          role="search"
          className="search"
          onSubmit={(event) => {
            event.preventDefault();
            navigate(`/search?q=${encodeURIComponent(search)}`);
          }}
        >
          <label htmlFor="search-box" className="visually-hidden">
            Search tasks
          </label>
          <input id="search-box" type="search" placeholder="Search tasks  ( / )" value={search} onChange={(e) => setSearch(e.target.value)} />
        </form>
        <span className={`live live-${live}`} title="live updates from the task center">
          {live}
        </span>
        {access === 'read' ? <span className="badge">read-only</span> : null}
        {index.data.auth ? (
          <button
            type="button"
            className="link"
            onClick={() => {
              setToken(null);
              void queryClient.resetQueries();
            }}
          >
            Sign out
          </button>
        ) : null}
        <button type="button" className="link" onClick={toggleHelp} aria-label="keyboard help">
          ?
        </button>
      </header>
      <main id="main">
        <Page path={path} />
      </main>
      {help ? <Help close={closeHelp} /> : null}
    </AccessContext.Provider>
  );
}
