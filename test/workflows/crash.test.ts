/**
 * Workflows under worker crashes, with real processes: worker processes are SIGKILLed every
 * second while 200 chords of 50 members run. Every chord's callback is enqueued once, completes
 * once with all 50 results in order, and no workflow is left running.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { chord, Client, group, task } from '../../src/index.js';
import { ChildWorker, eventually } from '../helpers/processes.js';
import { SHARED_STORE_KINDS, sharedStore, type SharedStore } from '../helpers/process-stores.js';

const WORKER = fileURLToPath(new URL('../fixtures/workflow-worker.mjs', import.meta.url));
const CHORDS = 200;
const MEMBERS = 50;
const WORKERS = 3;

describe.each(SHARED_STORE_KINDS)('workflows while worker processes are killed, on %s', (kind) => {
  let store: SharedStore;
  const children: ChildWorker[] = [];

  afterEach(async () => {
    await Promise.all(children.splice(0).map((c) => c.destroy()));
    await store?.cleanup();
  });

  it(`${CHORDS} chords of ${MEMBERS}: each callback completes exactly once with every result, nothing stuck`, async () => {
    store = await sharedStore(kind);
    const client = new Client(store.backend);
    const spawn = () => {
      const child = ChildWorker.start(WORKER, { ...store.env, LEASE_MS: '1000', RECOVER_MS: '200', CONCURRENCY: '16' });
      children.push(child);
      return child;
    };
    const live = Array.from({ length: WORKERS }, spawn);
    await Promise.all(live.map((c) => c.waitForLine((l) => l === 'ready', 20_000)));

    const ids: string[] = [];
    for (let c = 0; c < CHORDS; c++) {
      const members = Array.from({ length: MEMBERS }, (_, i) => task('member', { i }, { node: `m${i}`, maxRetries: 20, backoff: { type: 'fixed', delay: 50 } }));
      const { id } = await client.enqueueWorkflow(chord(group(...members), task('callback', null, { node: 'cb', maxRetries: 20, backoff: { type: 'fixed', delay: 50 } })), { id: `chord-${c}` });
      ids.push(id);
    }

    let kills = 0;
    const deadline = Date.now() + 150_000;
    let running = CHORDS;
    while (running > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const victim = live.splice(Math.floor(Math.random() * live.length), 1)[0];
      victim.kill('SIGKILL');
      kills += 1;
      const replacement = spawn();
      live.push(replacement);
      running = (await store.backend.listWorkflows({ state: 'running', limit: 1000 })).workflows.length;
    }
    // Let the last workers finish what is left without kills.
    for (let i = 0; i < 60 && running > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      running = (await store.backend.listWorkflows({ state: 'running', limit: 1000 })).workflows.length;
    }
    expect(running).toBe(0);
    expect(kills).toBeGreaterThanOrEqual(3);

    let reruns = 0;
    for (const id of ids) {
      const wf = (await client.getWorkflow(id))!;
      expect(wf.state).toBe('completed');
      const callback = wf.nodes.find((n) => n.id === 'cb')!;
      expect((callback.result as { seen: number[] }).seen).toEqual(Array.from({ length: MEMBERS }, (_, i) => i));
      const record = (await client.getTask(callback.taskId!))!;
      expect(record.state).toBe('completed');
      expect(record.attempts.filter((a) => a.outcome === 'completed')).toHaveLength(1);
      // A callback runs again only when a kill took its first run's lease.
      for (const attempt of record.attempts.slice(0, -1)) expect(attempt.error).toBe('lease expired (worker lost)');
      reruns += record.attempts.length - 1;
    }
    // The children's last lines may still be in their pipes: on SQLite the reads above are
    // synchronous, so this process has not polled its I/O since the last workflow finished.
    const startLines = () => children.flatMap((c) => c.lines.filter((l) => l.startsWith('callback ')));
    await eventually(async () => new Set(startLines().map((l) => l.split(' ')[1])).size >= CHORDS, 10_000, 50).catch(() => undefined);
    const starts = startLines();
    expect(new Set(starts.map((l) => l.split(' ')[1])).size).toBe(CHORDS);
    // No callback ran more often than its task's attempts say (a second start of the node would).
    expect(starts.length).toBeLessThanOrEqual(CHORDS + reruns);
    console.log(`${kind}: ${CHORDS} chords of ${MEMBERS}, ${kills} kills, ${reruns} callback re-runs after a kill, ${starts.length} callback starts`);
    await client.close();
  }, 240_000);
});
