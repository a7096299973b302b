/**
 * `taskline server` processes on one store, for the failover tests: started on free ports, asked
 * over their HTTP API who leads, killed, frozen, replaced — and what they fired, read back from
 * the store.
 */
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { freePort } from '../helpers/ports.js';
import { afterEach, beforeEach, expect } from 'vitest';
import type { Backend } from '../../src/index.js';
import { CliProcess, cliStore, type BackendKind, type CliStore } from '../cli/helpers.js';
import { eventually } from '../helpers/processes.js';

export { freePort };

export interface ServerInstance {
  process: CliProcess;
  url: string;
  /** Its scheduler's id, from the banner. */
  id: string;
  /** SIGSTOPped by freeze() (its API does not answer). */
  frozen: boolean;
}

interface SchedulerEntry {
  id: string;
  pid: number;
  leader: boolean;
  epoch: number | null;
}

interface SchedulersReply {
  schedulers: SchedulerEntry[];
  leader: { id: string; epoch: number } | null;
}

export class ServerGroup {
  readonly all: ServerInstance[] = [];

  constructor(private readonly store: CliStore) {}

  /** Starts one server and waits for its banner. */
  /** Starts one server and waits for its banner; `backendArgs` replace the store's `--backend …` arguments. */
  async start(options: { env?: Record<string, string>; backendArgs?: string[] } = {}): Promise<ServerInstance> {
    const port = await freePort();
    const process = new CliProcess([...(options.backendArgs ?? this.store.args), 'server', '--port', String(port)], { cwd: this.store.dir, env: options.env });
    const [, id] = await process.waitFor(/scheduler {3}running \((scheduler-[^;]+);[^\n]*\n[\s\S]*^ready/m, 30_000);
    const server = { process, url: `http://127.0.0.1:${port}`, id, frozen: false };
    this.all.push(server);
    return server;
  }

  /** Running servers (frozen ones included). */
  live(): ServerInstance[] {
    return this.all.filter((s) => s.process.running);
  }

  /** Running servers whose API answers. */
  answering(): ServerInstance[] {
    return this.live().filter((s) => !s.frozen);
  }

  freeze(server: ServerInstance): void {
    server.frozen = true;
    server.process.signal('SIGSTOP');
  }

  thaw(server: ServerInstance): void {
    server.process.signal('SIGCONT');
    server.frozen = false;
  }

  async schedulers(via: ServerInstance): Promise<SchedulersReply> {
    const response = await fetch(`${via.url}/api/v1/schedulers`, { signal: AbortSignal.timeout(5_000) });
    expect(response.status).toBe(200);
    return (await response.json()) as SchedulersReply;
  }

  /**
   * The leader as the API of an answering server names it, once it is a running server of this
   * group other than `except` (after a takeover that may take a lease's time).
   */
  async leader(options: { except?: ServerInstance; timeoutMs?: number } = {}): Promise<{ server: ServerInstance; epoch: number }> {
    return eventually(async () => {
      const via = this.answering().find((s) => s !== options.except) ?? this.answering()[0];
      const reply = await this.schedulers(via);
      const entry = reply.schedulers.find((s) => s.leader);
      if (!entry || !reply.leader || reply.leader.id !== entry.id) return null;
      const server = this.live().find((s) => s.id === entry.id && s.process.pid === entry.pid && s !== options.except);
      return server ? { server, epoch: entry.epoch! } : null;
    }, options.timeoutMs ?? 15_000, 100);
  }

  /** The instance label of scheduler_leader 1 in a server's /metrics. */
  async metricLeader(via: ServerInstance): Promise<string[]> {
    const text = await (await fetch(`${via.url}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
    return [...text.matchAll(/^scheduler_leader\{instance="([^"]+)"\} 1$/gm)].map((m) => m[1]);
  }

  /** SIGTERM to every live server; waits for them to exit. */
  async stopAll(): Promise<void> {
    const live = this.live();
    for (const s of live) s.process.signal('SIGTERM');
    await Promise.all(live.map((s) => s.process.exited));
  }

  async destroy(): Promise<void> {
    await Promise.all(this.all.map((s) => s.process.kill()));
  }
}

export interface ServerTest {
  readonly store: CliStore;
  /** An in-test backend on the store, for setting up and reading back. */
  readonly backend: Backend;
  readonly servers: ServerGroup;
}

/** A fresh store and server group before each test of the enclosing block; every server killed and the store removed after. */
export function useServers(kind: BackendKind): ServerTest {
  let current: { store: CliStore; backend: Backend; servers: ServerGroup } | null = null;
  beforeEach(async () => {
    const store = await cliStore(kind);
    current = { store, backend: await store.open(), servers: new ServerGroup(store) };
  });
  afterEach(async () => {
    const done = current;
    current = null;
    if (!done) return;
    await done.servers.destroy();
    await done.store.cleanup();
  });
  const get = () => {
    if (!current) throw new Error('the servers are only there inside a test');
    return current;
  };
  return {
    get store() {
      return get().store;
    },
    get backend() {
      return get().backend;
    },
    get servers() {
      return get().servers;
    },
  };
}

export interface StoredFire {
  nominalAt: number;
  createdAt: number;
}

/** The tasks each schedule enqueued into `default`, by schedule id, in nominal order (the servers run no worker: all stay queued). */
export async function storedFires(backend: Backend): Promise<Map<string, StoredFire[]>> {
  const bySchedule = new Map<string, StoredFire[]>();
  for (const state of ['queued', 'scheduled'] as const) {
    let cursor: string | undefined;
    do {
      const page = await backend.listTasks('default', state, { limit: 1000, cursor });
      for (const task of page.tasks) {
        const [, id, , nominal] = task.id.split(':');
        const list = bySchedule.get(id) ?? [];
        list.push({ nominalAt: Number(nominal), createdAt: task.createdAt });
        bySchedule.set(id, list);
      }
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }
  for (const list of bySchedule.values()) list.sort((a, b) => a.nominalAt - b.nominalAt);
  return bySchedule;
}

/**
 * Every schedule fired once per period from `from` to `to` (store ms): no duplicate, no slot
 * without a task, each enqueued no earlier than its nominal time and at most `maxLagMs` after.
 */
export function expectEveryFire(fires: StoredFire[], name: string, periodMs: number, from: number, to: number, maxLagMs: number): void {
  const nominals = fires.map((f) => f.nominalAt);
  expect(new Set(nominals).size, `${name}: duplicate fires`).toBe(nominals.length);
  const inRange = fires.filter((f) => f.nominalAt >= from && f.nominalAt <= to);
  const expected = Math.floor(to / periodMs) - Math.ceil(from / periodMs) + 1;
  const missing: number[] = [];
  for (let t = Math.ceil(from / periodMs) * periodMs; t <= to; t += periodMs) if (!nominals.includes(t)) missing.push(t);
  expect(missing.map((t) => new Date(t).toISOString()), `${name}: nominal times without a fire`).toEqual([]);
  expect(inRange.length).toBe(expected);
  const early = fires.filter((f) => f.createdAt < f.nominalAt);
  expect(early, `${name}: fires enqueued before their time`).toEqual([]);
  const late = fires.filter((f) => f.createdAt - f.nominalAt > maxLagMs);
  expect(late.map((f) => `${new Date(f.nominalAt).toISOString()} +${f.createdAt - f.nominalAt} ms`), `${name}: fires later than ${maxLagMs} ms`).toEqual([]);
}

/** Median and max of numbers (for the reported lags). */
export function medianMax(values: number[]): { median: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return { median: sorted.length === 0 ? NaN : sorted[Math.floor((sorted.length - 1) / 2)], max: sorted.length === 0 ? NaN : sorted[sorted.length - 1] };
}

/** A TCP proxy in front of Redis that can cut every connection through it and refuse new ones (a process that loses the store). */
export class CuttableProxy {
  private readonly sockets = new Set<Socket>();
  private cut = false;
  private constructor(private readonly server: Server, readonly port: number) {}

  static async start(target: { host: string; port: number }): Promise<CuttableProxy> {
    let proxy: CuttableProxy | null = null;
    const server = createServer((client) => {
      if (!proxy || proxy.cut) {
        client.destroy();
        return;
      }
      const upstream = connect(target.port, target.host);
      for (const socket of [client, upstream]) {
        proxy.sockets.add(socket);
        socket.on('error', () => undefined);
        socket.on('close', () => proxy?.sockets.delete(socket));
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = new CuttableProxy(server, (server.address() as AddressInfo).port);
    return proxy;
  }

  /** Drops every connection and refuses new ones until `restore()`. */
  sever(): void {
    this.cut = true;
    for (const socket of this.sockets) socket.destroy();
  }

  restore(): void {
    this.cut = false;
  }

  async close(): Promise<void> {
    this.sever();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
