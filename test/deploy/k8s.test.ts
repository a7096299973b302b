/**
 * The Kubernetes manifests (deploy/k8s), checked by reading them: no cluster runs here. What
 * docs/kubernetes.md promises of them: they parse; two task centers probed on /readyz and
 * /healthz at the port they listen on, kept up by a PodDisruptionBudget; workers given longer
 * to stop than their shutdown timeout and preStop together; a KEDA autoscaler on
 * scheduler_queue_depth for the worker Deployment; Services that select pods; a kustomization
 * that lists every manifest; and CLI arguments that the CLI takes.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command, Option } from 'commander';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { createProgram } from '../../src/cli/program.js';
import { EXAMPLE_QUEUES } from '../../src/examples/handlers.js';
import { parseQueues } from '../../src/worker/queue-picker.js';

const ROOT = resolve(import.meta.dirname, '../..');
const K8S = resolve(ROOT, 'deploy/k8s');
const KUSTOMIZATION = 'kustomization.yaml';
/** The defaults of `server --port` / PORT and `worker --metrics-port` / METRICS_PORT. */
const DEFAULT_PORT = 8080;
const DEFAULT_METRICS_PORT = 9090;
/** Where the example handlers are, in the image (WORKDIR /app) as in the checkout. */
const EXAMPLE_HANDLERS = 'dist/examples/handlers.js';

type Labels = Record<string, string>;

interface Probe {
  httpGet?: { path?: string; port?: number | string };
}

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string } };
}

interface Container {
  name: string;
  image?: string;
  args?: string[];
  env?: EnvVar[];
  ports?: { name?: string; containerPort: number }[];
  startupProbe?: Probe;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command?: string[] }; sleep?: { seconds?: number } } };
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; readOnlyRootFilesystem?: boolean; allowPrivilegeEscalation?: boolean };
  volumeMounts?: { name: string; mountPath: string }[];
}

interface PodTemplate {
  metadata: { labels: Labels; annotations?: Labels };
  spec: {
    containers: Container[];
    terminationGracePeriodSeconds?: number;
    securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
    volumes?: { name: string }[];
  };
}

interface Manifest {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; labels?: Labels };
  spec?: unknown;
}

interface Deployment extends Manifest {
  spec: { replicas?: number; selector: { matchLabels: Labels }; template: PodTemplate };
}

interface Service extends Manifest {
  spec: { selector: Labels; ports: { name?: string; port: number; targetPort?: number | string }[] };
}

interface Budget extends Manifest {
  spec: { minAvailable?: number | string; maxUnavailable?: number | string; selector: { matchLabels: Labels } };
}

interface ScaledObject extends Manifest {
  spec: {
    scaleTargetRef: { apiVersion?: string; kind?: string; name: string };
    minReplicaCount?: number;
    maxReplicaCount?: number;
    triggers: { type: string; metadata: Record<string, string> }[];
  };
}

interface Kustomization {
  resources?: string[];
  images?: { name: string; newName?: string; newTag?: string }[];
}

/** Every file of deploy/k8s, its documents parsed; a file's parse errors and warnings, by file. */
const files = readdirSync(K8S).filter((f) => /\.ya?ml$/.test(f)).sort();
const problems: string[] = [];
const documents = new Map<string, unknown[]>();
for (const file of files) {
  const parsed = parseAllDocuments(readFileSync(resolve(K8S, file), 'utf8'));
  const list = Array.isArray(parsed) ? parsed : [];
  const values: unknown[] = [];
  for (const doc of list) {
    for (const problem of [...doc.errors, ...doc.warnings]) problems.push(`${file}: ${problem.message}`);
    if (doc.errors.length === 0 && doc.contents !== null) values.push(doc.toJS());
  }
  documents.set(file, values);
}
const manifestFiles = files.filter((f) => f !== KUSTOMIZATION);
const manifests = manifestFiles.flatMap((file) => (documents.get(file) ?? []).map((doc) => ({ file, doc: doc as Manifest })));
const ofKind = <T extends Manifest>(kind: string) => manifests.filter((m) => m.doc.kind === kind).map((m) => m.doc as T);
const deployments = ofKind<Deployment>('Deployment');

/** The one Deployment whose container runs `taskline <command>`. */
function deploymentRunning(command: 'server' | 'worker'): { deployment: Deployment; container: Container } {
  const found = deployments.flatMap((deployment) =>
    deployment.spec.template.spec.containers.filter((c) => c.args?.[0] === command).map((container) => ({ deployment, container })));
  expect(found, `Deployments running taskline ${command}`).toHaveLength(1);
  return found[0];
}

const program = createProgram();

