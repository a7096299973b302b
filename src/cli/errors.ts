/**
 * How the CLI fails: one line on stderr and an exit code — 0 ok, 1 failure, 2 usage error.
 * Stack traces only with TASKLINE_DEBUG=1.
 */
import { CommanderError } from 'commander';
import { configErrorSource } from '../config/index.js';
import { isTasklineError, TasklineError } from '../core/errors.js';

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** Wrong arguments or options: exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A failure already explained (e.g. a task that died under --wait): exit 1 with this line. */
export class CommandFailed extends Error {
  override name = 'CommandFailed';
}

const USAGE_CODES = [
  'TL_INVALID_ARGUMENT', 'TL_INVALID_OPTION', 'TL_VALIDATION_FAILED', 'TL_PAYLOAD_TOO_LARGE', 'TL_PAYLOAD_NOT_JSON',
  'TL_INVALID_CRON', 'TL_INVALID_TIMEZONE', 'TL_INVALID_SCHEDULE', 'TL_INVALID_WORKFLOW',
] as const;

const HELP_CODES = new Set(['commander.helpDisplayed', 'commander.help', 'commander.version']);

export function exitCodeFor(error: unknown): number {
  if (error instanceof CommanderError) return HELP_CODES.has(error.code) && error.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
  if (error instanceof UsageError) return EXIT_USAGE;
  if (configErrorSource(error) === 'flag') return EXIT_USAGE;
  // Input the caller gave that Taskline refused before storing anything.
  for (const code of USAGE_CODES) if (isTasklineError(error, code)) return EXIT_USAGE;
  return EXIT_FAILURE;
}

/** The one line printed for an error. */
export function describeError(error: unknown): string {
  let message: string;
  if (error instanceof CommanderError) message = error.message.replace(/^error:\s*/, '');
  else if (error instanceof TasklineError) message = `${friendlier(error)} (${error.code})`;
  else if (error instanceof Error) message = error.message;
  else message = String(error);
  const line = message.replace(/\s*\n\s*/g, ' ').trim();
  return line.length > 600 ? `${line.slice(0, 597)}…` : line;
}

/** ioredis's retry message says nothing useful to an operator; say what to check instead. */
function friendlier(error: TasklineError): string {
  if (error.code === 'TL_STORE_UNAVAILABLE' && /max retries per request/i.test(error.message)) {
    const where = /^(cannot reach Redis at \S+):/.exec(error.message)?.[1] ?? 'cannot reach Redis';
    return `${where}: no answer (is redis-server running there? set the store with --backend or TASKLINE_BACKEND)`;
  }
  return error.message;
}
