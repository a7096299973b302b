/** A worker's Prometheus endpoint on METRICS_PORT: GET /metrics (and /healthz). */
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

export interface MetricsEndpoint {
  port: number;
  close(): Promise<void>;
}

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
  return {
    port: typeof address === 'object' && address ? address.port : port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
