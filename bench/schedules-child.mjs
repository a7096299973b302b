// One "app instance" of the schedule benchmark, driven by bench/schedules.mjs over IPC:
//   parent → { type: 'init', system, url, params }
//   child  → { type: 'ready', setupMs }        (schedules upserted, scheduler and worker running)
//   parent → { type: 'stop' }
//   child  → { type: 'starts', chunk }…        (handler starts: [id, wall ms, …] flattened)
//   child  → { type: 'done', result }          (then the child exits)
// Errors are sent as { type: 'error', message } and the child exits 1. Only the library under
// test is loaded. The child never outlives its parent nor its own hard limit (params.limitMs).
import { performance } from 'node:perf_hooks';

/** Wall-clock ms with sub-ms precision, comparable across processes on one host. */
const wallNow = () => performance.timeOrigin + performance.now();

const send = (message) => new Promise((resolve) => process.send(message, () => resolve()));
process.on('disconnect', () => process.exit(1));

const inbox = [];
const waiters = [];
process.on('message', (message) => {
  const i = waiters.findIndex((w) => w.type === message.type);
  if (i >= 0) waiters.splice(i, 1)[0].resolve(message);
  else inbox.push(message);
});
function receive(type) {
  const i = inbox.findIndex((m) => m.type === type);
  if (i >= 0) return Promise.resolve(inbox.splice(i, 1)[0]);
  return new Promise((resolve) => waiters.push({ type, resolve }));
}

let errors = 0;
let firstError = null;
function onError(error) {
  errors += 1;
  firstError ??= error instanceof Error ? error.message : String(error);
}

/** Every `period` seconds (a divisor of 60), schedule i at second i mod period: `period` 1 is every second. */
const cronOf = (i, period) => (period === 1 ? '* * * * * *' : `${i % period}-59/${period} * * * * *`);

/** Schedule ids s0000…: the same list in every instance. */
const scheduleIds = (count) => Array.from({ length: count }, (_, i) => `s${String(i).padStart(4, '0')}`);

/**
 * --trace-ticks: times the store calls of each leader tick from the outside, by wrapping them:
 * fire (the fires of the tick, one call per queue) then advanceSchedules (the run state, fenced).
 * Each entry: [fire start wall ms, ms in fire, ms in advanceSchedules, fires sent]. Reloads of
 * the schedules (listSchedules, when their version moved) are counted apart.
 */
function traceSchedulerTicks(backend) {
  const ticks = [];
  const reloads = [];
  let current = null;
  const wrap = (name, before, after) => {
    const original = backend[name].bind(backend);
    backend[name] = async (...args) => {
      const state = before?.(args);
      const value = await original(...args);
      after?.(args, value, state);
      return value;
    };
  };
  wrap('listSchedules', () => wallNow(), (_a, _v, at) => reloads.push(Math.round(wallNow() - at)));
  wrap(
    'fire',
    (args) => {
      current = { start: wallNow(), fires: args[0].reduce((n, b) => n + b.fires.length, 0) };
    },
    () => current && (current.fireEnd = wallNow()),
  );
  wrap(
    'advanceSchedules',
    () => current && (current.advanceStart = wallNow()),
    () => {
      if (!current || current.fireEnd === undefined) return;
      const c = current;
      const r = (x) => Math.round(x * 10) / 10;
      ticks.push([Math.round(c.start), r(c.fireEnd - c.start), r(wallNow() - c.advanceStart), c.fires]);
      current = null;
    },
  );
  ticks.reloads = reloads;
  return ticks;
}

/**
 * Taskline: the start-up of an app instance with config-file schedules — reconcile them
 * (upsert by id, what `taskline server` does), then a Scheduler and a Worker on one connection.
 */
