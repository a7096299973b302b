// A chaos-suite worker in its own process (chaos/run.mjs starts, kills, freezes and replaces it).
// Env: STORE (a store URL), PREFIX (Redis key prefix), LOG (a file of its own), LEASE_MS,
// CONCURRENCY. For each run of the `chaos` handler it appends "s <id> <attempt> <ms>" when the run
// starts, "d <id> <attempt> <ms>" when the handler returns, "x <id> <attempt> <ms>" when the store
// refuses its result as late (wall-clock ms), each written at once so
// that a SIGKILL loses nothing written before it. Prints "ready" once it claims tasks.
import { openSync, writeSync } from 'node:fs';
import { connect, Worker } from '../dist/index.js';

const env = process.env;
const log = openSync(env.LOG, 'a');
const note = (line) => writeSync(log, `${line} ${Date.now()}\n`);

const backend = await connect(env.STORE, env.PREFIX ? { prefix: env.PREFIX } : {});
const worker = new Worker(backend, {
  concurrency: Number(env.CONCURRENCY ?? 10),
  leaseMs: Number(env.LEASE_MS ?? 1500),
  recoverInterval: 250,
  shutdownTimeout: 5000,
});

worker.handle('chaos', async (payload, ctx) => {
  note(`s ${ctx.task.id} ${ctx.task.attempt}`);
  await new Promise((resolve) => setTimeout(resolve, payload.ms));
  note(`d ${ctx.task.id} ${ctx.task.attempt}`);
  return null;
});
// A late result the store refused (the run's lease had been written off): "x <id> <attempt> <ms>".
worker.on('stale', (task) => note(`x ${task.id} ${task.attempt}`));
// Store errors while Redis restarts are expected: the worker retries them itself.
worker.on('error', () => undefined);

const stop = () => {
  void worker.stop().then(() => backend.close()).finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

await worker.start();
process.stdout.write('ready\n');
