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
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    // HEAD answers as GET does, without the body.
    const send = (status: number, type: string, body: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), ...headers });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    const error = (status: number, code: string, message: string, headers: Record<string, string> = {}) =>
      send(status, 'application/json', JSON.stringify({ error: { code, message } }), headers);
    if (path === '/metrics' || path === '/healthz') {
      if (method !== 'GET') return error(405, 'TL_METHOD_NOT_ALLOWED', `${path} answers GET and HEAD`, { allow: 'GET, HEAD' });
      if (path === '/healthz') return send(200, 'application/json', '{"status":"healthy"}');
      registry.metrics().then(
        (text) => send(200, registry.contentType, text),
        () => error(500, 'TL_INTERNAL', 'the metrics could not be collected'),
      );
      return;
    }
    error(404, 'TL_NOT_FOUND', 'only /metrics and /healthz here');
  });
  // What Node's parser refuses (headers too large, a malformed request) answers in the same shape.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    const [status, code] = err.code === 'HPE_HEADER_OVERFLOW' ? [431, 'TL_HEADERS_TOO_LARGE'] : [400, 'TL_INVALID_REQUEST'];
    const body = JSON.stringify({ error: { code, message: status === 431 ? 'the request headers are too large' : 'the request is not valid HTTP/1.1' } });
    socket.end(`HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
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
