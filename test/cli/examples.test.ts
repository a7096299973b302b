/**
 * The example handlers doing their real work, run by a real Worker on each backend: HTTP
 * against a local node:http server, SMTP against a local node:net server, SQLite tables, files.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '../../src/client/client.js';
import type { Backend } from '../../src/backend/contract.js';
import type { TaskRecord } from '../../src/core/task.js';
import { Worker } from '../../src/worker/worker.js';
import { EXAMPLE_QUEUES, registerExamples } from '../../src/examples/handlers.js';
import { cleanExpiredSessions, emailDeliver, imageResize, reportGenerate, sendReport, syncExternalData, workflowSummary } from '../../src/examples/definitions.js';
import { task, workflow } from '../../src/core/workflow.js';
import { openAppDatabase } from '../../src/examples/app-db.js';
import type { ExampleOptions } from '../../src/examples/options.js';
import { parseRetryAfter } from '../../src/examples/sync-external-data.js';
import { SAMPLE_RECORDS } from '../../src/examples/sample-records.js';
import { decodePpm, encodePpm, resizeBilinear, testCard } from '../../src/examples/ppm.js';
import { dotStuff, sendSmtp } from '../../src/examples/smtp-client.js';
import { csvCell } from '../../src/examples/report-generate.js';
import { BACKEND_KINDS, cliStore, type CliStore } from './helpers.js';

/** A local HTTP API whose answers the test sets per path. */
class FakeApi {
  readonly answers = new Map<string, { status: number; body?: unknown; headers?: Record<string, string> }>();
  readonly requests: string[] = [];
  private server: Server | null = null;
  port = 0;

