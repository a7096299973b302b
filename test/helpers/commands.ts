import { execFileSync } from 'node:child_process';

/** Whether `command` runs here (it exits 0 with `args`), for tests of an optional system tool. */
export function commandPresent(command: string, args: string[] = ['--version']): boolean {
  try {
    execFileSync(command, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
