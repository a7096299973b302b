/**
 * Typed at every door: workers record their types with payload schemas; the task
 * center checks payloads of known types before storing them (422); a task a worker has no
 * handler for is handed back, without using an attempt, to a worker that has one.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Client, defineTask, Worker } from '../../src/index.js';
import { buildServer, type TaskCenterServer } from '../../src/server/app.js';
import { STORES, type TestStore } from '../helpers/stores.js';

const deliver = defineTask('mail:deliver', {
  schema: z.object({ to: z.string().email(), subject: z.string().min(1), body: z.string().default('') }),
});

describe.each(STORES)('typed at every door on %s', (_name, openStore) => {
  let store: TestStore;
  let client: Client;
  let server: TaskCenterServer | null = null;
  const workers: Worker[] = [];

  async function startWorker(setup: (w: Worker) => void, options: ConstructorParameters<typeof Worker>[1] = {}): Promise<Worker> {
    // Each worker on its own connection, as a separate process would have.
    const worker = new Worker(await store.reopen(), { idleWait: 1000, heartbeatInterval: 1000, ...options });
    setup(worker);
    workers.push(worker);
    await worker.start();
    return worker;
  }

  async function api(): Promise<TaskCenterServer> {
    server = await buildServer({ backend: store.backend });
    await server.app.ready();
    return server;
  }

  beforeEach(async () => {
    store = await openStore();
    client = new Client(store.backend);
  });

  afterEach(async () => {
    await server?.app.close();
    server = null;
    await Promise.all(workers.splice(0).map((w) => w.stop({ timeout: 1000 })));
    await client.close();
    await store.cleanup();
  });

  it('a worker records its types, with the JSON Schema of each defined payload, before it claims', async () => {
    const worker = await startWorker((w) => {
      w.handle(deliver, async () => 'sent');
      w.handle('report:*', async () => null);
    });
    const types = await store.backend.listTaskTypes();
    expect(types.map((t) => t.type)).toEqual(['mail:deliver', 'report:*']);
    const schema = types[0].schema!;
    expect(schema).toMatchObject({ type: 'object', properties: { to: { type: 'string', format: 'email' }, subject: { type: 'string' } } });
    // zod's input: a field with a default is optional to a producer.
    expect(schema.required).toEqual(['to', 'subject']);
    expect(types[1]).toMatchObject({ schema: null, queues: ['default'] });
    const [entry] = await store.backend.listWorkers();
    expect(entry).toMatchObject({ id: worker.id, types: ['mail:deliver', 'report:*'] });
  });

  it('the task center refuses a payload that does not match a recorded schema (422), naming the field', async () => {
    await startWorker((w) => w.handle(deliver, async () => 'sent'));
    const { app } = await api();
    const bad = await app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { type: 'mail:deliver', payload: { to: 'not-an-email' } } });
    expect(bad.statusCode).toBe(422);
    const error = bad.json<{ error: { code: string; message: string } }>().error;
    expect(error.code).toBe('TL_VALIDATION_FAILED');
    expect(error.message).toMatch(/^payload of "mail:deliver" does not match the schema its workers recorded: payload.subject is required; payload.to must match format "email"$/);
    // The other enqueue forms, a batch and a schedule's task, are checked too; nothing was stored.
    const viaPath = await app.inject({ method: 'POST', url: '/api/v1/tasks/mail:deliver', payload: { to: 'a@b.example' } });
    expect(viaPath.statusCode).toBe(422);
    const batch = await app.inject({
      method: 'POST', url: '/api/v1/tasks',
      payload: { tasks: [{ type: 'other', payload: 1 }, { type: 'mail:deliver', payload: { to: 5, subject: 's' } }] },
    });
    expect(batch.statusCode).toBe(422);
    expect(batch.json<{ error: { message: string } }>().error.message).toMatch(/^item 1: .*payload.to must be string/);
    const schedule = await app.inject({
      method: 'POST', url: '/api/v1/schedules', payload: { id: 's', cron: '0 0 * * *', task: { type: 'mail:deliver', payload: {} } },
    });
    expect(schedule.statusCode).toBe(422);
    expect((await store.backend.getQueue('default'))?.counts.queued ?? 0).toBe(0);
    expect(await store.backend.listSchedules()).toEqual([]);
    // A matching payload, and a type no worker recorded, are stored.
    const good = await app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { type: 'mail:deliver', payload: { to: 'a@b.example', subject: 'hi' } } });
    expect(good.statusCode).toBe(201);
    expect((await app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { type: 'free:form', payload: [1, 2] } })).statusCode).toBe(201);
  });

  it('the door accepts what the worker would: extra fields of a non-strict object, the payload as JSON; coercions record no schema', async () => {
    const loose = defineTask('t:loose', { schema: z.object({ at: z.string(), n: z.number() }) });
    const strict = defineTask('t:strict', { schema: z.object({ n: z.number() }).strict() });
    const coerced = defineTask('t:coerced', { schema: z.object({ n: z.coerce.number() }) });
    await startWorker((w) => {
      w.handle(loose, async () => null);
      w.handle(strict, async () => null);
      w.handle(coerced, async () => null);
    });
    const schemas = Object.fromEntries((await store.backend.listTaskTypes()).map((t) => [t.type, t.schema]));
    expect(schemas['t:coerced']).toBeNull();
    const checked = new Client(store.backend, { checkRecordedTypes: true });
    try {
      // zod strips unknown fields of a plain object; a Date is stored as its JSON text.
      await expect(checked.enqueue('t:loose', { at: new Date(), n: 1, extra: true })).resolves.toMatchObject({ state: 'queued' });
      await expect(checked.enqueue('t:strict', { n: 1, extra: true })).rejects.toMatchObject({ code: 'TL_VALIDATION_FAILED', message: expect.stringMatching(/payload.extra is not an accepted field$/) });
      await expect(checked.enqueue('t:coerced', { n: '5' })).resolves.toMatchObject({ state: 'queued' });
    } finally {
      await checked.close();
    }
  });

  it('a union field is named once, with its accepted forms in words', async () => {
    const many = defineTask('mail:many', { schema: z.object({ to: z.union([z.string().email(), z.array(z.string().email()).min(1).max(50)]) }) });
    await startWorker((w) => w.handle(many, async () => null));
    const { app } = await api();
    const bad = await app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { type: 'mail:many', payload: { to: 'ada' } } });
    expect(bad.statusCode).toBe(422);
    expect(bad.json<{ error: { message: string } }>().error.message).toBe(
      'payload of "mail:many" does not match the schema its workers recorded: payload.to must be an email address or a list of 1–50 email addresses',
    );
  });

  it('GET /api/v1/types lists each type with its schema, queues and the live workers that handle it', async () => {
    const a = await startWorker((w) => w.handle(deliver, async () => 'sent'), { queues: ['mail'] });
    const b = await startWorker((w) => w.handle('mail:*', async () => null), { queues: ['mail', 'default'] });
    const { app } = await api();
    const response = await app.inject({ method: 'GET', url: '/api/v1/types' });
    expect(response.statusCode).toBe(200);
    const { types } = response.json<{ types: { type: string; schema: unknown; queues: string[]; recorded_at: string; workers: { id: string }[] }[] }>();
    expect(types.map((t) => [t.type, t.queues, t.workers.map((w) => w.id).sort()])).toEqual([
      ['mail:*', ['mail', 'default'], [b.id]],
      ['mail:deliver', ['mail'], [a.id, b.id].sort()],
    ]);
    expect(types[1].schema).toMatchObject({ type: 'object' });
    expect(Date.parse(types[1].recorded_at)).toBeGreaterThan(0);
    expect((await app.inject({ method: 'HEAD', url: '/api/v1/types' })).statusCode).toBe(200);
  });

  it('a task this worker has no handler for goes, without using an attempt, to the worker that has one', async () => {
    const ranBy = new Map<string, string>();
    const handedBack: string[] = [];
    const record = (worker: string) => async (_p: unknown, ctx: { task: { id: string } }) => {
      ranBy.set(ctx.task.id, worker);
      return worker;
    };
    // Both serve `default`, each without the other's type. The 'only:a' tasks are enqueued first,
    // so whichever worker claims first, one of them meets a type it lacks.
    const setup = (name: string) => (w: Worker) => {
      w.handle(`only:${name}`, record(name));
      w.on('handed-back', (task, peer) => handedBack.push(`${task.type} ${w.id}->${peer}`));
    };
    await startWorker(setup('a'), { concurrency: 4, id: 'worker-a' });
    await startWorker(setup('b'), { concurrency: 4, id: 'worker-b' });
    const tasks = await client.enqueueMany([
      ...Array.from({ length: 10 }, (_, i) => ({ type: 'only:a', payload: i, options: { maxRetries: 0 } })),
      ...Array.from({ length: 10 }, (_, i) => ({ type: 'only:b', payload: i, options: { maxRetries: 0 } })),
    ]);
    await expect.poll(() => ranBy.size, { timeout: 20_000, interval: 100 }).toBe(20);
    // A handler has run before its completion is stored: wait for the acks too.
    const completed = async () => (await Promise.all(tasks.map((t) => client.getTask(t.id)))).filter((t) => t?.state === 'completed').length;
    await expect.poll(completed, { timeout: 20_000, interval: 100 }).toBe(20);
    expect(handedBack.length).toBeGreaterThan(0);
    for (const line of handedBack) expect(['only:a worker-b->worker-a', 'only:b worker-a->worker-b']).toContain(line);
    for (const info of tasks) {
      const task = await client.getTask(info.id);
      // maxRetries 0: a hand-back that used an attempt would have killed the task; a hand-back
      // is no attempt and leaves no record, no error.
      expect(task).toMatchObject({ state: 'completed', result: info.type === 'only:a' ? 'a' : 'b', lastError: null, attempt: 1 });
      expect(task!.attempts.map((a) => a.outcome)).toEqual(['completed']);
    }
    const queue = await store.backend.getQueue('default');
    expect([queue?.processed, queue?.failed]).toEqual([20, 0]);
  });

  it('what a worker records is validated: its id as a task id, each handled type as a type', async () => {
    expect(() => new Worker(store.backend, { id: 'has space' })).toThrow(/^invalid worker id "has space"/);
    const worker = new Worker(store.backend);
    expect(() => worker.handle('bad\u0001type', async () => null)).toThrow(/^invalid handler type "bad\\u0001type"/);
    expect(() => worker.handle('x\ud800', async () => null)).toThrow(/^invalid handler type/);
    await worker.stop();
  });

  it('a stopping worker announces no types, so no task is handed back to it while it drains', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const worker = await startWorker((w) =>
      w.handle('t', async () => {
        started();
        await held;
      }),
    );
    expect((await store.backend.listWorkers()).find((w) => w.id === worker.id)?.types).toEqual(['t']);
    await client.enqueue('t', {});
    await running;
    const stopping = worker.stop({ timeout: 10_000 });
    // Draining its running task, it is still listed, with no types.
    await expect.poll(async () => (await store.backend.listWorkers()).find((w) => w.id === worker.id)?.types, { timeout: 5_000 }).toEqual([]);
    release();
    await stopping;
    expect((await store.backend.listWorkers()).find((w) => w.id === worker.id)).toBeUndefined();
  });

  it('a task no live worker of its queue handles fails its attempts and dies, saying why', async () => {
    await startWorker((w) => w.handle('known', async () => null));
    const info = await client.enqueue('unknown', {}, { maxRetries: 0 });
    await expect(client.waitFor(info.id, { timeout: 10_000 })).rejects.toMatchObject({ state: 'dead' });
    const task = await client.getTask(info.id);
    expect(task!.lastError).toMatch(/^no handler for task type "unknown" in worker .*; no live worker serving queue default handles it$/);
  });
});
