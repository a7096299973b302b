/**
 * The real `prometheus` binary (Debian package `prometheus`) on a free port, for end-to-end tests
 * of deploy/prometheus/: its config derived from the shipped prometheus.yml — the jobs, metrics
 * paths and authorization kept; the targets, the token file and the rule files pointed at local
 * ones; the intervals cut to 1 s — and its HTTP API (targets, queries, alerts) read back.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { parse, stringify } from 'yaml';
import { commandPresent } from './commands.js';
import { freePort } from './ports.js';
import { tempDir } from './temp-dir.js';

/** The scrape config the deployment kit ships. */
export const SHIPPED_PROMETHEUS_CONFIG = resolve(import.meta.dirname, '../../deploy/prometheus/prometheus.yml');

export function prometheusPresent(): boolean {
  return commandPresent('prometheus');
}

interface ScrapeConfig {
  job_name: string;
  metrics_path?: string;
  authorization?: { type?: string; credentials?: string; credentials_file?: string };
  static_configs?: { targets: string[]; labels?: Record<string, string> }[];
  [key: string]: unknown;
}

export interface PrometheusConfig {
  global?: Record<string, unknown>;
  rule_files?: string[];
  scrape_configs: ScrapeConfig[];
  [key: string]: unknown;
}

/**
 * The shipped config for local processes: each job's targets replaced by `targets[job]` (every
 * shipped job must be given, and no other), each `credentials_file` by `credentialsFile`, each
 * rule file by its absolute path beside the shipped file, and the scrape and evaluation intervals
 * by `interval`. Everything else is kept as shipped.
 */
export function localPrometheusConfig(options: { targets: Record<string, string[]>; credentialsFile: string; interval?: string; shipped?: string }): PrometheusConfig {
  const shipped = options.shipped ?? SHIPPED_PROMETHEUS_CONFIG;
  const config = parse(readFileSync(shipped, 'utf8')) as PrometheusConfig;
  const jobs = config.scrape_configs.map((job) => job.job_name);
  const given = Object.keys(options.targets);
  if (jobs.length !== given.length || !given.every((job) => jobs.includes(job))) {
    throw new Error(`${shipped} has the jobs ${jobs.join(', ')}; targets were given for ${given.join(', ')}`);
  }
  const interval = options.interval ?? '1s';
  return {
    ...config,
    global: { ...config.global, scrape_interval: interval, evaluation_interval: interval },
    rule_files: (config.rule_files ?? []).map((file) => (isAbsolute(file) ? file : resolve(dirname(shipped), file))),
    scrape_configs: config.scrape_configs.map((job) => ({
      ...job,
      ...(job.authorization?.credentials_file !== undefined ? { authorization: { ...job.authorization, credentials_file: options.credentialsFile } } : {}),
      static_configs: [{ targets: options.targets[job.job_name] }],
    })),
  };
}

export interface ActiveTarget {
  labels: Record<string, string>;
  scrapeUrl: string;
  health: 'up' | 'down' | 'unknown';
  lastError: string;
}

export interface Alert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: 'pending' | 'firing';
  value: string;
}

export interface Rule {
  name: string;
  type: 'alerting' | 'recording';
  health: 'ok' | 'err' | 'unknown';
  lastError?: string;
  /** RFC 3339; Go's zero time before the first evaluation. */
  lastEvaluation: string;
  state?: 'inactive' | 'pending' | 'firing';
}

export interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

const LOG_KEPT = 64 * 1024;

export class PrometheusServer {
  private log = '';
  private spawnFailed = false;
  private readonly exited: Promise<void>;

  private constructor(
    readonly url: string,
    private readonly child: ChildProcess,
    private readonly dir: { path: string; remove: () => void },
  ) {
    // Its log (stderr) is kept, the tail only, for the message of a failure.
    const keep = (chunk: Buffer) => (this.log = (this.log + chunk.toString()).slice(-LOG_KEPT));
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.exited = new Promise((done) => {
      child.once('exit', () => done());
      child.once('error', (error) => {
        this.log += `\n${error.message}`;
        this.spawnFailed = true;
        done();
      });
    });
  }

  /** Starts prometheus with `config` (its storage in a temporary directory) and waits until it is ready. */
  static async start(config: PrometheusConfig, timeoutMs = 30_000): Promise<PrometheusServer> {
    const dir = tempDir('taskline-prometheus');
    const file = join(dir.path, 'prometheus.yml');
    writeFileSync(file, stringify(config));
    const port = await freePort();
    const child = spawn('prometheus', [`--config.file=${file}`, `--storage.tsdb.path=${join(dir.path, 'data')}`, `--web.listen-address=127.0.0.1:${port}`], {
      cwd: dir.path,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const server = new PrometheusServer(`http://127.0.0.1:${port}`, child, dir);
    try {
      await server.waitUntilReady(timeoutMs);
    } catch (error) {
      await server.destroy();
      throw error;
    }
    return server;
  }

  private async waitUntilReady(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.running) throw new Error(`prometheus exited at start:\n${this.logTail()}`);
      try {
        if ((await fetch(`${this.url}/-/ready`, { signal: AbortSignal.timeout(2_000) })).status === 200) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`prometheus was not ready within ${timeoutMs} ms:\n${this.logTail()}`);
  }

  get running(): boolean {
    return !this.spawnFailed && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** `data` of a GET under /api/v1 (`path` with its query string), failing on anything but success. */
  async api<T>(path: string): Promise<T> {
    const response = await fetch(`${this.url}/api/v1/${path}`, { signal: AbortSignal.timeout(5_000) });
    const body = (await response.json()) as { status: string; data: T; error?: string };
    if (response.status !== 200 || body.status !== 'success') throw new Error(`prometheus /api/v1/${path}: ${response.status} ${body.error ?? ''}`);
    return body.data;
  }

  async targets(): Promise<ActiveTarget[]> {
    return (await this.api<{ activeTargets: ActiveTarget[] }>('targets?state=active')).activeTargets;
  }

  /** An instant query's vector. */
  async query(expr: string): Promise<Sample[]> {
    const data = await this.api<{ resultType: string; result: Sample[] }>(`query?query=${encodeURIComponent(expr)}`);
    if (data.resultType !== 'vector') throw new Error(`${expr}: a ${data.resultType}, not a vector`);
    return data.result;
  }

  /** The alerts of its rules now pending or firing. */
  async alerts(): Promise<Alert[]> {
    return (await this.api<{ alerts: Alert[] }>('alerts')).alerts;
  }

  /** The rules it loaded, by group. */
  async rules(): Promise<{ name: string; file: string; rules: Rule[] }[]> {
    return (await this.api<{ groups: { name: string; file: string; rules: Rule[] }[] }>('rules')).groups;
  }

  logTail(lines = 30): string {
    return this.log.split('\n').slice(-lines).join('\n');
  }

  /** Kills it and removes its config and storage. */
  async destroy(): Promise<void> {
    if (this.running) this.child.kill('SIGKILL');
    await this.exited;
    this.dir.remove();
  }
}
