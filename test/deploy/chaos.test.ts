/**
 * `npm run chaos -- --quick`: the project's chaos suite, bounded, on both stores — workers
 * SIGKILLed and SIGSTOPped under load, Redis SIGKILLed and restarted on its append-only file, the
 * scheduler's leader SIGKILLed. It must pass: nothing acknowledged lost, nothing completed twice, no
 * fire missed or doubled; and every scenario must really have run its faults.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.js';

const ROOT = resolve(import.meta.dirname, '../..');

interface Row {
  scenario: string;
  store: string;
  tasks: number;
  faults: number;
  idleFaults: number;
  lost: number | null;
  duplicates: number;
  reexecutions: number | null;
  lateRefused: number | null;
  resumeMs: number;
  missedFires: number | null;
}

describe('the chaos suite, quick', () => {
  it('passes on both stores with every fault injected', async () => {
    const dir = tempDir('chaos-test');
    const report = join(dir.path, 'chaos.json');
    const child = spawn(process.execPath, ['chaos/run.mjs', '--quick', '--json', report], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const timer = setTimeout(() => child.kill('SIGINT'), 280_000);
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    clearTimeout(timer);
    console.log(output);
    expect(code, output).toBe(0);

    const { rows, failed } = JSON.parse(readFileSync(report, 'utf8')) as { rows: Row[]; failed: boolean };
    expect(failed).toBe(false);
    expect(rows.map((r) => `${r.scenario} on ${r.store}`)).toEqual([
      'worker SIGKILL on redis', 'worker SIGSTOP on redis', 'Redis SIGKILL + AOF restart on redis', 'scheduler leader SIGKILL on redis',
      'worker SIGKILL on sqlite', 'worker SIGSTOP on sqlite', 'scheduler leader SIGKILL on sqlite',
    ]);
    for (const row of rows) {
      expect(row.faults, row.scenario).toBeGreaterThan(0);
      expect(row.idleFaults, `${row.scenario}: faults that hit an idle worker`).toBe(0);
      expect(row.tasks, row.scenario).toBeGreaterThan(0);
      expect(row.duplicates, row.scenario).toBe(0);
      if (row.lost !== null) expect(row.lost, row.scenario).toBe(0);
      if (row.missedFires !== null) expect(row.missedFires, row.scenario).toBe(0);
    }
    // A killed or frozen worker's tasks ran again elsewhere: the faults hit work in flight; a
    // frozen worker's results, sent once it was resumed, were refused as late.
    for (const row of rows.filter((r) => r.scenario.startsWith('worker'))) expect(row.reexecutions, row.scenario).toBeGreaterThan(0);
    for (const row of rows.filter((r) => r.scenario === 'worker SIGSTOP')) expect(row.lateRefused, row.scenario).toBeGreaterThan(0);
    dir.remove();
  }, 300_000);
});
