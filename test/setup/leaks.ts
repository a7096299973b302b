/**
 * Fails a test file that leaves a connection, timer, server or child process behind
 * (tests clean up). Compares Node's active resources after the file with before it.
 */
import { afterAll, beforeAll, expect } from 'vitest';

const WATCHED = new Set(['TCPSocketWrap', 'TCPServerWrap', 'Timeout', 'ProcessWrap', 'PipeWrap', 'Immediate']);

function watchedResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const name of process.getActiveResourcesInfo()) {
    if (WATCHED.has(name)) counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return counts;
}

let baseline = new Map<string, number>();

beforeAll(() => {
  baseline = watchedResources();
});

afterAll(async () => {
  // Closed sockets and killed processes release their handles within a few event-loop turns.
  let leaked: string[] = [];
  for (let i = 0; i < 40; i++) {
    const now = watchedResources();
    leaked = [...now].filter(([name, n]) => n > (baseline.get(name) ?? 0)).map(([name, n]) => `${name} ×${n - (baseline.get(name) ?? 0)}`);
    if (leaked.length === 0) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  expect(leaked, 'resources left open by this test file').toEqual([]);
});
