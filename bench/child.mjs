// One measurement in its own process, driven by run.mjs over IPC:
//   parent → { type: 'init', system, mode, url, params }
//   child  → { type: 'ready' }            (connected, warmed up; the parent takes its "before" snapshot)
//   parent → { type: 'go' }
//   child  → { type: 'done', result }     (the parent takes its "after" snapshot)
//   parent → { type: 'exit' }             (the child closes its connections and exits)
// Errors are sent as { type: 'error', message } and the child exits 1. Only the library under test
// is loaded, so the worker's RSS is its own.
import { performance } from 'node:perf_hooks';
import { clearInterval, setInterval } from 'node:timers';

const QUEUE = 'bench';
const WARMUP_QUEUE = 'bench-warmup';

/** Wall-clock ms with sub-ms precision, comparable across processes on one host. */
const wallNow = () => performance.timeOrigin + performance.now();

/** ~100 bytes of JSON: {"t":1764441495123.456,"i":12345,"pad":"xxx…"}. */
const PAD = 'x'.repeat(58);
const payload = (i, t = 0) => ({ t, i, pad: PAD });

/** CPU time (user + system, µs) this process used since `since` (a process.cpuUsage() value). */
function cpuMicros(since) {
  const used = process.cpuUsage(since);
  return used.user + used.system;
}

const inbox = [];
const waiters = [];
process.on('message', (message) => {
  const waiter = waiters.findIndex((w) => w.type === message.type);
  if (waiter >= 0) waiters.splice(waiter, 1)[0].resolve(message);
  else inbox.push(message);
});
// Never outlive the parent.
process.on('disconnect', () => process.exit(1));

function receive(type) {
  const index = inbox.findIndex((m) => m.type === type);
  if (index >= 0) return Promise.resolve(inbox.splice(index, 1)[0]);
  return new Promise((resolve) => waiters.push({ type, resolve }));
}

const send = (message) => new Promise((resolve) => process.send(message, () => resolve()));

let errors = 0;
let firstError = null;
function onError(error) {
  errors += 1;
  firstError ??= error instanceof Error ? error.message : String(error);
}

async function loadSystem(name) {
  // 'sqlite' is Taskline with a sqlite: URL (the adapter connects to whatever URL it is given).
  if (name === 'taskline' || name === 'sqlite') return import('./system-taskline.mjs');
  if (name === 'bullmq') return import('./system-bullmq.mjs');
  throw new Error(`unknown system ${name}`);
}

/** Enqueues `count` tasks one at a time with `inFlight` outstanding. */
async function enqueueOneByOne(producer, count, inFlight) {
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const i = next++;
      await producer.one(payload(i));
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, lane));
}

async function enqueueBatches(producer, count, batch) {
  for (let start = 0; start < count; start += batch) {
    const size = Math.min(batch, count - start);
    await producer.many(Array.from({ length: size }, (_, k) => payload(start + k)));
  }
}

