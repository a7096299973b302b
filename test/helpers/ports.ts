/**
 * Ports for the servers tests start. The kernel's ephemeral range (32768–60999 here) is where
 * every outgoing connection takes its local port, so a port it once handed out and we closed can
 * be taken by a client socket before the child process binds it. Ports come instead from
 * 15000–21999, below that range (and, plus 10,000 for a Redis Cluster bus, still below it), in a
 * slice per Vitest worker, so two test files running side by side never pick the same one; each
 * candidate is probed free before it is handed out, and never handed out twice by one process.
 */
import { createServer } from 'node:net';

const FIRST = 15_000;
const SLICES = 4;
const SLICE = 1_750;
const handedOut = new Set<number>();

function slice(): number {
  const pool = Number(process.env.VITEST_POOL_ID ?? process.env.VITEST_WORKER_ID ?? 1);
  return (Number.isFinite(pool) ? Math.max(0, pool - 1) : 0) % SLICES;
}

function probe(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A port no one listens on now, that this process has not handed out before. `bus`: a Redis
 * Cluster node's, whose cluster bus binds the port plus 10,000 too (25672, say, is RabbitMQ's),
 * so that one must be free as well.
 */
export async function freePort(options: { bus?: boolean } = {}): Promise<number> {
  const base = FIRST + slice() * SLICE;
  const start = Math.floor(Math.random() * SLICE);
  for (let i = 0; i < SLICE; i++) {
    const port = base + ((start + i) % SLICE);
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if ((await probe(port)) && (!options.bus || (await probe(port + 10_000)))) return port;
  }
  throw new Error(`no free port in ${base}–${base + SLICE - 1}`);
}