async function startTaskline({ url, prefix, queue, count, period, concurrency, taskType, traceTicks }, starts) {
  const { connect, Scheduler, ScheduleService, Worker } = await import('../dist/index.js');
  const backend = await connect(url, { prefix });
  const service = new ScheduleService(backend);
  await service.reconcile(
    scheduleIds(count).map((id, i) => ({ id, cron: cronOf(i, period), task: { type: taskType, payload: { i }, queue }, overlap: 'allow' })),
  );
  const ticks = traceTicks ? traceSchedulerTicks(backend) : null;
  const scheduler = new Scheduler(backend);
  const leadership = [];
  scheduler.on('leader', (epoch) => leadership.push({ at: Date.now(), event: 'leader', epoch }));
  scheduler.on('follower', () => leadership.push({ at: Date.now(), event: 'follower' }));
  scheduler.on('error', onError);
  // Fires this instance made as a standby (the leader had not handled them within the takeover delay).
  let takeoverFires = 0;
  scheduler.on('fire', (fire) => {
    if (fire.takeover) takeoverFires += 1;
  });
  const worker = new Worker(backend, { concurrency, queues: [queue] });
  worker.handle(taskType, (_payload, ctx) => {
    starts.push(ctx.task.id, wallNow(), ctx.task.createdAt);
  });
  worker.on('failed', (_task, error) => onError(error));
  worker.on('error', (error) => onError(error));
  scheduler.start();
  await worker.start();
  return {
    info: () => ({ leadership, wasLeader: leadership.some((l) => l.event === 'leader'), takeoverFires, ticks: ticks ?? undefined, reloadMs: ticks?.reloads }),
    async stop() {
      await scheduler.stop();
      await worker.stop({ timeout: 2_000 });
      await backend.close();
    },
  };
}

/**
 * BullMQ: the start-up of an app instance — upsert every job scheduler (`every: 1000`), then a
 * Worker. BullMQ makes a scheduler's next job when its current one starts processing, in the
 * worker, so the workers are the schedulers.
 */
async function startBullmq({ url, prefix, queue: queueName, count, period, concurrency, taskType }, starts) {
  const { Queue, Worker } = await import('bullmq');
  const { hostname, port } = new URL(url);
  const connection = (extra = {}) => ({ host: hostname, port: Number(port), ...extra });
  const queue = new Queue(queueName, { connection: connection(), prefix });
  await queue.waitUntilReady();
  const ids = scheduleIds(count);
  for (let i = 0; i < ids.length; i++) {
    await queue.upsertJobScheduler(ids[i], { every: period * 1000 }, { name: taskType, data: { i } });
  }
  const worker = new Worker(
    queueName,
    async (job) => {
      // job.delay reads the stored field, which BullMQ resets to 0 when it promotes a delayed job;
      // job.opts.delay keeps the delay the job was made with.
      starts.push(job.id, wallNow(), job.timestamp, job.opts.delay ?? null);
    },
    { connection: connection({ maxRetriesPerRequest: null }), prefix, concurrency },
  );
  worker.on('failed', (_job, error) => onError(error));
  worker.on('error', (error) => onError(error));
  await worker.waitUntilReady();
  return {
    info: () => ({}),
    async stop() {
      await worker.close();
      await queue.close();
    },
  };
}

async function main() {
  const { system, url, params } = await receive('init');
  if (!/^redis:\/\/127\.0\.0\.1:\d+$/.test(url ?? '')) throw new Error(`expected a redis://127.0.0.1:<port> url, got ${JSON.stringify(url)}`);
  setTimeout(() => {
    process.stderr.write(`schedules-child ${system} ${process.pid}: hard limit of ${params.limitMs / 1000} s reached, exiting\n`);
    process.exit(3);
  }, params.limitMs).unref();
  const starts = [];
  const t0 = Date.now();
  const cpu0 = process.cpuUsage();
  const app = system === 'taskline' ? await startTaskline({ ...params, url }, starts) : await startBullmq({ ...params, url }, starts);
  await send({ type: 'ready', setupMs: Date.now() - t0 });
  await receive('stop');
  const cpu = process.cpuUsage(cpu0);
  await app.stop();
  const CHUNK = 40_000;
  for (let i = 0; i < starts.length; i += CHUNK) await send({ type: 'starts', chunk: starts.slice(i, i + CHUNK) });
  await send({
    type: 'done',
    result: {
      pid: process.pid,
      errors,
      firstError,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      maxRssMB: process.resourceUsage().maxRSS / 1024,
      ...app.info(),
    },
  });
  // A normal exit, so that --cpu-prof writes its profile.
  process.exit(0);
}

main().catch(async (error) => {
  await send({ type: 'error', message: error instanceof Error ? error.stack ?? error.message : String(error) }).catch(() => undefined);
  process.exit(1);
});
