/** `taskline task search`: the table and --json, paging, and a bad term as a usage error. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BACKEND_KINDS, cliStore, oneLine, parseJson, runCli, type CliStore } from './helpers.js';

describe.each(BACKEND_KINDS)('taskline task search on %s', (kind) => {
  let store: CliStore;
  const cli = (...args: string[]) => runCli([...store.args, ...args], { cwd: store.dir });

  beforeEach(async () => {
    store = await cliStore(kind);
    await store.open();
  });
  afterEach(async () => {
    await store.cleanup();
  });

  it('finds tasks by payload and type, pages with --cursor, and refuses a bad term with exit 2', async () => {
    await cli('enqueue', 'email:deliver', '{"user_id":42}', '--id', 'e-1', '--queue', 'mail');
    await cli('enqueue', 'email:deliver', '{"user_id":7}', '--id', 'e-2');
    await cli('enqueue', 'report', '{"user_id":42}', '--id', 'r-1', '--delay', '1h');

    const table = await cli('task', 'search', 'payload.user_id:42');
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+QUEUE\s+TYPE\s+STATE\s+CREATED\s+ERROR$/);
    expect(lines.slice(1, 3).map((l) => l.split(/\s+/)[0]).sort()).toEqual(['e-1', 'r-1']);
    expect(lines[3]).toBe('2 matching tasks; scanned 3 of 3');

    const json = parseJson(await cli('--json', 'task', 'search', 'type:email:deliver', '--limit', '1'));
    expect(json).toMatchObject({ query: 'type:email:deliver', scanned: expect.any(Number), total: 3 });
    expect(json.tasks).toHaveLength(1);
    const next = parseJson(await cli('--json', 'task', 'search', 'type:email:deliver', '--limit', '1', '--cursor', json.nextCursor));
    expect([json.tasks[0].id, next.tasks[0].id].sort()).toEqual(['e-1', 'e-2']);

    const words = parseJson(await cli('--json', 'task', 'search', 'state:scheduled', 'report'));
    expect(words.tasks.map((t: { id: string }) => t.id)).toEqual(['r-1']);

    const bad = await cli('task', 'search', 'state:done');
    expect(bad.code).toBe(2);
    expect(oneLine(bad.stderr)).toMatch(/^taskline: task search: query term "state:done" has no state "done"; the accepted form is state:<state>/);
  });
});
