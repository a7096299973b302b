// One side of a workflow measurement in its own process, driven by bench/workflows.mjs over IPC.
// Loads only the library under test (workflows-taskline.mjs or workflows-bullmq.mjs).
//
// role 'worker' (one worker, already running when the workflows are submitted):
//   parent → { type: 'init', role: 'worker', system, url, params: { concurrency, chainLength } }
//   child  → { type: 'ready' }                     (started, idle)
//   parent → { type: 'expect', tag, count, value } (count the next `count` finished workflows)
//   child  → { type: 'expecting', tag }
//   child  → { type: 'finished', tag, at, cpuMicros, wrong }  (wall clock of the last one's completion)
// role 'producer':
//   parent → { type: 'init', role: 'producer', system, url, params: {} }
//   child  → { type: 'ready' }                     (connected)
//   parent → { type: 'submit', tag, kind: 'chord' | 'chains', size, count, length, inFlight }
//   child  → { type: 'submitted', tag, startedAt, submitMs, cpuMicros }
// both: parent → { type: 'exit' }, child → { type: 'done' }, then it closes and exits. An error
// is sent as { type: 'error', message } and the child exits 1 (a failed attempt too: a benchmark
// run has none).
import { performance } from 'node:perf_hooks';

const QUEUE = 'bench';

/** Wall-clock ms with sub-ms precision, comparable across processes on one host. */
const wallNow = () => performance.timeOrigin + performance.now();

function cpuMicros(since) {
  const used = process.cpuUsage(since);
  return used.user + used.system;
}

const inbox = [];
const waiters = [];
process.on('message', (message) => {
  const waiter = waiters.findIndex((w) => w.types.includes(message.type));
  if (waiter >= 0) waiters.splice(waiter, 1)[0].resolve(message);
  else inbox.push(message);
});
process.on('disconnect', () => process.exit(1));

/** The next message of one of `types` (one waiter for all of them, so none is left behind). */
function receive(...types) {
  const index = inbox.findIndex((m) => types.includes(m.type));
  if (index >= 0) return Promise.resolve(inbox.splice(index, 1)[0]);
  return new Promise((resolve) => waiters.push({ types, resolve }));
}

const send = (message) => new Promise((resolve) => process.send(message, () => resolve()));

let failing = false;
async function fail(error) {
  if (failing) return;
  failing = true;
  try {
    await send({ type: 'error', message: error instanceof Error ? error.stack ?? error.message : String(error) });
  } finally {
    process.exit(1);
  }
}

async function loadSystem(name) {
  if (name === 'taskline') return import('./workflows-taskline.mjs');
  if (name === 'bullmq') return import('./workflows-bullmq.mjs');
  throw new Error(`unknown system ${name}`);
}

/** Runs `submitOne()` `count` times with `inFlight` calls outstanding (async lanes). */
async function inLanes(count, inFlight, submitOne) {
  let next = 0;
  const lane = async () => {
    while (next < count) {
      next += 1;
      await submitOne();
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, lane));
}

async function runWorker(system, url, { concurrency, chainLength }) {
  let expected = null;
  const onFinal = (value) => {
    const e = expected;
    if (e === null) return void fail(new Error(`a workflow finished while none was expected (value ${value})`));
    e.seen += 1;
    if (value !== e.value) e.wrong += 1;
    if (e.seen === e.count) {
      const at = wallNow();
      expected = null;
      void send({ type: 'finished', tag: e.tag, at, cpuMicros: cpuMicros(e.cpu), wrong: e.wrong });
    }
  };
  const consumer = await system.createConsumer({ url, queue: QUEUE, concurrency, chainLength, onFinal, onError: fail });
  await consumer.start();
  // Let the worker reach its idle wait on the store before anything is submitted.
  await new Promise((resolve) => setTimeout(resolve, 500));
  await send({ type: 'ready' });
  for (;;) {
    const message = await receive('expect', 'exit');
    if (message.type === 'exit') break;
    expected = { tag: message.tag, count: message.count, value: message.value, seen: 0, wrong: 0, cpu: process.cpuUsage() };
    await send({ type: 'expecting', tag: message.tag });
  }
  return () => consumer.stop();
}

async function runProducer(system, url) {
  const producer = await system.createProducer({ url, queue: QUEUE });
  await send({ type: 'ready' });
  for (;;) {
    const message = await receive('submit', 'exit');
    if (message.type === 'exit') break;
    const startedAt = wallNow();
    const started = performance.now();
    const cpu = process.cpuUsage();
    if (message.kind === 'chord') await producer.chord(message.size);
    else await inLanes(message.count, message.inFlight, () => producer.chain(message.length));
    const submitMs = performance.now() - started;
    await send({ type: 'submitted', tag: message.tag, startedAt, submitMs, cpuMicros: cpuMicros(cpu) });
  }
  return () => producer.close();
}

async function main() {
  const init = await receive('init');
  const system = await loadSystem(init.system);
  const close = init.role === 'worker' ? await runWorker(system, init.url, init.params) : await runProducer(system, init.url);
  await send({ type: 'done' });
  await Promise.race([close(), new Promise((resolve) => setTimeout(resolve, 5_000))]);
  process.exit(0);
}

main().catch(fail);