/** The options of `taskline <command>` in `args`, each parsed by the CLI's own option (and its parser). */
function parseCli(args: string[]): { command: Command; values: Map<string, unknown> } {
  const [name, ...rest] = args;
  const command = program.commands.find((c) => c.name() === name);
  if (!command) throw new Error(`taskline has no command ${JSON.stringify(name)}`);
  const values = new Map<string, unknown>();
  for (let i = 0; i < rest.length; i++) {
    const [flag, inline] = rest[i].split(/=(.*)/s, 2);
    const option: Option | undefined = [...command.options, ...program.options].find((o) => o.long === flag);
    if (!option) throw new Error(`taskline ${name}: ${JSON.stringify(rest[i])} is not one of its options`);
    if (!option.required && !option.optional) {
      values.set(flag, true);
      continue;
    }
    const value = inline ?? rest[++i];
    if (value === undefined) throw new Error(`taskline ${name} ${flag}: no value`);
    if (option.argChoices && !option.argChoices.includes(value)) throw new Error(`taskline ${name} ${flag} ${value}: not one of ${option.argChoices.join(', ')}`);
    try {
      values.set(flag, option.parseArg ? option.parseArg(value, undefined) : value);
    } catch (error) {
      throw new Error(`taskline ${name} ${flag} ${value}: ${(error as Error).message}`, { cause: error });
    }
  }
  return { command, values };
}

function envValue(container: Container, name: string): string | undefined {
  return container.env?.find((e) => e.name === name)?.value;
}

/** A probe's or Service's port (a number or a container port's name) as a number. */
function portNumber(container: Container, port: number | string | undefined): number | undefined {
  if (typeof port === 'number') return port;
  return container.ports?.find((p) => p.name === port)?.containerPort;
}

function selects(selector: Labels, labels: Labels): boolean {
  return Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);
}

/** Seconds the preStop hook holds the container before SIGTERM: `sleep N` or the sleep action. */
function preStopSeconds(container: Container): number {
  const hook = container.lifecycle?.preStop;
  if (hook?.sleep?.seconds !== undefined) return hook.sleep.seconds;
  const command = hook?.exec?.command ?? [];
  const sleep = /^(?:\/bin\/)?sleep$/.test(command[0] ?? '') && command.length === 2 ? command[1] : undefined;
  if (sleep === undefined || !/^\d+(\.\d+)?$/.test(sleep)) throw new Error(`${container.name}: preStop is not a sleep (${JSON.stringify(hook)})`);
  return Number(sleep);
}

