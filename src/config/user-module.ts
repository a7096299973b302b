/**
 * Imports a module the user wrote — a `taskline.config.mjs`, `worker --handlers`, `enqueue
 * --definitions` — and, when it fails to load, says in one line where: `<file>:<line>:<column>`
 * of the syntax error, or of the statement that threw while the module ran.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
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
  // Only a SyntaxError has the decorated form; any other message may end in ':<digits>' (a port).
  const syntax = error.name === 'SyntaxError';
  const where = (syntax ? decoratedLocation(stack) : null) ?? (syntax && userFrame(stack) === null ? await reparseLocation(url) : userFrame(stack));
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
 * Node 20 leaves the place of an ES module's syntax error out of the error it gives import().
 * `node --check` of the file finds it when the error is in the file itself (it only parses);
 * when the file parses, the error is in a module it imports: Node prints where when the import
 * fails uncaught, so import it again in a child — unless the file has a dynamic import(),
 * before which its code could run. A graph with a syntax error is never linked: no code runs.
 */
async function reparseLocation(url: string): Promise<string | null> {
  let path: string;
  try {
    path = fileURLToPath(url);
  } catch {
    return null;
  }
  const own = decoratedLocation(await childStderr(['--no-warnings', '--check', path]));
  if (own !== null) return own;
  let source = '';
  try {
    source = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  if (/\bimport\s*\(/.test(source)) return null;
  return decoratedLocation(await childStderr(['--no-warnings', '--input-type=module', '-e', 'await import(process.argv[1])', url]));
}

function childStderr(args: string[]): Promise<string> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { timeout: 10_000, maxBuffer: 1 << 20 }, (_error, _stdout, stderr) => resolve(stderr));
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
