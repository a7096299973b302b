/**
 * Typed at every door through the CLI, with real worker processes: `taskline types`, a payload of
 * a recorded type checked by `taskline enqueue`, and two workers with different handlers on one
 * queue, neither killing the other's tasks.
 */
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BACKEND_KINDS, CliProcess, cliStore, oneLine, parseJson, runCli, type CliStore } from './helpers.js';

const TASKLINE = pathToFileURL(resolve(import.meta.dirname, '../../dist/index.js')).href;
const ZOD = pathToFileURL(resolve(import.meta.dirname, '../../node_modules/zod/index.js')).href;

const MAIL_HANDLERS = `
import { defineTask } from '${TASKLINE}';
import { z } from '${ZOD}';
const deliver = defineTask('mail:deliver', { schema: z.object({ to: z.string().email(), subject: z.string() }) });
export default (worker) => {
  worker.handle(deliver, async (payload) => 'sent to ' + payload.to);
  worker.handle('mail:*', async () => null);
};
`;

const handlersOf = (name: string) => `export default { '${name}': async (_payload, ctx) => '${name} ran ' + ctx.task.id };\n`;

describe.each(BACKEND_KINDS)('taskline types and typed enqueue on %s', (kind) => {
  let store: CliStore;
  const processes: CliProcess[] = [];
  const cli = (...args: string[]) => runCli([...store.args, ...args], { cwd: store.dir });
  const worker = (module: string, ...args: string[]) => {
    const child = new CliProcess([...store.args, 'worker', '--handlers', module, ...args], { cwd: store.dir });
    processes.push(child);
    return child;
  };

  beforeEach(async () => {
    store = await cliStore(kind);
    await store.open();
  });
  afterEach(async () => {
    await Promise.all(processes.splice(0).map((p) => p.kill()));
    await store.cleanup();
  });

  it('lists the types a worker recorded, and enqueue checks a payload against its schema', async () => {
    const none = await cli('types');
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).toMatch(/^no task types recorded/);
    writeFileSync(join(store.dir, 'mail.mjs'), MAIL_HANDLERS);
    await worker('mail.mjs').waitFor(/ready/, 20_000);

    const table = await cli('types');
    expect(table.code, table.stderr).toBe(0);
    const rows = table.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^TYPE\s+QUEUES\s+WORKERS\s+PAYLOAD$/);
    expect(rows[1]).toMatch(/^mail:\*\s+default\s+1\s+-$/);
    expect(rows[2]).toMatch(/^mail:deliver\s+default\s+1\s+\{to: string \(email\), subject: string\}$/);
    const json = parseJson(await cli('--json', 'types'));
    expect(json.types[1]).toMatchObject({ type: 'mail:deliver', queues: ['default'], schema: { type: 'object', required: ['to', 'subject'] } });
    expect(json.types[1].workers).toHaveLength(1);

    const bad = await cli('enqueue', 'mail:deliver', '{"to":"nobody"}');
    expect(bad.code).toBe(2); // bad input is a usage error, as for every invalid value
    expect(oneLine(bad.stderr)).toMatch(
      /^taskline: payload of "mail:deliver" does not match the schema its workers recorded: payload.subject is required; payload.to must match format "email" \(TL_VALIDATION_FAILED\) \(see taskline enqueue --help\)$/,
    );
    const good = await cli('enqueue', 'mail:deliver', '{"to":"a@b.example","subject":"hi"}', '--wait');
    expect(good.code, good.stderr).toBe(0);
    expect(good.stdout).toMatch(/sent to a@b.example/);
  });

  it("two workers with different handlers on one queue: each type runs in its worker, none dies, no attempt is used", async () => {
    writeFileSync(join(store.dir, 'a.mjs'), handlersOf('only:a'));
    writeFileSync(join(store.dir, 'b.mjs'), handlersOf('only:b'));
    await worker('a.mjs').waitFor(/ready/, 20_000);
    await worker('b.mjs').waitFor(/ready/, 20_000);
    const ids: string[] = [];
    for (const type of ['only:a', 'only:b']) {
      for (let i = 0; i < 4; i++) {
        const result = await cli('--json', 'enqueue', type, String(i), '--max-retries', '0');
        expect(result.code, result.stderr).toBe(0);
        ids.push(parseJson(result).id as string);
      }
    }
    const backend = await store.open();
    await expect
      .poll(async () => (await Promise.all(ids.map((id) => backend.getTask(id)))).filter((t) => t?.state === 'completed').length, { timeout: 30_000, interval: 200 })
      .toBe(ids.length);
    for (const id of ids) {
      const task = (await backend.getTask(id))!;
      expect(task.result).toBe(`${task.type} ran ${id}`);
      expect(task.attempts.filter((a) => a.outcome === 'failed')).toEqual([]);
    }
  });
});
