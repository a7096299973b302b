/** A worker's Prometheus endpoint on METRICS_PORT: GET /metrics (and /healthz). */
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

export interface MetricsEndpoint {
  /** The address the server is bound to, as the OS reports it: `0.0.0.0` is every IPv4 interface. */
  host: string;
  port: number;
  /** `http://<host>:<port>/metrics`, with an IPv6 host in brackets. */
  url: string;
  close(): Promise<void>;
}

/** Serves on every interface by default: Prometheus scrapes workers from other hosts. */
export async function serveMetrics(registry: Registry, port: number, host = '0.0.0.0'): Promise<MetricsEndpoint> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/metrics') {
      registry
        .metrics()
        .then((text) => {
          res.writeHead(200, { 'content-type': registry.contentType });
          res.end(text);
        })
        .catch((error: unknown) => {
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end(String(error));
        });
      return;
    }
    if (req.method === 'GET' && path === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"status":"healthy"}');
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":{"code":"TL_NOT_FOUND","message":"only /metrics and /healthz here"}}');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const bound = typeof address === 'object' && address ? { host: address.address, port: address.port } : { host, port };
  return {
    ...bound,
    url: `http://${bound.host.includes(':') ? `[${bound.host}]` : bound.host}:${bound.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
