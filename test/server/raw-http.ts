/**
 * HTTP written by hand on a TCP socket, for what inject() cannot send: bytes Node's HTTP parser
 * refuses before Fastify sees a request (an unknown method, headers too large, a broken line).
 */
import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: string;
}

/** A request with `Connection: close`, so the server ends the socket after its answer. */
export function requestText(method: string, path: string, options: { headers?: Record<string, string>; body?: string } = {}): string {
  const headers: Record<string, string> = { host: '127.0.0.1', connection: 'close', ...options.headers };
  if (options.body !== undefined) headers['content-length'] ??= String(Buffer.byteLength(options.body));
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
  return `${method} ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n${options.body ?? ''}`;
}

/**
 * Sends the bytes and reads until the server closes the connection; rejects when it keeps the
 * socket open past `timeoutMs` (an answer must end the connection it refuses).
 */
export function rawExchange(port: number, bytes: string, timeoutMs = 5000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server kept the socket open; read so far: ${Buffer.concat(chunks).toString('latin1').slice(0, 300)}`));
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // The server may close while the client still writes (a refused request): keep what was read.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      try {
        resolve(parseResponse(Buffer.concat(chunks).toString('utf8')));
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
    socket.write(bytes);
  });
}

function parseResponse(text: string): RawResponse {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) throw new Error(`no complete HTTP response: ${JSON.stringify(text.slice(0, 300))}`);
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const match = /^HTTP\/1\.1 (\d{3}) /.exec(statusLine);
  if (!match) throw new Error(`not an HTTP/1.1 status line: ${JSON.stringify(statusLine)}`);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(match[1]), headers, body: text.slice(end + 4) };
}
