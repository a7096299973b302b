/**
 * Runs the built CLI (`node dist/cli/main.js`) as a child process against real stores: a key
 * prefix per test on the shared Redis, a fresh SQLite file per test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { connect } from '../../src/backend/connect.js';
import type { Backend } from '../../src/backend/contract.js';
import { deletePrefix, REDIS_URL, uniquePrefix } from '../helpers/stores.js';

export const CLI = resolve(import.meta.dirname, '../../dist/cli/main.js');

if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build before the CLI tests`);

/** The environment of a child: the test runner's, without any Taskline setting that would leak in. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  const settings = /^(TASKLINE_|SCHEDULER_|REDIS_URL$|BROKER_URL$|RESULT_BACKEND$|MAX_RETRIES$|DEFAULT_QUEUE$|LOCK_TTL$|METRICS_PORT$|PORT$|SMTP_URL$|MAIL_FROM$|APP_DATABASE$)/;
  for (const [key, value] of Object.entries(process.env)) if (!settings.test(key)) env[key] = value;
  return { ...env, ...extra };
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd?: string;
  env?: Record<string, string>;
  input?: string;
  timeoutMs?: number;
}

export function runCli(args: string[], options: RunOptions = {}): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: options.cwd ?? tmpdir(), env: cleanEnv(options.env), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`taskline ${args.join(' ')} did not exit within ${options.timeoutMs ?? 20_000} ms; stderr: ${stderr}`));
    }, options.timeoutMs ?? 20_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** A long-running CLI process (dev, worker, stats --watch) whose output can be awaited. */
export class CliProcess {
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcess;

  constructor(args: string[], options: RunOptions = {}) {
    this.child = spawn(process.execPath, [CLI, ...args], { cwd: options.cwd ?? tmpdir(), env: cleanEnv(options.env), stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (this.stdout += chunk));
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolvePromise) => this.child.on('exit', (code, signal) => resolvePromise({ code, signal })));
  }

  /** Resolves when stdout matches, rejects if the process exits first or time runs out. */
  async waitFor(pattern: RegExp, timeoutMs = 15_000): Promise<RegExpMatchArray> {
    const deadline = Date.now() + timeoutMs;
    let exited = false;
    void this.exited.then(() => (exited = true));
    while (Date.now() < deadline) {
      const match = pattern.exec(this.stdout);
      if (match) return match;
      if (exited) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`no output matching ${pattern} (${exited ? 'the process exited' : 'timed out'}); stdout: ${this.stdout} stderr: ${this.stderr}`);
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  get pid(): number {
    return this.child.pid!;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** SIGTERM, and SIGKILL if it has not exited within `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    if (!this.running) return;
    this.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const exited = await Promise.race([this.exited, new Promise((r) => (timer = setTimeout(() => r(null), graceMs)))]);
    clearTimeout(timer);
    if (exited === null) await this.kill();
  }

  /** Ends the process if a test left it running. */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGCONT');
      this.child.kill('SIGKILL');
      await this.exited;
    }
  }
}

export const BACKEND_KINDS = ['redis', 'sqlite'] as const;
export type BackendKind = (typeof BACKEND_KINDS)[number];

/** A store for one test, as CLI arguments and as an in-process backend for checks. */
export interface CliStore {
  kind: BackendKind;
  url: string;
  /** `--backend …` (and `--prefix …` on Redis). */
  args: string[];
  /** A scratch directory for the test (cwd of children, handler modules). */
  dir: string;
  open(): Promise<Backend>;
  cleanup(): Promise<void>;
}

export async function cliStore(kind: BackendKind): Promise<CliStore> {
  const dir = mkdtempSync(join(tmpdir(), `taskline-cli-${kind}-`));
  const opened: Backend[] = [];
  const prefix = kind === 'redis' ? uniquePrefix('cli') : undefined;
  const url = kind === 'redis' ? REDIS_URL : `sqlite:${join(dir, 'store.db')}`;
  return {
    kind,
    url,
    dir,
    args: prefix === undefined ? ['--backend', url] : ['--backend', url, '--prefix', prefix],
    open: async () => {
      const backend = await connect(url, { prefix });
      opened.push(backend);
      return backend;
    },
    cleanup: async () => {
      await Promise.all(opened.map((backend) => backend.close()));
      if (prefix !== undefined) await deletePrefix(url, prefix);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Parses --json output, failing with the output in the message. */
export function parseJson(result: CliResult): any {
  try {
    return JSON.parse(result.stdout);
  } catch {
    throw new Error(`stdout is not JSON (exit ${result.code}): ${result.stdout} stderr: ${result.stderr}`);
  }
}

/** Stderr holds exactly one line. */
export function oneLine(stderr: string): string {
  const lines = stderr.split('\n').filter((l) => l !== '');
  if (lines.length !== 1) throw new Error(`expected one line on stderr, got ${lines.length}: ${stderr}`);
  return lines[0];
}
