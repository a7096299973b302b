/** The audit log: every call that changed something — when, which token, what, and the answer. */
import { enc, useApi } from '../api';
import { Empty, ErrorBox, Loading, Pager } from '../components/common';
import { localTime } from '../format';
import { setParams, useLocation } from '../router';

interface AuditEntry {
  at: string;
  token: string;
  method: string;
  route: string;
  target: string | null;
  status: number;
  code: string | null;
}

export function AuditPage() {
  const { params } = useLocation();
  const cursor = params.get('cursor');
  const audit = useApi<{ entries: AuditEntry[]; next_cursor: string | null }>(`/api/v1/audit?limit=100${cursor ? `&cursor=${enc(cursor)}` : ''}`);
  return (
    <>
      <h1>Audit log</h1>
      <ErrorBox error={audit.error} />
      {!audit.data ? (
        audit.isError ? null : <Loading what="the audit log" />
      ) : audit.data.entries.length === 0 ? (
        <Empty>Nothing was changed through the API yet.</Empty>
      ) : (
        <div className="table-wrap card">
          <table>
            <thead>
              <tr>
                <th scope="col">when</th>
                <th scope="col">token</th>
                <th scope="col">call</th>
                <th scope="col">target</th>
                <th scope="col">answer</th>
              </tr>
            </thead>
            <tbody>
              {audit.data.entries.map((e, i) => (
                <tr key={`${e.at}-${i}`} data-row tabIndex={-1}>
                  <td title={e.at}>{localTime(e.at)}</td>
                  <td>{e.token}</td>
                  <td className="mono">
                    {e.method} {e.route}
                  </td>
                  <td className="mono">{e.target ?? '–'}</td>
                  <td>
                    {e.status}
                    {e.code ? ` ${e.code}` : ''}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager nextCursor={audit.data.next_cursor} cursor={cursor} onPage={(next) => setParams({ cursor: next })} />
        </div>
      )}
    </>
  );
}
