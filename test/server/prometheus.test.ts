/** deploy/prometheus: the alert rules and scrape config pass promtool (Debian package `prometheus`). */
import { execFile } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.js';
import { commandPresent } from '../helpers/commands.js';

const DIR = resolve(import.meta.dirname, '../../deploy/prometheus');
const run = promisify(execFile);

const present = commandPresent('promtool');
if (!present) console.warn('skipping the promtool checks: promtool is not installed (apt-get install prometheus; .ci/run installs it)');

describe.skipIf(!present)('Prometheus files', () => {
  it('promtool check rules', async () => {
    const { stdout } = await run('promtool', ['check', 'rules', 'taskline-alerts.yml'], { cwd: DIR });
    expect(stdout).toMatch(/SUCCESS: 8 rules found/);
  });

  it('promtool check config', async () => {
    // promtool checks that the read token's file exists, and deploy/compose.yaml writes it only
    // when Prometheus starts: the shipped files are checked in a copy whose token file is a
    // temporary one, the only line changed.
    const credentials = 'credentials_file: /tmp/taskline-read-token';
    const copy = tempDir('taskline-promtool');
    try {
      cpSync(DIR, copy.path, { recursive: true });
      const token = join(copy.path, 'read-token');
      writeFileSync(token, 'a-read-token', { mode: 0o600 });
      const config = readFileSync(join(copy.path, 'prometheus.yml'), 'utf8');
      expect(config.split(credentials)).toHaveLength(2);
      writeFileSync(join(copy.path, 'prometheus.yml'), config.replace(credentials, `credentials_file: ${token}`));
      const { stdout } = await run('promtool', ['check', 'config', 'prometheus.yml'], { cwd: copy.path });
      expect(stdout).toContain('SUCCESS');
      // The rule files the config names were checked with it.
      expect(stdout).toContain('taskline-alerts.yml');
    } finally {
      copy.remove();
    }
  });

  it('promtool test rules: backlog over 1000 for 10 minutes, no live workers, no scheduler leader', async () => {
    const { stdout } = await run('promtool', ['test', 'rules', 'taskline-alerts.test.yml'], { cwd: DIR });
    expect(stdout).toContain('SUCCESS');
  });

  it('the rules use the metric names the code exports', async () => {
    const { readFile } = await import('node:fs/promises');
    const rules = await readFile(resolve(DIR, 'taskline-alerts.yml'), 'utf8');
    for (const name of ['scheduler_tasks_failed_total', 'scheduler_tasks_dispatched_total', 'scheduler_queue_depth', 'scheduler_tasks_dead_total', 'scheduler_schedule_fires_total', 'scheduler_workers', 'scheduler_leader']) {
      expect(rules).toContain(name);
    }
  });
});
