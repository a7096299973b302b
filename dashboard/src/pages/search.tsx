/** Search across queues and states: id, type, queue, state, error text, time range, payload. */
import { useEffect, useState, type FormEvent } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, enc, request } from '../api';
import { BulkByFilter } from '../components/bulk';
import { Empty, ErrorBox, Loading, Pager, Section } from '../components/common';
import { TaskTable } from '../components/task-table';
import { n } from '../format';
import { navigate, setParams, useLocation } from '../router';
import type { SearchResult } from '../types';

/** Tasks a page shows; how long one page follows the cursor looking for them (ms). */
const PAGE = 50;
const FOLLOW_MS = 1000;

export const SEARCH_HELP = 'id:<id>  type:<type>  queue:<name>  state:<state>  err:<text>  after:<time>  before:<time>  payload.<field>:<value>  payload:<text>  or words';

export function SearchPage() {
  const { params } = useLocation();
  const q = params.get('q') ?? '';
  const cursor = params.get('cursor');
  const [draft, setDraft] = useState(q);
  // Back, Forward and the header's box change the URL: the field follows it.
  useEffect(() => setDraft(q), [q]);
  const before = Number(params.get('scanned') ?? '0') || 0;
  // Each call examines a bounded number of tasks; a sparse match would leave pages empty. One
  // page here follows the cursor until it holds 50 tasks, the scope ends, or about a second passed.
  const queryClient = useQueryClient();
  const key = ['/api/v1/tasks?q=', q, cursor];
  const result = useQuery<SearchResult, ApiError>({
    queryKey: key,
    enabled: q.trim() !== '',
    // Not redone on every live update: the Search button or an action refreshes it.
    meta: { live: false },
    queryFn: async ({ signal }) => {
      const started = Date.now();
      const page: SearchResult = { tasks: [], next_cursor: cursor, scanned: 0, total: 0 };
      do {
        const next = await request<SearchResult>(`/api/v1/tasks?q=${enc(q)}&limit=${PAGE - page.tasks.length}${page.next_cursor ? `&cursor=${enc(page.next_cursor)}` : ''}`, { signal });
        page.tasks.push(...next.tasks);
        page.scanned += next.scanned;
        page.total = next.total;
        page.next_cursor = next.next_cursor;
        // Shown as it grows: the first call's matches appear at once, the rest as they come.
        queryClient.setQueryData<SearchResult>(key, { ...page, tasks: [...page.tasks] });
      } while (page.tasks.length < PAGE && page.next_cursor !== null && Date.now() - started < FOLLOW_MS);
      return page;
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    // The same query again searches again (the store may have changed).
    if (draft === q && !cursor) void result.refetch();
    else navigate(`/search?q=${enc(draft)}`);
  };
  return (
    <>
      <h1>Search</h1>
      <form className="inline-form" onSubmit={submit} role="search">
        <label htmlFor="search-page-box">Query</label>
        <input id="search-page-box" className="mono wide" value={draft} onChange={(e) => setDraft(e.target.value)} placeholder="state:dead err:timeout" />
        <button type="submit">Search</button>
      </form>
      <p className="muted mono">{SEARCH_HELP}</p>
      {q.trim() === '' ? null : (
        <Section title="Results" actions={<BulkByFilter q={q} />}>
          <ErrorBox error={result.error} />
          {!result.data ? (
            result.isError ? null : <Loading what="results" />
          ) : (
            <>
              <p className="muted" role="status">
                {n(result.data.tasks.length)} shown; scanned {n(before + result.data.scanned)} of {n(result.data.total)} task(s)
                {result.isFetching ? ' — searching…' : result.data.next_cursor ? ' — more on the next page' : ' — all of them'}
              </p>
              {result.data.tasks.length === 0 ? (
                result.isFetching ? null : <Empty>Nothing matched on this page.</Empty>
              ) : (
                <TaskTable tasks={result.data.tasks} selectable showQueue />
              )}
              <Pager
                nextCursor={result.data.next_cursor}
                cursor={cursor}
                onPage={(next) => setParams({ cursor: next, scanned: next === null ? null : String(before + result.data.scanned) })}
              />
            </>
          )}
        </Section>
      )}
    </>
  );
}
