/**
 * The Grafana dashboard (deploy/grafana/dashboards/taskline.json) and the alert rules
 * (deploy/prometheus/taskline-alerts.yml) query only metrics that Taskline exports: a real task
 * center (`taskline server`) and a real worker (`taskline worker`) run on Redis, a completed task,
 * a retried one, a dead one and a schedule's fires make their series exist, both /metrics are
 * scraped (the task center's with the read token, as Prometheus does), and the metric names of
 * every PromQL expression must be among the names scraped. Also the dashboard's shape: what
 * Grafana needs to import it, and a query in every panel; and, with promtool, that every query
 * parses as PromQL.
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliProcess, cliStore, type CliStore } from '../cli/helpers.js';
import { freePort } from '../helpers/ports.js';
import { eventually } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp-dir.js';
import { commandPresent } from '../helpers/commands.js';

const ROOT = resolve(import.meta.dirname, '../..');
const HANDLERS = resolve(ROOT, 'test/fixtures/dashboard-handlers.mjs');
const ADMIN_TOKEN = 'dashboard-test-admin-token';
const READ_TOKEN = 'dashboard-test-read-token';

// ——— The metric names of a PromQL expression ———

/** PromQL's functions (Prometheus 3). */
const FUNCTIONS = new Set([
  'abs', 'absent', 'absent_over_time', 'acos', 'acosh', 'asin', 'asinh', 'atan', 'atanh', 'avg_over_time', 'ceil', 'changes', 'clamp', 'clamp_max',
  'clamp_min', 'cos', 'cosh', 'count_over_time', 'day_of_month', 'day_of_week', 'day_of_year', 'days_in_month', 'deg', 'delta', 'deriv',
  'double_exponential_smoothing', 'end', 'exp', 'floor', 'histogram_avg', 'histogram_count', 'histogram_fraction', 'histogram_quantile', 'histogram_stddev',
  'histogram_stdvar', 'histogram_sum', 'holt_winters', 'hour', 'idelta', 'increase', 'info', 'irate', 'label_join', 'label_replace', 'last_over_time', 'ln',
  'log10', 'log2', 'mad_over_time', 'max_over_time', 'min_over_time', 'minute', 'month', 'pi', 'predict_linear', 'present_over_time', 'quantile_over_time',
  'rad', 'rate', 'resets', 'round', 'scalar', 'sgn', 'sin', 'sinh', 'sort', 'sort_by_label', 'sort_by_label_desc', 'sort_desc', 'sqrt', 'start', 'stddev_over_time',
  'stdvar_over_time', 'sum_over_time', 'tan', 'tanh', 'time', 'timestamp', 'vector', 'year',
]);
const AGGREGATIONS = new Set(['sum', 'min', 'max', 'avg', 'group', 'stddev', 'stdvar', 'count', 'count_values', 'bottomk', 'topk', 'quantile', 'limitk', 'limit_ratio']);
const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'atan2', 'inf', 'nan']);

/**
 * The metric names an expression selects. Left out: strings (label values), Grafana variables
 * ($queue, ${datasource}, $__rate_interval), label matchers {…}, ranges […], the label lists of
 * by/without/on/ignoring/group_left/group_right, numbers and durations, functions, aggregations
 * and keywords. An unknown name called as a function is an error, not a metric.
 */
function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, ' ')
    .replace(/\$\{[^}]*\}|\$\w+|\[\[\w+\]\]/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '$1 ');
  const names: string[] = [];
  for (const match of stripped.matchAll(/\d[\w.]*|[A-Za-z_:][\w:]*/g)) {
    const token = match[0];
    if (/^\d/.test(token)) continue;
    const called = /^\s*\(/.test(stripped.slice(match.index + token.length));
    if (FUNCTIONS.has(token) || AGGREGATIONS.has(token) || KEYWORDS.has(token.toLowerCase())) continue;
    if (called) throw new Error(`${token}(…) is not a PromQL function, in: ${expr}`);
    names.push(token);
  }
  return [...new Set(names)];
}

