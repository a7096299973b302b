/** Child processes for multi-process tests: started, read line by line, always killed at the end. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

export class ChildWorker {
  readonly lines: string[] = [];
  private waiters: { match: (line: string) => boolean; resolve: (line: string) => void }[] = [];
  readonly exited: Promise<number | null>;

  constructor(readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      this.lines.push(line);
      this.waiters = this.waiters.filter((w) => {
        if (!w.match(line)) return true;
        w.resolve(line);
        return false;
      });
    });
    child.stderr?.on('data', (chunk: Buffer) => process.stderr.write(`[child ${child.pid}] ${chunk.toString()}`));
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  }

  static start(script: string, env: Record<string, string>): ChildWorker {
    return new ChildWorker(spawn(process.execPath, [script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }));
  }

  /** Resolves with the first line (already printed or to come) that matches. */
  waitForLine(match: (line: string) => boolean, timeoutMs = 15_000): Promise<string> {
    const seen = this.lines.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no matching line within ${timeoutMs} ms; got:\n${this.lines.join('\n')}`)), timeoutMs);
      this.waiters.push({ match, resolve: (line) => (clearTimeout(timer), resolve(line)) });
    });
  }

  kill(signal: NodeJS.Signals): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
  }

  async destroy(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGCONT');
      this.child.kill('SIGKILL');
    }
    await this.exited;
  }
}

/** Polls `check` until it returns a truthy value (for state that changes in another process). */
export async function eventually<T>(check: () => Promise<T | null | undefined | false>, timeoutMs = 15_000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${last instanceof Error ? last.message : JSON.stringify(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