const modes = {
  /** Scenario 1: one-by-one enqueue with a fixed number in flight. */
  async 'enqueue-one'(system, url, { count, inFlight, warmup }) {
    const warm = await system.createProducer({ url, queue: WARMUP_QUEUE });
    await enqueueOneByOne(warm, warmup, inFlight);
    await warm.close();
    const producer = await system.createProducer({ url, queue: QUEUE });
    await ready();
    const started = performance.now();
    const cpu = process.cpuUsage();
    await enqueueOneByOne(producer, count, inFlight);
    const elapsedMs = performance.now() - started;
    return { result: { count, elapsedMs, perSecond: (count / elapsedMs) * 1000, cpuMicrosPerTask: cpuMicros(cpu) / count }, close: () => producer.close() };
  },

  /** Scenario 2 (and the fill of scenario 3): enqueue in batches. */
  async 'enqueue-bulk'(system, url, { count, batch, warmup }) {
    if (warmup > 0) {
      const warm = await system.createProducer({ url, queue: WARMUP_QUEUE });
      await enqueueBatches(warm, warmup, batch);
      await warm.close();
    }
    const producer = await system.createProducer({ url, queue: QUEUE });
    await ready();
    const started = performance.now();
    const cpu = process.cpuUsage();
    await enqueueBatches(producer, count, batch);
    const elapsedMs = performance.now() - started;
    return { result: { count, elapsedMs, perSecond: (count / elapsedMs) * 1000, cpuMicrosPerTask: cpuMicros(cpu) / count }, close: () => producer.close() };
  },

  /** Scenario 3: drain `count` pre-enqueued no-op tasks; time until the last completion is stored. */
  async process(system, url, { count, concurrency }) {
    let completed = 0;
    let finished;
    const allDone = new Promise((resolve) => (finished = resolve));
    let rssPeak = 0;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage.rss())), 100);
    const consumer = await system.createConsumer({
      url, queue: QUEUE, concurrency, onError,
      onCompleted: () => {
        completed += 1;
        if (completed === count) finished(performance.now());
      },
    });
    await ready();
    const started = performance.now();
    const cpu = process.cpuUsage();
    await consumer.start();
    const ended = await allDone;
    const cpuMicrosPerTask = cpuMicros(cpu) / count;
    clearInterval(sampler);
    const elapsedMs = ended - started;
    const maxRssMB = process.resourceUsage().maxRSS / 1024;
    return {
      result: { count, elapsedMs, perSecond: (count / elapsedMs) * 1000, cpuMicrosPerTask, maxRssMB, sampledPeakRssMB: rssPeak / 2 ** 20, errors, firstError },
      close: () => consumer.stop(),
    };
  },

  /** Scenario 4, worker side: records enqueue→handler-start latency of every task. */
  async 'latency-worker'(system, url, { concurrency, total, skip }) {
    const latencies = new Float64Array(total);
    let seen = 0;
    let finished;
    const allSeen = new Promise((resolve) => (finished = resolve));
    const consumer = await system.createConsumer({
      url, queue: QUEUE, concurrency, onError,
      onStart: (data) => {
        latencies[data.i] = wallNow() - data.t;
        seen += 1;
        if (seen === total) finished();
      },
      onCompleted: () => undefined,
    });
    await consumer.start();
    // Let the worker reach its idle wait on the store before the producer starts.
    await new Promise((resolve) => setTimeout(resolve, 500));
    await ready();
    await allSeen;
    const measured = Array.from(latencies.subarray(skip)).sort((a, b) => a - b);
    const pick = (q) => measured[Math.min(measured.length - 1, Math.floor(q * measured.length))];
    return {
      result: { measured: measured.length, p50: pick(0.5), p90: pick(0.9), p99: pick(0.99), max: measured[measured.length - 1], errors, firstError },
      close: () => consumer.stop(),
    };
  },

  /** Scenario 4, producer side: enqueues at a steady rate, each task stamped just before its enqueue. */
  async 'latency-producer'(system, url, { rate, total }) {
    const producer = await system.createProducer({ url, queue: QUEUE });
    // Warm the client's code path on another queue so the first measured sends are not cold.
    const warm = await system.createProducer({ url, queue: WARMUP_QUEUE });
    await enqueueOneByOne(warm, 500, 10);
    await warm.close();
    await ready();
    const started = performance.now();
    let sent = 0;
    let maxLagMs = 0;
    const pending = [];
    await new Promise((resolve, reject) => {
      const tick = () => {
        const due = Math.min(total, Math.floor(((performance.now() - started) * rate) / 1000) + 1);
        if (due - sent > 1) maxLagMs = Math.max(maxLagMs, ((due - sent - 1) * 1000) / rate);
        while (sent < due) {
          const i = sent++;
          pending.push(producer.one(payload(i, wallNow())).catch(reject));
        }
        if (sent >= total) resolve();
        else setTimeout(tick, 1);
      };
      tick();
    });
    await Promise.all(pending);
    const elapsedMs = performance.now() - started;
    return { result: { sent, elapsedMs, achievedRate: (sent / elapsedMs) * 1000, maxLagMs }, close: () => producer.close() };
  },

  /** Extra: one worker with nothing to do, so the parent can count its Redis commands per second. */
  async idle(system, url, { concurrency }) {
    const consumer = await system.createConsumer({ url, queue: QUEUE, concurrency, onError, onCompleted: () => undefined });
    await consumer.start();
    await ready();
    return { result: { errors, firstError }, close: () => consumer.stop() };
  },
};

async function ready() {
  await send({ type: 'ready' });
  await receive('go');
}

async function main() {
  const init = await receive('init');
  const mode = modes[init.mode];
  if (!mode) throw new Error(`unknown mode ${init.mode}`);
  const system = await loadSystem(init.system);
  const { result, close } = await mode(system, init.url, init.params);
  await send({ type: 'done', result });
  await receive('exit');
  await Promise.race([close(), new Promise((resolve) => setTimeout(resolve, 5_000))]);
  process.exit(0);
}

main().catch(async (error) => {
  try {
    await send({ type: 'error', message: error instanceof Error ? error.stack ?? error.message : String(error) });
  } finally {
    process.exit(1);
  }
});