  async start(): Promise<void> {
    this.server = createHttpServer((req, res) => {
      this.requests.push(req.url ?? '');
      const answer = this.answers.get(req.url ?? '') ?? { status: 404, body: { error: 'no such path' } };
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    this.port = typeof address === 'object' && address ? address.port : 0;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

/** A local SMTP server that records each session and can refuse recipients. */
class FakeSmtp {
  readonly sessions: { commands: string[]; data: string }[] = [];
  rcptReply = '250 2.1.5 ok';
  private server: NetServer | null = null;
  private readonly sockets = new Set<Socket>();
  port = 0;

  async start(): Promise<void> {
    this.server = createNetServer((socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      const session = { commands: [] as string[], data: '' };
      this.sessions.push(session);
      let buffer = '';
      let inData = false;
      socket.setEncoding('utf8');
      socket.write('220 fake.smtp ESMTP\r\n');
      socket.on('data', (chunk: string) => {
        buffer += chunk;
        let index: number;
        while ((index = buffer.indexOf('\r\n')) >= 0) {
          const line = buffer.slice(0, index);
          buffer = buffer.slice(index + 2);
          if (inData) {
            if (line === '.') {
              inData = false;
              socket.write('250 2.0.0 queued as 42\r\n');
            } else session.data += `${line}\r\n`;
            continue;
          }
          session.commands.push(line);
          const verb = line.split(/[ :]/)[0].toUpperCase();
          if (verb === 'EHLO') socket.write('250-fake.smtp\r\n250-AUTH PLAIN\r\n250 8BITMIME\r\n');
          else if (verb === 'AUTH') socket.write('235 2.7.0 ok\r\n');
          else if (verb === 'MAIL') socket.write('250 2.1.0 ok\r\n');
          else if (verb === 'RCPT') socket.write(`${this.rcptReply}\r\n`);
          else if (verb === 'DATA') {
            inData = true;
            socket.write('354 go ahead\r\n');
          } else if (verb === 'QUIT') socket.end('221 bye\r\n');
          else socket.write('502 unknown\r\n');
        }
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    this.port = typeof address === 'object' && address ? address.port : 0;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

async function waitForState(backend: Backend, id: string, states: string[]): Promise<TaskRecord> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const task = await backend.getTask(id);
    if (task && states.includes(task.state)) return task;
    if (Date.now() > deadline) throw new Error(`task ${id} is ${task?.state ?? 'missing'}, expected ${states.join('/')}: ${task?.lastError ?? ''}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.each(BACKEND_KINDS)('example handlers on %s', (kind) => {
  let store: CliStore;
  let backend: Backend;
  let client: Client;
  let worker: Worker;
  let options: ExampleOptions;
  const api = new FakeApi();
  const smtp = new FakeSmtp();

  beforeAll(async () => {
    await api.start();
    await smtp.start();
  });
  afterAll(async () => {
    await api.stop();
    await smtp.stop();
  });

  beforeEach(async () => {
    store = await cliStore(kind);
    backend = await store.open();
    client = new Client(backend);
    options = { dataDir: store.dir, mailFrom: 'reports@example.com', appDatabase: join(store.dir, 'app.db') };
  });
  afterEach(async () => {
    await worker?.stop();
    await client.close();
    await store.cleanup();
  });

  async function startWorker(overrides: Partial<ExampleOptions> = {}): Promise<void> {
    worker = new Worker(backend, { queues: EXAMPLE_QUEUES, concurrency: 4, heartbeatInterval: 60_000 });
    registerExamples(worker, { ...options, ...overrides });
    await worker.start();
  }

  it('sync_external_data upserts a JSON list: inserted, then unchanged and updated', async () => {
    await startWorker();
    api.answers.set('/users', { status: 200, body: [{ id: 1, name: 'Ada' }, { id: 'b', name: 'Bob' }, { name: 'no id' }] });
    const first = await client.enqueue(syncExternalData, { url: api.url('/users'), source: 'crm' });
    expect(first.queue).toBe('sync_workers');
    expect(await client.waitFor(first.id, { timeout: 10_000 })).toEqual({ source: 'crm', received: 3, inserted: 2, updated: 0, unchanged: 0, skipped: 1 });

    api.answers.set('/users', { status: 200, body: { items: [{ id: 1, name: 'Ada L.' }, { id: 'b', name: 'Bob' }] } });
    const second = await client.enqueue(syncExternalData, { url: api.url('/users'), source: 'crm' });
    expect(await client.waitFor(second.id, { timeout: 10_000 })).toMatchObject({ inserted: 0, updated: 1, unchanged: 1 });

    const db = openAppDatabase(options.appDatabase);
    try {
      const rows = db.prepare('SELECT id, data FROM external_records WHERE source = ? ORDER BY id').all('crm');
      expect(rows).toEqual([{ id: '1', data: '{"id":1,"name":"Ada L."}' }, { id: 'b', data: '{"id":"b","name":"Bob"}' }]);
    } finally {
      db.close();
    }
  });

  it('sync_external_data: 404 is dead at once, 429 retries after Retry-After, 5xx retries with backoff', async () => {
    await startWorker();
    api.answers.set('/gone', { status: 404 });
    api.answers.set('/busy', { status: 429, headers: { 'retry-after': '120' } });
    api.answers.set('/broken', { status: 503 });
    const gone = await client.enqueue(syncExternalData, { url: api.url('/gone') });
    const busy = await client.enqueue(syncExternalData, { url: api.url('/busy') });
    const broken = await client.enqueue(syncExternalData, { url: api.url('/broken') });

    const dead = await waitForState(backend, gone.id, ['dead']);
    expect(dead.attempt).toBe(1);
    expect(dead.lastError).toMatch(/404 not found/);

    const throttled = await waitForState(backend, busy.id, ['retrying']);
    expect(throttled.lastError).toMatch(/429 too many requests; retrying in 120 s/);
    const wait = throttled.nextRunAt! - throttled.attempts[0].finishedAt!;
    expect(wait).toBeGreaterThanOrEqual(119_000);
    expect(wait).toBeLessThanOrEqual(121_000);

    const failing = await waitForState(backend, broken.id, ['retrying']);
    expect(failing.lastError).toMatch(/503 Service Unavailable/);
    // The default backoff: base 10 s plus up to 25 % jitter.
    const backoff = failing.nextRunAt! - failing.attempts[0].finishedAt!;
    expect(backoff).toBeGreaterThanOrEqual(9_000);
    expect(backoff).toBeLessThanOrEqual(13_500);
  });

  it('sync_external_data without a url upserts the built-in sample records, with no network', async () => {
    await startWorker();
    const requestsBefore = api.requests.length;
    const task = await client.enqueue(syncExternalData, {});
    expect(task.queue).toBe('sync_workers');
    expect(await client.waitFor(task.id, { timeout: 10_000 })).toEqual({ source: 'sample', received: SAMPLE_RECORDS.length, inserted: SAMPLE_RECORDS.length, updated: 0, unchanged: 0, skipped: 0 });
    const again = await client.enqueue(syncExternalData, {});
    expect(await client.waitFor(again.id, { timeout: 10_000 })).toMatchObject({ inserted: 0, unchanged: SAMPLE_RECORDS.length });
    expect(api.requests).toHaveLength(requestsBefore);
  });

  it('sync_external_data: an unreachable url fails with one line saying why, and retries', async () => {
    await startWorker();
    const closed = createNetServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const address = closed.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const task = await client.enqueue(syncExternalData, { url: `http://127.0.0.1:${port}/records` });
    const failed = await waitForState(backend, task.id, ['retrying']);
    expect(failed.lastError).toBe(
      `GET http://127.0.0.1:${port}/records failed: cannot connect (connect ECONNREFUSED 127.0.0.1:${port}) (offline? network errors are retried; without a url the built-in sample is synced)`,
    );
  });

  it('clean_expired_sessions deletes rows not seen for N days, in batches', async () => {
    const db = openAppDatabase(options.appDatabase);
    const day = 86_400_000;
    const insert = db.prepare('INSERT INTO sessions (id, user_id, created_at, last_seen_at) VALUES (?, ?, ?, ?)');
    db.transaction(() => {
      for (let i = 0; i < 250; i += 1) insert.run(`old-${i}`, `u${i % 7}`, Date.now() - 90 * day, Date.now() - (31 + (i % 30)) * day);
      for (let i = 0; i < 40; i += 1) insert.run(`new-${i}`, `u${i % 7}`, Date.now() - 90 * day, Date.now() - (i % 29) * day);
    })();
    db.close();
    await startWorker();
    const task = await client.enqueue(cleanExpiredSessions, { olderThanDays: 30, batchSize: 100 });
    expect(await client.waitFor(task.id, { timeout: 10_000 })).toMatchObject({ deleted: 250, remaining: 40 });
    const check = openAppDatabase(options.appDatabase);
    try {
      expect(check.prepare("SELECT count(*) AS n FROM sessions WHERE id LIKE 'old-%'").get()).toEqual({ n: 0 });
    } finally {
      check.close();
    }
  });

  it('email:deliver and send_report write to the outbox without SMTP_URL', async () => {
    await startWorker();
    const mail = await client.enqueue(emailDeliver, { to: 'ann@example.com', subject: 'Grüße', text: 'Hello\n.leading dot' });
    const sent = await client.waitFor<{ via: string; detail: string }>(mail.id, { timeout: 10_000 });
    expect(sent.via).toBe('outbox');
    const eml = readFileSync(sent.detail, 'utf8');
    expect(eml).toMatch(/^From: reports@example.com\r\nTo: ann@example.com\r\nSubject: =\?UTF-8\?B\?R3LDvMOfZQ==\?=\r\n/);
    const body = Buffer.from(eml.split('\r\n\r\n')[1].replace(/\r\n/g, ''), 'base64').toString('utf8');
    expect(body).toBe('Hello\r\n.leading dot');

    const report = await client.enqueue(sendReport, { to: ['boss@example.com'], title: 'Weekly', days: 7 });
    const result = await client.waitFor<{ detail: string }>(report.id, { timeout: 10_000 });
    const text = Buffer.from(readFileSync(result.detail, 'utf8').split('\r\n\r\n')[1].replace(/\r\n/g, ''), 'base64').toString('utf8');
    expect(text).toMatch(/^Weekly\r\n======\r\nPeriod: /);
    expect(text).toMatch(/Sessions\r\n {2}stored: 0/);
    expect(readdirSync(join(store.dir, 'outbox')).sort()).toEqual([`${mail.id}.eml`, `${report.id}.eml`].sort());
  });

  it('email:deliver by SMTP; a 550 recipient refusal is dead at once, a 451 retries', async () => {
    await startWorker({ smtpUrl: `smtp://user:secret@127.0.0.1:${smtp.port}` });
    smtp.sessions.length = 0;
    smtp.rcptReply = '250 2.1.5 ok';
    const ok = await client.enqueue(emailDeliver, { to: ['a@example.com', 'b@example.com'], subject: 'Hi', text: 'line one\n.two' });
    expect(await client.waitFor(ok.id, { timeout: 10_000 })).toMatchObject({ via: 'smtp', detail: '250 2.0.0 queued as 42' });
    const session = smtp.sessions[0];
    expect(session.commands.slice(1)).toEqual([
      `AUTH PLAIN ${Buffer.from('\0user\0secret').toString('base64')}`, 'MAIL FROM:<reports@example.com>', 'RCPT TO:<a@example.com>', 'RCPT TO:<b@example.com>', 'DATA', 'QUIT',
    ]);
    expect(session.data).toMatch(/^From: reports@example.com\r\n/);

    smtp.rcptReply = '550 5.1.1 no such user';
    const refused = await client.enqueue(emailDeliver, { to: 'nobody@example.com', subject: 'x', text: 'x' });
    const dead = await waitForState(backend, refused.id, ['dead']);
    expect(dead.lastError).toBe('SMTP RCPT refused: 550 5.1.1 no such user');

    smtp.rcptReply = '451 4.3.0 try later';
    const later = await client.enqueue(emailDeliver, { to: 'busy@example.com', subject: 'x', text: 'x' });
    expect((await waitForState(backend, later.id, ['retrying'])).lastError).toBe('SMTP RCPT refused: 451 4.3.0 try later');
  });

  it('report:generate runs on critical with a 60 s timeout and writes a CSV', async () => {
    const db = openAppDatabase(options.appDatabase);
    db.prepare('INSERT INTO external_records (source, id, data, synced_at) VALUES (?, ?, ?, ?)').run('crm', '1', '{"name":"Ada, \\"the first\\""}', 0);
    db.close();
    await startWorker();
    const task = await client.enqueue(reportGenerate, { title: 'Q3' });
    expect(task.queue).toBe('critical');
    expect((await backend.getTask(task.id))!.timeout).toBe(60_000);
    const result = await client.waitFor<{ path: string; records: number }>(task.id, { timeout: 10_000 });
    expect(result.records).toBe(1);
    expect(readFileSync(result.path, 'utf8')).toBe('# Q3\nsource,id,synced_at,data\ncrm,1,1970-01-01T00:00:00.000Z,"{""name"":""Ada, \\""the first\\""""}"\n');
  });

  it('image:resize resizes a PPM from the data directory; a path outside it is dead', async () => {
    writeFileSync(join(store.dir, 'card.ppm'), encodePpm(testCard(40, 20)));
    await startWorker();
    const task = await client.enqueue(imageResize, { input: 'card.ppm', width: 10, height: 5 });
    const result = await client.waitFor<{ path: string; from: unknown; to: unknown }>(task.id, { timeout: 10_000 });
    expect(result).toMatchObject({ from: { width: 40, height: 20 }, to: { width: 10, height: 5 } });
    const image = decodePpm(readFileSync(result.path));
    expect([image.width, image.height]).toEqual([10, 5]);

    const escape = await client.enqueue(imageResize, { input: '../../etc/passwd', width: 1, height: 1 });
    expect((await waitForState(backend, escape.id, ['dead'])).lastError).toMatch(/outside the examples' data directory/);
  });

  it('workflow:summary as a runOnFailure node and as onFinish writes two reports, neither over the other', async () => {
    await startWorker();
    const { id } = await client.enqueueWorkflow(
      workflow({
        nodes: {
          resize: task(imageResize, { input: '../outside.ppm', width: 1, height: 1 }),
          summary: task(workflowSummary, { title: 'After a failure' }, { dependsOn: ['resize'], runOnFailure: true }),
        },
      }),
      { id: 'wf-reports', onFinish: task(workflowSummary) },
    );
    const finishPath = join(store.dir, 'reports', `${id}-finish.json`);
    await expect.poll(() => existsSync(finishPath), { timeout: 10_000 }).toBe(true);
    const summary = JSON.parse(readFileSync(join(store.dir, 'reports', `${id}-summary.json`), 'utf8'));
    expect(summary).toMatchObject({ title: 'After a failure', workflowId: id, parents: [{ node: 'resize', state: 'dead' }] });
    const finish = JSON.parse(readFileSync(finishPath, 'utf8'));
    expect(finish).toMatchObject({ title: 'Workflow summary', workflowId: id, state: 'failed', completed: ['summary'], failed: ['resize'], cancelled: [] });
    const wf = (await client.getWorkflow(id))!;
    expect(wf.nodes.find((n) => n.id === 'summary')!.result).toEqual({ path: join(store.dir, 'reports', `${id}-summary.json`), parents: ['resize: dead'] });
    expect(await client.waitFor(wf.onFinishTaskId!, { timeout: 10_000 })).toEqual({ path: finishPath, state: 'failed' });
  });
});

describe('example building blocks', () => {
  it('Retry-After: seconds, an HTTP date, or a default', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter('30', now)).toBe(30_000);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:02:00 GMT', now)).toBe(120_000);
    expect(parseRetryAfter('Tue, 31 Dec 2024 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(null, now)).toBe(60_000);
    expect(parseRetryAfter('soon', now)).toBe(60_000);
    expect(parseRetryAfter('9999999', now)).toBe(24 * 3_600_000);
  });

  it('PPM: round trip, uniform colour stays uniform, a ramp stays monotone', () => {
    const card = testCard(33, 17);
    expect(decodePpm(encodePpm(card))).toEqual(card);
    const withComment = Buffer.concat([Buffer.from('P6\n# made by hand\n2 1\n255\n'), Buffer.from([1, 2, 3, 4, 5, 6])]);
    expect(decodePpm(withComment)).toEqual({ width: 2, height: 1, pixels: new Uint8Array([1, 2, 3, 4, 5, 6]) });
    expect(() => decodePpm(Buffer.from('P3\n1 1\n255\n0 0 0'))).toThrow(/not a binary PPM/);
    expect(() => decodePpm(Buffer.from('P6\n2 2\n255\n\x00'))).toThrow(/truncated/);

    const grey = { width: 8, height: 8, pixels: new Uint8Array(8 * 8 * 3).fill(77) };
    expect(resizeBilinear(grey, 3, 5).pixels.every((v) => v === 77)).toBe(true);
    const ramp = resizeBilinear(testCard(256, 4), 16, 2);
    const reds = Array.from({ length: 16 }, (_, x) => ramp.pixels[x * 3]);
    expect(reds).toEqual([...reds].sort((a, b) => a - b));
    expect(reds[0]).toBeLessThan(16);
    expect(reds[15]).toBeGreaterThan(239);
  });

  it('SMTP dot-stuffing and CSV quoting', () => {
    expect(dotStuff('a\n.b\r\n..c')).toBe('a\r\n..b\r\n...c');
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,"b"')).toBe('"a,""b"""');
  });

  it('sendSmtp reports an unreachable server as a transient error', async () => {
    const server = createNetServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await expect(sendSmtp(`smtp://127.0.0.1:${port}`, { from: 'a@b.c', to: ['d@e.f'], message: 'x' })).rejects.toMatchObject({ code: 0, message: expect.stringMatching(/SMTP connection failed/) });
  });
});
