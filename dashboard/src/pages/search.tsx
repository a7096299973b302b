/** Search across queues and states: id, type, queue, state, error text, time range, payload. */
import { useEffect, useState, type FormEvent } from 'react';
import { enc, useApi } from '../api';
import { BulkByFilter } from '../components/bulk';
import { Empty, ErrorBox, Loading, Pager, Section } from '../components/common';
import { TaskTable } from '../components/task-table';
import { n } from '../format';
import { navigate, setParams, useLocation } from '../router';
import type { SearchResult } from '../types';

export const SEARCH_HELP = 'id:<id>  type:<type>  queue:<name>  state:<state>  err:<text>  after:<time>  before:<time>  payload.<field>:<value>  or words';

export function SearchPage() {
  const { params } = useLocation();
  const q = params.get('q') ?? '';
  const cursor = params.get('cursor');
  const [draft, setDraft] = useState(q);
  // Back, Forward and the header's box change the URL: the field follows it.
  useEffect(() => setDraft(q), [q]);
  const result = useApi<SearchResult>(q.trim() === '' ? null : `/api/v1/tasks?q=${enc(q)}&limit=50${cursor ? `&cursor=${enc(cursor)}` : ''}`);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    navigate(`/search?q=${enc(draft)}`);
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
                {n(result.data.tasks.length)} shown; scanned {n(result.data.scanned)} of {n(result.data.total)} task(s)
                {result.data.next_cursor ? ' — more on the next page' : ''}
              </p>
              {result.data.tasks.length === 0 ? <Empty>Nothing matched on this page.</Empty> : <TaskTable tasks={result.data.tasks} selectable showQueue />}
              <Pager nextCursor={result.data.next_cursor} cursor={cursor} onPage={(next) => setParams({ cursor: next })} />
            </>
          )}
        </Section>
      )}
    </>
  );
}
