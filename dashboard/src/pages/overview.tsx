/** Overview: sizes per queue and state, throughput charts, the oldest queued task, workers, the leader. */
import { QUEUES_REFRESH_MS, useApi } from '../api';
import { SeriesChart } from '../components/chart';
import { QueueTable } from '../components/queue-table';
import { ErrorBox, Loading, Section } from '../components/common';
import { duration, n, relative } from '../format';
import { Link, setParams, useLocation } from '../router';
import type { Queue, Schedulers, Stats, Worker } from '../types';

export function OverviewPage() {
  const { params } = useLocation();
  const queue = params.get('queue');
  const stats = useApi<Stats>('/api/v1/stats');
  const queues = useApi<{ queues: Queue[] }>('/api/v1/queues', { refetchInterval: QUEUES_REFRESH_MS });
  const workers = useApi<{ workers: Worker[] }>('/api/v1/workers');
  const schedulers = useApi<Schedulers>('/api/v1/schedulers');
  // A queue that is gone (an old link) shows every queue's series.
  const series = (queue ? stats.data?.queues.find((q) => q.name === queue) : undefined) ?? stats.data;
  const waiting = queues.data?.queues.filter((q) => (q.counts.queued ?? 0) > 0) ?? [];
  const oldest = waiting.length === 0 ? null : waiting.reduce((max, q) => Math.max(max, q.latency_ms), 0);
  const leader = schedulers.data?.schedulers.find((s) => s.leader);
  return (
    <>
      <h1>Overview</h1>
      <ErrorBox error={stats.error ?? queues.error} />
      {stats.data ? (
        <div className="tiles">
          <Tile label="queued" value={n(stats.data.totals.queued)} />
          <Tile label="running" value={n(stats.data.totals.running)} />
          <Tile label="dead" value={n(stats.data.totals.dead)} to="/dead" />
          <Tile label="processed / min" value={n(Math.round(stats.data.rates.processed_per_minute))} />
          <Tile label="failed / min" value={n(Math.round(stats.data.rates.failed_per_minute))} />
          <Tile label="oldest queued" value={oldest === null ? 'none queued' : duration(oldest)} />
          <Tile label="live workers" value={n(workers.data?.workers.length ?? stats.data.totals.workers)} to="/workers" />
          <Tile label="scheduler leader" value={leader ? `${leader.host}:${leader.pid}` : schedulers.data ? 'none' : '–'} />
        </div>
      ) : (
        <Loading what="statistics" />
      )}
      <Section
        title="Throughput"
        actions={
          <label>
            Queue{' '}
            <select value={queue ?? ''} onChange={(e) => setParams({ queue: e.target.value || null }, { replace: true })}>
              <option value="">all queues</option>
              {stats.data?.queues.map((q) => (
                <option key={q.name} value={q.name}>
                  {q.name}
                </option>
              ))}
            </select>
          </label>
        }
      >
        {series ? (
          <div className="charts">
            <SeriesChart points={series.minutes} label="per minute, last hour" unit="minute" />
            <SeriesChart points={series.days} label="per day, last 90 days" unit="day" />
          </div>
        ) : (
          <Loading what="charts" />
        )}
      </Section>
      <Section title="Queues">
        {queues.data ? (
          <QueueTable queues={queues.data.queues} />
        ) : (
          <Loading what="queues" />
        )}
        {queues.data?.queues.length === 0 ? <p className="muted">No queues yet: enqueue a task and its queue appears here.</p> : null}
      </Section>
      {schedulers.data && schedulers.data.schedulers.length > 0 ? (
        <p className="muted">
          {schedulers.data.schedulers.length} scheduler instance(s); leader {leader ? `${leader.id} on ${leader.host}, last tick ${relative(leader.last_tick_at)}` : 'none'}.
        </p>
      ) : null}
    </>
  );
}

function Tile({ label, value, to }: { label: string; value: string; to?: string }) {
  const body = (
    <>
      <span className="tile-value">{value}</span>
      <span className="tile-label">{label}</span>
    </>
  );
  return to ? (
    <Link to={to} className="tile">
      {body}
    </Link>
  ) : (
    <div className="tile">{body}</div>
  );
}
