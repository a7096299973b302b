/**
 * deploy/compose.yaml, as Docker Compose reads it: `docker-compose config` resolves the file with
 * an env file such as a user's deploy/.env (no container runtime is needed), and the result is
 * checked for what docs/deploy.md promises — Redis with an fsynced append-only file on a volume,
 * two task centers and two workers on one image, Prometheus with the alert rules, Grafana with its
 * provisioning, every secret from the env file, health checks — and that a missing secret stops
 * `up` with a message naming it. Skipped when docker-compose is not installed (Debian package
 * `docker-compose`; .ci/run installs it).
 */
import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_QUEUES } from '../../src/examples/handlers.js';
import { exampleSchedules } from '../../src/examples/schedules.js';
import { tempDir } from '../helpers/temp-dir.js';
import { commandPresent } from '../helpers/commands.js';

const ROOT = resolve(import.meta.dirname, '../..');
const DEPLOY = resolve(ROOT, 'deploy');
const COMPOSE_FILE = resolve(DEPLOY, 'compose.yaml');
const run = promisify(execFile);

/** The secrets deploy/.env holds, with the values this test gives them. */
const SECRETS = {
  TASKLINE_API_TOKEN: 'admin-token-for-the-compose-test',
  TASKLINE_READ_TOKEN: 'read-token-for-the-compose-test',
  GRAFANA_ADMIN_PASSWORD: 'grafana-password-for-the-compose-test',
};

const present = commandPresent('docker-compose', ['version']);
if (!present) console.warn('skipping the docker-compose checks: docker-compose is not installed (apt-get install docker-compose; .ci/run installs it)');

/** The test runner's environment without anything that would stand in for the env file. */
function composeEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!/^(TASKLINE_|GRAFANA_|COMPOSE_|DOCKER_)/.test(key)) env[key] = value;
  return env;
}