/** A Grafana variable query's metric names: `label_values(<selector>, <label>)` selects from the selector. */
function variableMetricNames(query: string): string[] {
  const match = /^label_values\((.+),\s*\w+\)$/.exec(query.trim());
  if (!match) throw new Error(`not a label_values(<metric>, <label>) query: ${query}`);
  return metricNames(match[1]);
}

// ——— The files ———

interface Target {
  refId: string;
  expr: string;
  datasource?: { type: string; uid: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: Target[];
  panels?: Panel[];
}
interface Variable {
  name: string;
  type: string;
  query: string | { query: string };
  definition?: string;
  datasource?: { type: string; uid: string };
}
interface Dashboard {
  uid: string;
  title: string;
  schemaVersion: number;
  panels: Panel[];
  templating: { list: Variable[] };
}

const dashboard = JSON.parse(readFileSync(resolve(ROOT, 'deploy/grafana/dashboards/taskline.json'), 'utf8')) as Dashboard;
/** Every panel, those inside collapsed rows included. */
const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
const queryPanels = panels.filter((p) => p.type !== 'row');
const dashboardExprs = queryPanels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: `panel "${p.title}" ${t.refId}`, expr: t.expr })));
const variableQueries = dashboard.templating.list
  .filter((v) => v.type === 'query')
  .map((v) => ({ where: `variable $${v.name}`, query: typeof v.query === 'string' ? v.query : v.query.query }));
const rules = (parse(readFileSync(resolve(ROOT, 'deploy/prometheus/taskline-alerts.yml'), 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] }).groups
  .flatMap((g) => g.rules)
  .map((r) => ({ where: `alert ${r.alert}`, expr: r.expr }));
/** Series Prometheus records itself for every target it scrapes: an alert may ask for them. */
const PROMETHEUS_SERIES = ['up'];

describe('PromQL metric names', () => {
  it('are the selectors, not labels, strings, variables, durations, functions or keywords', () => {
    const expr = 'sum by (queue_name) (rate(a_total{queue_name=~"$queue", x="}"}[$__rate_interval] offset 5m)) / on (queue_name) group_left (limit) '
      + 'max without (le) (b_seconds_bucket) > bool 0.5 and c:recorded or vector(1) unless absent(d) * ${factor} + histogram_quantile(0.99, e_bucket[10m])';
    expect(metricNames(expr)).toEqual(['a_total', 'b_seconds_bucket', 'c:recorded', 'd', 'e_bucket']);
    expect(() => metricNames('rat(a_total[5m])')).toThrow(/rat\(…\) is not a PromQL function/);
    expect(variableMetricNames('label_values(scheduler_queue_depth, queue_name)')).toEqual(['scheduler_queue_depth']);
  });
});