describe('deploy/k8s', () => {
  it('parses, and every manifest has apiVersion, kind and metadata.name', () => {
    expect(problems.join('\n'), 'parse errors and warnings').toBe('');
    expect(manifestFiles.length).toBeGreaterThan(0);
    for (const file of manifestFiles) expect(documents.get(file)?.length ?? 0, `${file}: documents`).toBeGreaterThan(0);
    for (const { file, doc } of manifests) {
      expect(typeof doc.apiVersion, `${file}: apiVersion`).toBe('string');
      expect(typeof doc.kind, `${file}: kind`).toBe('string');
      expect(typeof doc.metadata?.name, `${file}: metadata.name`).toBe('string');
    }
  });

  it('lists every manifest in the kustomization, and an image for every container', () => {
    const kustomization = documents.get(KUSTOMIZATION)?.[0] as Kustomization | undefined;
    expect(kustomization, KUSTOMIZATION).toBeDefined();
    expect([...(kustomization!.resources ?? [])].sort()).toEqual(manifestFiles);
    const images = new Set((kustomization!.images ?? []).map((i) => i.name));
    for (const deployment of deployments) {
      for (const container of deployment.spec.template.spec.containers) expect(images, `${container.name}: image ${container.image}`).toContain(container.image);
    }
  });

  it('runs two task centers, probed on /readyz and /healthz at the port they listen on', () => {
    const { deployment, container } = deploymentRunning('server');
    expect(deployment.spec.replicas).toBe(2);
    expect(selects(deployment.spec.selector.matchLabels, deployment.spec.template.metadata.labels), 'the Deployment selects its pods').toBe(true);
    const { values } = parseCli(container.args!);
    const port = (values.get('--port') as number | undefined) ?? Number(envValue(container, 'PORT') ?? DEFAULT_PORT);
    expect(container.ports?.map((p) => p.containerPort)).toContain(port);
    expect(container.readinessProbe?.httpGet?.path).toBe('/readyz');
    expect(portNumber(container, container.readinessProbe?.httpGet?.port)).toBe(port);
    expect(container.livenessProbe?.httpGet?.path).toBe('/healthz');
    expect(portNumber(container, container.livenessProbe?.httpGet?.port)).toBe(port);
    // A store outage takes a task center out of the Service; it must not restart it.
    if (container.startupProbe) {
      expect(container.startupProbe.httpGet?.path).toBe('/healthz');
      expect(portNumber(container, container.startupProbe.httpGet?.port)).toBe(port);
    }
    // The kubelet probes the pod's address: the server binds beyond loopback, which it refuses
    // without an API token.
    expect(values.get('--host')).toBe('0.0.0.0');
    expect(container.env?.find((e) => e.name === 'TASKLINE_API_TOKEN')?.valueFrom?.secretKeyRef).toBeDefined();
    expect(container.lifecycle?.preStop).toBeDefined();
    expect(deployment.spec.template.spec.terminationGracePeriodSeconds ?? 30).toBeGreaterThan(preStopSeconds(container));
  });

  it('keeps a task center up through voluntary disruptions, on separate nodes', () => {
    const { deployment } = deploymentRunning('server');
    const { deployment: workers } = deploymentRunning('worker');
    const budgets = ofKind<Budget>('PodDisruptionBudget');
    expect(budgets).toHaveLength(1);
    const [budget] = budgets;
    expect(budget.spec.minAvailable).toBe(1);
    expect(budget.spec.minAvailable).toBeLessThan(deployment.spec.replicas!);
    expect(selects(budget.spec.selector.matchLabels, deployment.spec.template.metadata.labels), 'the budget selects the task centers').toBe(true);
    expect(selects(budget.spec.selector.matchLabels, workers.spec.template.metadata.labels), 'the budget selects the workers').toBe(false);
    const spread = (deployment.spec.template.spec as { topologySpreadConstraints?: { topologyKey: string; labelSelector: { matchLabels: Labels } }[] })
      .topologySpreadConstraints ?? [];
    const byNode = spread.find((c) => c.topologyKey === 'kubernetes.io/hostname');
    expect(byNode, 'a spread over kubernetes.io/hostname').toBeDefined();
    expect(selects(byNode!.labelSelector.matchLabels, deployment.spec.template.metadata.labels), 'the spread counts the task centers').toBe(true);
  });

  it('gives a worker longer to stop than its preStop and its shutdown timeout together', () => {
    const { deployment, container } = deploymentRunning('worker');
    const { values } = parseCli(container.args!);
    // Set explicitly: the right value is the longest task's, not the 30 s default.
    const shutdownMs = values.get('--shutdown-timeout') as number | undefined;
    expect(shutdownMs).toBeTypeOf('number');
    expect(container.lifecycle?.preStop).toBeDefined();
    const preStopMs = preStopSeconds(container) * 1000;
    const graceMs = (deployment.spec.template.spec.terminationGracePeriodSeconds ?? 30) * 1000;
    expect(graceMs).toBeGreaterThan(shutdownMs! + preStopMs);
    // The autoscaler owns the replica count: `kubectl apply` must not put one back.
    expect(deployment.spec.replicas).toBeUndefined();
  });

  it('probes a worker on /healthz at its metrics port, which Prometheus is told of', () => {
    const { deployment, container } = deploymentRunning('worker');
    const { values } = parseCli(container.args!);
    const port = (values.get('--metrics-port') as number | undefined) ?? Number(envValue(container, 'METRICS_PORT') ?? DEFAULT_METRICS_PORT);
    expect(port).toBeGreaterThan(0);
    expect(container.ports?.map((p) => p.containerPort)).toContain(port);
    expect(container.livenessProbe).toBeDefined();
    for (const probe of [container.livenessProbe, container.readinessProbe, container.startupProbe].filter((p) => p !== undefined)) {
      expect(probe.httpGet?.path).toBe('/healthz');
      expect(portNumber(container, probe.httpGet?.port)).toBe(port);
    }
    expect(deployment.spec.template.metadata.annotations?.['prometheus.io/port']).toBe(String(port));
  });

  it('runs a handlers module that exists, on every queue it uses, where it can write', () => {
    const { deployment, container } = deploymentRunning('worker');
    const { values } = parseCli(container.args!);
    const handlers = values.get('--handlers') as string;
    expect(handlers).toBe(EXAMPLE_HANDLERS);
    expect(existsSync(resolve(ROOT, handlers)), handlers).toBe(true);
    const served = parseQueues(values.get('--queues') as string).map((q) => q.name);
    expect(served).toEqual(expect.arrayContaining(parseQueues(EXAMPLE_QUEUES).map((q) => q.name)));
    // The root file system is read-only: the examples write under a mounted volume.
    const dataDir = envValue(container, 'TASKLINE_EXAMPLES_DIR');
    expect(dataDir).toBeDefined();
    const mount = container.volumeMounts?.find((m) => dataDir!.startsWith(`${m.mountPath.replace(/\/$/, '')}/`));
    expect(mount, `a volume mounted above ${dataDir}`).toBeDefined();
    expect(deployment.spec.template.spec.volumes?.map((v) => v.name)).toContain(mount!.name);
  });

  it('scales the worker Deployment on scheduler_queue_depth of the queues it serves', () => {
    const { deployment, container } = deploymentRunning('worker');
    const scalers = ofKind<ScaledObject>('ScaledObject');
    expect(scalers).toHaveLength(1);
    const [scaler] = scalers;
    expect(scaler.apiVersion).toBe('keda.sh/v1alpha1');
    expect(scaler.spec.scaleTargetRef.name).toBe(deployment.metadata?.name);
    expect(scaler.spec.scaleTargetRef.kind ?? 'Deployment').toBe('Deployment');
    const min = scaler.spec.minReplicaCount ?? 0;
    const max = scaler.spec.maxReplicaCount ?? 100;
    expect(min).toBeGreaterThanOrEqual(1);
    expect(max).toBeGreaterThan(min);
    expect(max).toBeLessThanOrEqual(100);
    const triggers = scaler.spec.triggers.filter((t) => t.type === 'prometheus');
    expect(triggers).toHaveLength(1);
    const { query, threshold, serverAddress } = triggers[0].metadata;
    expect(query).toMatch(/\bscheduler_queue_depth\{/);
    expect(Number(threshold)).toBeGreaterThan(0);
    expect(serverAddress).toMatch(/^https?:\/\//);
    // Summed over the queues the workers serve, and only those.
    const matcher = /queue_name=~"([^"]*)"/.exec(query)?.[1];
    expect(matcher, 'a queue_name=~"…" matcher').toBeDefined();
    const { values } = parseCli(container.args!);
    expect(matcher!.split('|').sort()).toEqual(parseQueues(values.get('--queues') as string).map((q) => q.name).sort());
  });

  it('points every Service at the pods of a Deployment, on a port they serve', () => {
    const services = ofKind<Service>('Service');
    expect(services.length).toBeGreaterThan(0);
    for (const service of services) {
      const targets = deployments.filter((d) => selects(service.spec.selector, d.spec.template.metadata.labels));
      expect(targets, `${service.metadata?.name}: Deployments selected`).toHaveLength(1);
      const [container] = targets[0].spec.template.spec.containers;
      for (const port of service.spec.ports) {
        expect(container.ports?.map((p) => p.containerPort), `${service.metadata?.name}: port ${port.name}`).toContain(portNumber(container, port.targetPort ?? port.port));
      }
    }
  });

  it('runs every container as a non-root user on a read-only root file system', () => {
    for (const deployment of deployments) {
      const pod = deployment.spec.template.spec;
      for (const container of pod.containers) {
        const user = container.securityContext?.runAsUser ?? pod.securityContext?.runAsUser;
        // The image's USER is a name (node): runAsNonRoot can only check a number.
        expect(container.securityContext?.runAsNonRoot ?? pod.securityContext?.runAsNonRoot, container.name).toBe(true);
        expect(user, container.name).toBeGreaterThan(0);
        expect(container.securityContext?.readOnlyRootFilesystem, container.name).toBe(true);
        expect(container.securityContext?.allowPrivilegeEscalation, container.name).toBe(false);
      }
    }
  });

  it('takes its secrets from the Secret that docs/kubernetes.md creates', () => {
    const docs = readFileSync(resolve(ROOT, 'docs/kubernetes.md'), 'utf8');
    const refs = deployments.flatMap((d) => d.spec.template.spec.containers.flatMap((c) => c.env ?? []))
      .map((e) => e.valueFrom?.secretKeyRef)
      .filter((r) => r !== undefined);
    expect(refs.length).toBeGreaterThan(0);
    const create = /kubectl create secret generic (\S+)([^`]*)/.exec(docs);
    expect(create, 'a `kubectl create secret generic` command').not.toBeNull();
    for (const ref of refs) {
      expect(ref.name).toBe(create![1]);
      expect(create![2]).toContain(`--from-literal=${ref.key}=`);
    }
    expect(readFileSync(resolve(ROOT, 'docs/deploy.md'), 'utf8')).toContain('kubernetes.md');
  });

  it('uses only options the built CLI shows in its help', () => {
    const help = (args: string[]) => execFileSync(process.execPath, [resolve(ROOT, 'dist/cli/main.js'), ...args, '--help'], { cwd: ROOT, encoding: 'utf8' });
    const global = help([]);
    for (const deployment of deployments) {
      for (const container of deployment.spec.template.spec.containers) {
        const [command, ...rest] = container.args ?? [];
        const text = help([command]);
        for (const flag of rest.filter((a) => a.startsWith('--')).map((a) => a.split('=')[0])) {
          const shown = new RegExp(`(^|\\s)${flag}(\\s|$)`, 'm');
          expect(shown.test(text) || shown.test(global), `taskline ${command} ${flag}`).toBe(true);
        }
      }
    }
  });
});