/** `docker-compose config` with `envFile` standing in for deploy/.env. */
async function composeConfig(envFile: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run('docker-compose', ['--env-file', envFile, '-f', COMPOSE_FILE, 'config'], { cwd: ROOT, env: composeEnv() });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : 1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

interface Service {
  image?: string;
  build?: { context: string; dockerfile: string };
  command?: string | string[];
  entrypoint?: string | string[];
  environment?: Record<string, string | number | null> | string[];
  ports?: (string | { published: number | string; target: number; host_ip?: string })[];
  volumes?: (string | { type?: string; source: string; target: string; read_only?: boolean })[];
  healthcheck?: { test: string | string[] };
  depends_on?: string[] | Record<string, { condition: string }>;
  stop_grace_period?: string;
  tmpfs?: string | string[];
}

interface ComposeModel {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

/** A service's environment as a map, from either of the forms Compose prints. */
function environment(service: Service): Record<string, string> {
  const env = service.environment ?? {};
  if (Array.isArray(env)) return Object.fromEntries(env.map((entry) => [entry.split('=')[0], entry.slice(entry.indexOf('=') + 1)]));
  return Object.fromEntries(Object.entries(env).map(([key, value]) => [key, String(value ?? '')]));
}

/** A command or entry point as one line, with Compose's `$$` escape read as the `$` the shell gets. */
function commandLine(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value.join(' ') : (value ?? '')).replaceAll('$$', '$');
}

/** Published ports: `host_ip:published:target[/protocol]` or Compose's long form. */
function ports(service: Service): { hostIp: string | null; published: number; target: number }[] {
  return (service.ports ?? []).map((port) => {
    if (typeof port !== 'string') return { hostIp: port.host_ip ?? null, published: Number(port.published), target: port.target };
    const parts = port.replace(/\/\w+$/, '').split(':');
    const [target, published] = [Number(parts.pop()), Number(parts.pop())];
    return { hostIp: parts.length > 0 ? parts.join(':') : null, published, target };
  });
}

/** Mounts: `source:target[:mode]` or Compose's long form. */
function mounts(service: Service): { source: string; target: string; readOnly: boolean }[] {
  return (service.volumes ?? []).map((volume) => {
    if (typeof volume !== 'string') return { source: volume.source, target: volume.target, readOnly: volume.read_only === true };
    const [source, target, mode] = volume.split(':');
    return { source, target, readOnly: (mode ?? '').split(',').includes('ro') };
  });
}

function seconds(duration: string | undefined): number {
  const match = /^(?:(\d+)m)?(?:(\d+)s)?$/.exec(duration ?? '');
  if (!match || duration === '') throw new Error(`not a duration Compose prints: ${duration}`);
  return Number(match[1] ?? 0) * 60 + Number(match[2] ?? 0);
}

const queueNames = (list: string) => list.split(',').map((entry) => entry.split('=')[0]);

describe.skipIf(!present)('deploy/compose.yaml (docker-compose config)', () => {
  const dir = tempDir('taskline-compose');
  let model: ComposeModel;
  let services: Record<string, Service>;

  /** An env file holding `values`, as a user's deploy/.env would. */
  const envFile = (name: string, values: Record<string, string>) => {
    const path = join(dir.path, name);
    writeFileSync(path, `COMPOSE_PROJECT_NAME=taskline\n${Object.entries(values).map(([key, value]) => `${key}=${value}\n`).join('')}`);
    return path;
  };

  beforeAll(async () => {
    const result = await composeConfig(envFile('complete.env', SECRETS));
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    model = parse(result.stdout) as ComposeModel;
    services = model.services;
  }, 60_000);

  afterAll(() => dir.remove());

  it('runs Redis, two task centers, two workers, Prometheus and Grafana', () => {
    expect(Object.keys(services).sort()).toEqual(['grafana', 'prometheus', 'redis', 'task-center-1', 'task-center-2', 'worker-1', 'worker-2']);
  });

  it('Redis 7 appends every write and fsyncs once a second, to a named volume', () => {
    const redis = services.redis;
    expect(redis.image).toMatch(/^redis:7(\.|$)/);
    const command = commandLine(redis.command);
    expect(command).toMatch(/--appendonly yes/);
    expect(command).toMatch(/--appendfsync everysec/);
    const data = mounts(redis).find((m) => m.target === '/data');
    expect(data).toBeDefined();
    expect(Object.keys(model.volumes ?? {})).toContain(data!.source);
  });

  it('the task centers and workers share one image, built from the repository root with deploy/Dockerfile', () => {
    const taskline = ['task-center-1', 'task-center-2', 'worker-1', 'worker-2'].map((name) => services[name]);
    expect(new Set(taskline.map((s) => s.image)).size).toBe(1);
    for (const service of taskline) {
      expect(service.build).toEqual({ context: ROOT, dockerfile: 'deploy/Dockerfile' });
      expect(environment(service).REDIS_URL).toBe('redis://redis:6379');
      expect(service.depends_on).toMatchObject({ redis: { condition: 'service_healthy' } });
    }
  });

  it('two task centers on host ports 8080 and 8081, with both tokens from the env file', () => {
    expect(ports(services['task-center-1'])).toEqual([{ hostIp: null, published: 8080, target: 8080 }]);
    expect(ports(services['task-center-2'])).toEqual([{ hostIp: null, published: 8081, target: 8080 }]);
    for (const name of ['task-center-1', 'task-center-2']) {
      const env = environment(services[name]);
      expect(env.TASKLINE_API_TOKEN).toBe(SECRETS.TASKLINE_API_TOKEN);
      expect(env.TASKLINE_READ_TOKEN).toBe(SECRETS.TASKLINE_READ_TOKEN);
      // The task center on every interface of its container (the image's default command).
      expect(commandLine(services[name].command)).toMatch(/&& exec node dist\/cli\/main\.js server --host 0\.0\.0\.0$/);
    }
    // No secret is written in the file itself: each is a ${VAR:?message} read from deploy/.env.
    const text = readFileSync(COMPOSE_FILE, 'utf8');
    for (const name of Object.keys(SECRETS)) expect(text).toContain(`\${${name}:?set ${name} in deploy/.env`);
  });

  it('the task centers register the example schedules through a config file they reconcile at start', async () => {
    for (const name of ['task-center-1', 'task-center-2']) {
      const service = services[name];
      expect(commandLine(service.entrypoint)).toBe('/bin/sh -c');
      const command = commandLine(service.command);
      const config = environment(service).TASKLINE_CONFIG;
      expect(config).toMatch(/^\/tmp\//);
      expect(command).toContain('> "$TASKLINE_CONFIG" && exec node dist/cli/main.js server');
      // The script that writes the file, run here on the built package as the image runs it in /app.
      const script = /node --input-type=module -e "([^"]+)"/.exec(command)?.[1];
      expect(script).toBeDefined();
      const env = composeEnv();
      delete env.REPORT_TO;
      delete env.SYNC_URL;
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script!], { cwd: ROOT, env });
      expect(JSON.parse(stdout)).toEqual({ schedules: exampleSchedules({}) });
    }
  });

  it('two workers run the example handlers on every example queue and serve /metrics on 9090', () => {
    for (const name of ['worker-1', 'worker-2']) {
      const service = services[name];
      const command = Array.isArray(service.command) ? service.command : [];
      expect(command[0]).toBe('worker');
      expect(command[command.indexOf('--handlers') + 1]).toBe('dist/examples/handlers.js');
      const queues = queueNames(command[command.indexOf('--queues') + 1]);
      expect(queues).toEqual(expect.arrayContaining(queueNames(EXAMPLE_QUEUES)));
      for (const schedule of exampleSchedules({})) expect(queues).toContain(schedule.task.queue ?? 'default');
      const env = environment(service);
      expect(env.METRICS_PORT).toBe('9090');
      // The examples' files go to a named volume the image's `node` user owns (its home).
      const data = mounts(service).find((m) => env.TASKLINE_EXAMPLES_DIR.startsWith(`${m.target}/`));
      expect(data).toMatchObject({ target: '/home/node', readOnly: false });
      expect(Object.keys(model.volumes ?? {})).toContain(data!.source);
      expect(ports(service)).toEqual([]);
    }
  });

  it('task centers and workers get longer to stop than a worker waits for its running tasks', () => {
    for (const name of ['task-center-1', 'task-center-2', 'worker-1', 'worker-2']) {
      expect(seconds(services[name].stop_grace_period)).toBeGreaterThan(30);
    }
    for (const name of ['worker-1', 'worker-2']) {
      const command = services[name].command as string[];
      expect(command[command.indexOf('--shutdown-timeout') + 1]).toBe('30s');
    }
  });

  it('Prometheus (a pinned image) loads deploy/prometheus read-only and scrapes the task centers with the read token', () => {
    const prometheus = services.prometheus;
    expect(prometheus.image).toMatch(/^prom\/prometheus:v\d+\.\d+\.\d+$/);
    expect(mounts(prometheus)).toContainEqual({ source: resolve(DEPLOY, 'prometheus'), target: '/etc/prometheus', readOnly: true });
    expect(environment(prometheus).TASKLINE_READ_TOKEN).toBe(SECRETS.TASKLINE_READ_TOKEN);
    const config = parse(readFileSync(resolve(DEPLOY, 'prometheus/prometheus.yml'), 'utf8')) as {
      rule_files: string[];
      scrape_configs: { job_name: string; authorization?: { credentials_file: string }; static_configs: { targets: string[] }[] }[];
    };
    const credentials = config.scrape_configs.find((job) => job.job_name === 'taskline-task-center')?.authorization?.credentials_file;
    expect(credentials).toBe('/tmp/taskline-read-token');
    // The token file is written to memory, readable by Prometheus's user only; then Prometheus replaces the shell.
    expect(([] as string[]).concat(prometheus.tmpfs ?? [])).toEqual(['/tmp']);
    expect(commandLine(prometheus.entrypoint)).toBe('/bin/sh -c');
    expect(commandLine(prometheus.command)).toBe(
      `umask 077 && printf '%s' "$TASKLINE_READ_TOKEN" > ${credentials} && exec /bin/prometheus --config.file=/etc/prometheus/prometheus.yml --storage.tsdb.path=/prometheus`,
    );
    // The rules it loads are deploy/prometheus's, and its targets are this file's services.
    for (const rules of config.rule_files) expect(existsSync(resolve(DEPLOY, 'prometheus', rules))).toBe(true);
    const targets = config.scrape_configs.flatMap((job) => job.static_configs.flatMap((c) => c.targets));
    expect(targets.sort()).toEqual(['task-center-1:8080', 'task-center-2:8080', 'worker-1:9090', 'worker-2:9090']);
    // Without a login of its own, Prometheus is published on the host's loopback only.
    expect(ports(prometheus)).toEqual([{ hostIp: '127.0.0.1', published: 9090, target: 9090 }]);
    expect(mounts(prometheus).find((m) => m.target === '/prometheus')?.source).toBe('prometheus-data');
  });

  it('Grafana (a pinned image) on port 3000 with the data source and the dashboard provisioned', () => {
    const grafana = services.grafana;
    expect(grafana.image).toMatch(/^grafana\/grafana-oss:\d+\.\d+\.\d+$/);
    expect(ports(grafana)).toEqual([{ hostIp: null, published: 3000, target: 3000 }]);
    const mounted = mounts(grafana);
    for (const kind of ['datasources', 'dashboards']) {
      expect(mounted).toContainEqual({ source: resolve(DEPLOY, 'grafana/provisioning', kind), target: `/etc/grafana/provisioning/${kind}`, readOnly: true });
    }
    const dashboards = mounted.find((m) => m.source === resolve(DEPLOY, 'grafana/dashboards'));
    expect(dashboards?.readOnly).toBe(true);
    // The provider reads the directory the dashboards are mounted on; the data source is this file's Prometheus.
    const provider = parse(readFileSync(resolve(DEPLOY, 'grafana/provisioning/dashboards/taskline.yaml'), 'utf8')) as { providers: { type: string; options: { path: string } }[] };
    expect(provider.providers.map((p) => p.options.path)).toEqual([dashboards!.target]);
    const sources = parse(readFileSync(resolve(DEPLOY, 'grafana/provisioning/datasources/prometheus.yaml'), 'utf8')) as { datasources: { type: string; url: string; uid: string }[] };
    expect(sources.datasources).toEqual([expect.objectContaining({ type: 'prometheus', url: 'http://prometheus:9090' })]);
    // The dashboard's data source variable defaults to the provisioned one.
    const dashboard = JSON.parse(readFileSync(resolve(DEPLOY, 'grafana/dashboards/taskline.json'), 'utf8')) as { templating: { list: { type: string; current?: { value: string } }[] } };
    expect(dashboard.templating.list.find((v) => v.type === 'datasource')?.current?.value).toBe(sources.datasources[0].uid);
    const env = environment(grafana);
    expect(env.GF_SECURITY_ADMIN_PASSWORD).toBe(SECRETS.GRAFANA_ADMIN_PASSWORD);
    const home = env.GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH;
    expect(home).toBe(`${dashboards!.target}/taskline.json`);
    expect(existsSync(resolve(DEPLOY, 'grafana/dashboards', basename(home)))).toBe(true);
  });

  it('every service has a health check', () => {
    for (const [name, service] of Object.entries(services)) expect(service.healthcheck?.test, name).toEqual(expect.arrayContaining(['CMD']));
  });

  it('deploy/.env.example names every secret, empty: a copy left unedited does not start', async () => {
    const example = readFileSync(resolve(DEPLOY, '.env.example'), 'utf8');
    const values = Object.fromEntries(example.split('\n').filter((line) => /^\w+=/.test(line)).map((line) => [line.split('=')[0], line.slice(line.indexOf('=') + 1)]));
    const required = [...readFileSync(COMPOSE_FILE, 'utf8').matchAll(/\$\{(\w+):\?/g)].map((m) => m[1]);
    expect(new Set(required)).toEqual(new Set(Object.keys(SECRETS)));
    for (const name of required) expect(values[name]).toBe('');
    const unedited = await composeConfig(resolve(DEPLOY, '.env.example'));
    expect(unedited.code).not.toBe(0);
    expect(unedited.stderr).toMatch(/set (TASKLINE_API_TOKEN|TASKLINE_READ_TOKEN|GRAFANA_ADMIN_PASSWORD) in deploy\/\.env/);
  });

  it('a missing or empty secret stops Compose with a message naming it', async () => {
    const cases = Object.keys(SECRETS).flatMap((name) => {
      const rest = Object.fromEntries(Object.entries(SECRETS).filter(([key]) => key !== name));
      return [{ name, label: 'missing', values: rest }, { name, label: 'empty', values: { ...rest, [name]: '' } }];
    });
    const results = await Promise.all(cases.map(({ name, label, values }) => composeConfig(envFile(`${label}-${name}.env`, values))));
    for (const [i, { name, label }] of cases.entries()) {
      expect(results[i].code, `${name} ${label}`).not.toBe(0);
      expect(results[i].stdout).toBe('');
      expect(results[i].stderr).toContain(`set ${name} in deploy/.env (copy deploy/.env.example to deploy/.env first)`);
    }
  }, 60_000);
});

