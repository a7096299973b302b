/**
 * Imports a module the user wrote — a `taskline.config.mjs`, `worker --handlers`, `enqueue
 * --definitions` — and, when it fails to load, says in one line where: `<file>:<line>:<column>`
 * of the syntax error, or of the statement that threw while the module ran.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** A module that failed to load; `message` is the one line, `cause` Node's error. */
export class UserModuleError extends Error {
  override name = 'UserModuleError';
}

export async function importUserModule(path: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(path).href;
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (error) {
    throw new UserModuleError(await describeLoadError(error, url), { cause: error });
  }
}

/** `/app/h.mjs:3:15: SyntaxError: Unexpected token ';'`, or the error alone when no place is known. */
export async function describeLoadError(error: unknown, url: string): Promise<string> {
  if (!(error instanceof Error)) return String(error);
  // Node runs JavaScript: a TypeScript module needs compiling (or a loader) first.
  if ((error as NodeJS.ErrnoException).code === 'ERR_UNKNOWN_FILE_EXTENSION' && /\.[cm]?tsx?$/.test(url)) {
    return `${displayPath(url)}: a TypeScript module; compile it to JavaScript first (tsc), or run taskline under a TypeScript loader: node --import tsx node_modules/.bin/taskline …`;
  }
  const what = `${error.name}: ${error.message.split('\n')[0]}`;
  const stack = error.stack ?? '';
  const where = decoratedLocation(stack) ?? (error.name === 'SyntaxError' && userFrame(stack) === null ? await reparseLocation(url) : userFrame(stack));
  return where === null ? what : `${where}: ${what}`;
}

/**
 * The place Node puts before a SyntaxError's stack — `<file>:<line>`, the source line, a caret
 * under the column — for CommonJS modules (and for ES modules in newer Node versions).
 */
function decoratedLocation(text: string): string | null {
  const match = /^(\S.*):(\d+)\n.*\n([ \t]*)(\^?)/.exec(text);
  if (!match || /^\s*at /.test(match[1])) return null;
  // At the end of the input Node pads the caret line without a caret: the column after the last.
  const column = match[4] === '' && match[3] === '' ? '' : `:${match[3].length + 1}`;
  return `${displayPath(match[1])}:${match[2]}${column}`;
}

/** The first stack frame outside Node itself: where a module threw while it ran. */
function userFrame(stack: string): string | null {
  for (const line of stack.split('\n').slice(1)) {
    const match = /^\s*at (?:.*\()?((?:file:\/\/|\/|[A-Za-z]:\\).*?):(\d+):(\d+)\)?$/.exec(line);
    if (match) return `${displayPath(match[1])}:${match[2]}:${match[3]}`;
  }
  return null;
}

/**
 * Node 20 leaves the place of an ES module's syntax error out of the error it gives import(),
 * but prints it when the error is uncaught: import the module again in a child and read that.
 * Safe to run: a graph with a syntax error is never linked, so none of its code runs.
 */
function reparseLocation(url: string): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--no-warnings', '--input-type=module', '-e', 'await import(process.argv[1])', url],
      { timeout: 10_000, maxBuffer: 1 << 20 },
      (_error, _stdout, stderr) => resolve(decoratedLocation(stderr)),
    );
  });
}

function displayPath(location: string): string {
  if (!location.startsWith('file://')) return location;
  try {
    return fileURLToPath(location);
  } catch {
    return location;
  }
}
