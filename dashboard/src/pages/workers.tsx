/** Workers (their heartbeats) and the scheduler instances with the leader. */
import { enc, useApi } from '../api';
import { Empty, ErrorBox, Loading, Section } from '../components/common';
import { duration, localTime, relative } from '../format';
import { Link } from '../router';
import type { Schedulers, Worker } from '../types';

export function WorkersPage() {
  // Heartbeats announce no event: this page reads them again every 10 s (and the ages with them).
  const workers = useApi<{ workers: Worker[] }>('/api/v1/workers', { refetchInterval: 10_000 });
  const schedulers = useApi<Schedulers>('/api/v1/schedulers', { refetchInterval: 10_000 });
  const now = Date.now();
  return (
    <>
      <h1>Workers</h1>
      <ErrorBox error={workers.error} />
      <Section title="Live workers">
        {!workers.data ? (
          <Loading what="workers" />
        ) : workers.data.workers.length === 0 ? (
          <Empty>No live worker: start one with `taskline worker`.</Empty>
        ) : (
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">host</th>
                  <th scope="col" className="num">
                    pid
                  </th>
                  <th scope="col">queues</th>
                  <th scope="col" className="num">
                    concurrency
                  </th>
                  <th scope="col">running</th>
                  <th scope="col">uptime</th>
                  <th scope="col">last heartbeat</th>
                  <th scope="col">version</th>
                </tr>
              </thead>
              <tbody>
                {workers.data.workers.map((w) => (
                  <tr key={w.id} title={w.id}>
                    <th scope="row">{w.host}</th>
                    <td className="num">{w.pid}</td>
                    <td>
                      {w.queues.map((q, i) => (
                        <span key={q}>
                          {i > 0 ? ', ' : ''}
                          <Link to={`/queues/${enc(q)}`}>{q}</Link>
                        </span>
                      ))}
                    </td>
                    <td className="num">{w.concurrency}</td>
                    <td>
                      {w.running.length}
                      {w.running.slice(0, 3).map((id) => (
                        <span key={id}>
                          {' '}
                          <Link to={`/tasks/${enc(id)}`} className="mono">
                            {id.slice(0, 8)}
                          </Link>
                        </span>
                      ))}
                      {w.running.length > 3 ? ' …' : ''}
                    </td>
                    <td>{w.started_at ? duration(now - Date.parse(w.started_at)) : '–'}</td>
                    <td title={localTime(w.last_heartbeat_at)}>{relative(w.last_heartbeat_at, now)}</td>
                    <td>{w.version}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Section>
      <Section title="Scheduler instances">
        <ErrorBox error={schedulers.error} />
        {!schedulers.data ? (
          <Loading what="schedulers" />
        ) : schedulers.data.schedulers.length === 0 ? (
          <Empty>No scheduler is running: schedules do not fire.</Empty>
        ) : (
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">instance</th>
                  <th scope="col">host</th>
                  <th scope="col">role</th>
                  <th scope="col">last tick</th>
                  <th scope="col" className="num">
                    fires last minute
                  </th>
                </tr>
              </thead>
              <tbody>
                {schedulers.data.schedulers.map((s) => (
                  <tr key={s.id}>
                    <td className="mono">{s.id}</td>
                    <td>
                      {s.host}:{s.pid}
                    </td>
                    <td>{s.leader ? <span className="badge state-running">leader</span> : 'standby'}</td>
                    <td>{relative(s.last_tick_at, now)}</td>
                    <td className="num">{s.fires_last_minute}</td>
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