describe('deploy/grafana/dashboards/taskline.json', () => {
  it('is a dashboard Grafana imports: uid, title, schema version, a data source variable', () => {
    expect(dashboard.uid).toMatch(/^[\w-]{1,40}$/);
    expect(dashboard.title).toBe('Taskline');
    expect(dashboard.schemaVersion).toBeGreaterThan(30);
    expect(dashboard.templating.list.find((v) => v.name === 'datasource')).toMatchObject({ type: 'datasource', query: 'prometheus' });
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
  });

  it('every panel but a row has a title, the Prometheus data source and queries, and fits the 24-column grid', () => {
    expect(queryPanels.length).toBeGreaterThan(10);
    for (const panel of panels) {
      expect(panel.gridPos.x + panel.gridPos.w, panel.title).toBeLessThanOrEqual(24);
      if (panel.type === 'row') {
        expect(panel.targets ?? []).toEqual([]);
        continue;
      }
      expect(panel.title).not.toBe('');
      expect(panel.datasource, panel.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      expect(new Set(panel.targets!.map((t) => t.refId)).size, panel.title).toBe(panel.targets!.length);
      for (const target of panel.targets!) {
        expect(target.expr.trim(), panel.title).not.toBe('');
        expect(target.datasource ?? panel.datasource, panel.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
      }
    }
    for (const variable of dashboard.templating.list.filter((v) => v.type === 'query')) expect(variable.datasource).toEqual({ type: 'prometheus', uid: '${datasource}' });
  });

  it('shows what the deployment kit promises', () => {
    const used = new Set(dashboardExprs.flatMap(({ expr }) => metricNames(expr)));
    for (const name of [
      'scheduler_tasks_completed_total', 'scheduler_tasks_failed_total', 'scheduler_task_retries_total', 'scheduler_tasks_dead_total',
      'scheduler_queue_depth', 'scheduler_queue_oldest_age_seconds', 'scheduler_task_duration_seconds_bucket', 'scheduler_schedule_fire_lag_seconds_bucket',
      'scheduler_schedule_fires_total', 'scheduler_workers', 'scheduler_leader', 'scheduler_queue_running', 'scheduler_queue_held_tasks', 'scheduler_queue_refused_total',
    ]) expect(used, name).toContain(name);
    const exprs = dashboardExprs.map(({ expr }) => expr);
    for (const quantile of ['0.5', '0.95', '0.99']) expect(exprs).toContain(`histogram_quantile(${quantile}, sum by (le) (rate(scheduler_task_duration_seconds_bucket{task_name=~"$task"}[$__rate_interval])))`);
    expect(exprs.some((e) => e.includes('scheduler_schedule_fires_total{outcome="missed"}'))).toBe(true);
  });

  it('every query selects a metric', () => {
    for (const { where, expr } of [...dashboardExprs, ...rules]) expect(metricNames(expr), where).not.toEqual([]);
    for (const { where, query } of variableQueries) expect(variableMetricNames(query), where).not.toEqual([]);
  });
});

const promtool = commandPresent('promtool');
if (!promtool) console.warn('skipping the PromQL syntax check of the dashboard: promtool is not installed (apt-get install prometheus; .ci/run installs it)');

describe.skipIf(!promtool)('the dashboard\'s queries (promtool)', () => {
  it('parse as PromQL, with Grafana\'s variables given values', async () => {
    // Each query becomes a recording rule: `promtool check rules` parses every expression.
    const grafanaValues = (expr: string) => expr.replaceAll('$__rate_interval', '1m').replaceAll('$__range', '1h').replace(/\$(queue|task)\b/g, '.*');
    const rulesFile = {
      groups: [{ name: 'dashboard', rules: dashboardExprs.map(({ expr }, i) => ({ record: `dashboard:query_${i}`, expr: grafanaValues(expr) })) }],
    };
    for (const { expr } of rulesFile.groups[0].rules) expect(expr).not.toContain('$');
    const dir = tempDir('taskline-dashboard-promql');
    try {
      writeFileSync(join(dir.path, 'dashboard.yml'), stringify(rulesFile));
      const { stdout } = await promisify(execFile)('promtool', ['check', 'rules', 'dashboard.yml'], { cwd: dir.path });
      expect(stdout).toContain(`SUCCESS: ${dashboardExprs.length} rules found`);
    } finally {
      dir.remove();
    }
  });
});

describe('the dashboard and the alert rules query metrics a running task center and worker export', () => {
  let store: CliStore;
  let server: CliProcess;
  let worker: CliProcess;
  let api = '';
  let workerMetrics = '';
  const exported = new Set<string>();

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${api}${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  /** A /metrics page's samples by metric name (`name{labels} value` lines). */
  const scrape = async (url: string, token?: string): Promise<Map<string, string[]>> => {
    const res = await fetch(url, { headers: token === undefined ? {} : { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(10_000) });
    expect(res.status).toBe(200);
    const samples = new Map<string, string[]>();
    for (const line of (await res.text()).split('\n')) {
      const name = /^[A-Za-z_:][\w:]*/.exec(line)?.[0];
      if (name !== undefined) samples.set(name, [...(samples.get(name) ?? []), line]);
    }
    return samples;
  };
  const centerMetrics = () => scrape(`${api}/metrics`, READ_TOKEN);

  beforeAll(async () => {
    store = await cliStore('redis');
    const [port, metricsPort] = [await freePort(), await freePort()];
    api = `http://127.0.0.1:${port}`;
    workerMetrics = `http://127.0.0.1:${metricsPort}/metrics`;
    server = new CliProcess([...store.args, 'server', '--host', '127.0.0.1', '--port', String(port)], {
      cwd: store.dir,
      env: { TASKLINE_API_TOKEN: ADMIN_TOKEN, TASKLINE_READ_TOKEN: READ_TOKEN },
    });
    worker = new CliProcess([...store.args, 'worker', '--handlers', HANDLERS, '--metrics-port', String(metricsPort), '--queues', 'default'], { cwd: store.dir });
    await server.waitFor(/^ready/m, 30_000);
    await worker.waitFor(/ready/, 30_000);

    // A task that completes, one retried once, one that dies.
    const outcomes: Record<string, { state: string; attempt: number }> = {
      'dashboard:complete': { state: 'completed', attempt: 1 },
      'dashboard:retry': { state: 'completed', attempt: 2 },
      'dashboard:die': { state: 'dead', attempt: 1 },
    };
    for (const [type, outcome] of Object.entries(outcomes)) {
      const enqueued = await call('POST', '/api/v1/tasks', { type, maxRetries: 2 });
      expect(enqueued.status).toBe(201);
      const finished = await call('GET', `/api/v1/tasks/${enqueued.body.task_id as string}?wait=20`);
      expect(finished.body, type).toMatchObject(outcome);
    }
    // A schedule that fires every second.
    const schedule = await call('POST', '/api/v1/schedules', { id: 'dashboard-every-second', cron: '* * * * * *', task: { type: 'dashboard:complete' } });
    expect(schedule.status).toBe(201);

    // Until the task center has heard of the dead task and its scheduler has fired.
    await eventually(async () => {
      const samples = await centerMetrics();
      return samples.get('scheduler_tasks_dead_total')?.some((line) => line.endsWith(' 1'))
        && samples.get('scheduler_schedule_fires_total')?.some((line) => line.includes('outcome="enqueued"'));
    }, 20_000, 100);
    for (const samples of [await centerMetrics(), await scrape(workerMetrics)]) for (const name of samples.keys()) exported.add(name);
  }, 90_000);

  afterAll(async () => {
    for (const child of [worker, server]) await child?.stop();
    await store?.cleanup();
  }, 30_000);

  it('the task center and the worker export the series of each kind of event', () => {
    for (const name of [
      'scheduler_tasks_dispatched_total', 'scheduler_tasks_completed_total', 'scheduler_tasks_failed_total', 'scheduler_task_retries_total',
      'scheduler_task_duration_seconds_bucket', 'scheduler_task_duration_seconds_sum', 'scheduler_task_duration_seconds_count',
      'scheduler_queue_depth', 'scheduler_queue_oldest_age_seconds', 'scheduler_workers', 'scheduler_leader', 'scheduler_tasks_dead_total',
      'scheduler_schedule_fires_total', 'scheduler_schedule_fire_lag_seconds_bucket',
    ]) expect(exported, name).toContain(name);
  });

  it('every metric of every dashboard query is exported', () => {
    const missing = [
      ...dashboardExprs.flatMap(({ where, expr }) => metricNames(expr).map((name) => ({ where, name }))),
      ...variableQueries.flatMap(({ where, query }) => variableMetricNames(query).map((name) => ({ where, name }))),
    ].filter(({ name }) => !exported.has(name));
    expect(missing).toEqual([]);
  });

  it('every metric of every alert rule is exported (or recorded by Prometheus for each target)', () => {
    const missing = rules
      .flatMap(({ where, expr }) => metricNames(expr).map((name) => ({ where, name })))
      .filter(({ name }) => !exported.has(name) && !PROMETHEUS_SERIES.includes(name));
    expect(missing).toEqual([]);
  });
});