describe('deploy/up.sh, the one command', () => {
  it('writes deploy/.env with new random secrets the first time, keeps it after, and runs docker compose up -d', async () => {
    const dir = tempDir('up-sh');
    try {
      // The script and the example beside it, as in deploy/; a `docker` that records its calls.
      const deploy = join(dir.path, 'deploy');
      const bin = join(dir.path, 'bin');
      mkdirSync(deploy);
      mkdirSync(bin);
      copyFileSync(resolve(DEPLOY, 'up.sh'), join(deploy, 'up.sh'));
      chmodSync(join(deploy, 'up.sh'), 0o755);
      copyFileSync(resolve(DEPLOY, '.env.example'), join(deploy, '.env.example'));
      const calls = join(dir.path, 'calls');
      writeFileSync(join(bin, 'docker'), `#!/bin/sh\necho "$*" >> '${calls}'\n`, { mode: 0o755 });
      const env = { ...composeEnv(), PATH: `${bin}:${process.env.PATH ?? ''}` };

      const first = await run(join(deploy, 'up.sh'), ['--build'], { env });
      const written = readFileSync(join(deploy, '.env'), 'utf8');
      const values = Object.fromEntries(written.split('\n').filter((l) => /^[A-Z_]+=/.test(l)).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
      expect(values.TASKLINE_API_TOKEN).toMatch(/^[0-9a-f]{64}$/);
      expect(values.TASKLINE_READ_TOKEN).toMatch(/^[0-9a-f]{64}$/);
      expect(values.TASKLINE_READ_TOKEN).not.toBe(values.TASKLINE_API_TOKEN);
      expect(values.GRAFANA_ADMIN_PASSWORD).toMatch(/^[0-9a-f]{32}$/);
      expect(values.COMPOSE_PROJECT_NAME).toBe('taskline');
      expect(statSync(join(deploy, '.env')).mode & 0o077).toBe(0);
      expect(first.stdout).toContain(values.TASKLINE_API_TOKEN);
      expect(first.stdout).toContain(values.GRAFANA_ADMIN_PASSWORD);
      expect(readFileSync(calls, 'utf8').split('\n')).toEqual(['compose version', 'compose up -d --build', '']);

      // A second run keeps the secrets and prints none.
      const second = await run(join(deploy, 'up.sh'), [], { env });
      expect(readFileSync(join(deploy, '.env'), 'utf8')).toBe(written);
      expect(second.stdout).not.toContain(values.TASKLINE_API_TOKEN);

      // What it wrote is an env file Compose starts the whole set-up with.
      if (present) expect((await composeConfig(join(deploy, '.env'))).code).toBe(0);
    } finally {
      dir.remove();
    }
  }, 30_000);
});
