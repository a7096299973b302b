/**
 * The running task center: the HTTP API listening on its port, metrics and alerts, following
 * the process's scheduler (cli/start-scheduler.ts) — `taskline server`, `taskline dev`.
 */
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
import type { Registry } from 'prom-client';
import type { Backend } from '../backend/contract.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import { AlertManager, type AlertOptions } from './alerts.js';
import { buildServer, type TaskCenterServer } from './app.js';
import { bindAddress } from './auth.js';
import { followScheduler } from './metrics.js';

export interface TaskCenterOptions {
  backend: Backend;
  /** Where the store is (`127.0.0.1:6379`, `./taskline.db`), named in the 503 of an outage. Default: only the store's kind. */
  storeAddress?: string;
  port: number;
  /** Default: 127.0.0.1 without a token, every interface with one. */
  host?: string;
  insecure?: boolean;
  apiToken?: string;
  readToken?: string;
  /** The scheduler running in this process (started and stopped by the caller), for metrics, events and alerts. Default: none. */
  scheduler?: Scheduler | null;
  registry?: Registry;
  logger?: FastifyServerOptions['logger'] | FastifyBaseLogger;
  alerts?: AlertOptions | null;
  /** Told what happened at start (the binding note, the URL). */
  onNote?: (message: string) => void;
}

export interface RunningTaskCenter {
  url: string;
  server: TaskCenterServer;
  scheduler: Scheduler | null;
  stop(): Promise<void>;
}

export async function startTaskCenter(options: TaskCenterOptions): Promise<RunningTaskCenter> {
  // Without a token, Host names other than loopback ones are refused (auth.ts openModeGuard) —
  // but for --insecure on another address, that address (any, on every interface).
  const wildcard = options.host === '0.0.0.0' || options.host === '::';
  const openHosts = options.insecure === true && options.host !== undefined ? (wildcard ? 'any' : [options.host.replace(/^\[|\]$/g, '').toLowerCase()]) : [];
  const server = await buildServer({
    openHosts,
    backend: options.backend,
    storeAddress: options.storeAddress,
    apiToken: options.apiToken,
    readToken: options.readToken,
    registry: options.registry,
    logger: options.logger,
  });
  const { host, note } = bindAddress({ host: options.host, auth: server.auth, insecure: options.insecure === true });
  if (note) {
    server.app.log.warn(note);
    options.onNote?.(note);
  }
  const scheduler = options.scheduler ?? null;
  const unfollow = scheduler ? followScheduler(scheduler, server.metrics, server.hub) : null;
  const alerts = options.alerts ? new AlertManager(options.alerts, { backend: options.backend, hub: server.hub, scheduler, log: server.app.log }) : null;
  await server.app.listen({ port: options.port, host });
  alerts?.start();
  const address = server.app.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}`,
    server,
    scheduler,
    async stop() {
      await alerts?.stop();
      unfollow?.();
      await server.app.close();
    },
  };
}
