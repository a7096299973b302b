#!/usr/bin/env node
/** The `taskline` executable: runs the command, prints any error as one line, sets the exit code. */
import { CommanderError } from 'commander';
import { describeError, exitCodeFor, EXIT_OK, EXIT_USAGE } from './errors.js';
import { commandPath, createProgram } from './program.js';

// `taskline task ls | head -1`: a reader that goes away is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

async function main(argv: string[]): Promise<number> {
  const program = createProgram();
  // Commander's own errors are thrown to here and printed once, on one line, like every other.
  for (const command of [program, ...allSubcommands(program)]) {
    command.exitOverride();
    command.configureOutput({ outputError: () => undefined });
    command.showSuggestionAfterError(true);
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return EXIT_OK;
  } catch (error) {
    const code = exitCodeFor(error);
    if (code === EXIT_OK) return EXIT_OK;
    const hint = code === EXIT_USAGE ? ` (see ${commandPath(program, argv)} --help)` : '';
    process.stderr.write(`taskline: ${describeError(error)}${hint}\n`);
    if (process.env.TASKLINE_DEBUG === '1' && error instanceof Error && !(error instanceof CommanderError)) process.stderr.write(`${error.stack}\n`);
    return code;
  }
}

function allSubcommands(command: ReturnType<typeof createProgram>): ReturnType<typeof createProgram>[] {
  return command.commands.flatMap((c) => [c, ...allSubcommands(c)]);
}

const code = await main(process.argv.slice(2));
// Flush and leave even if a library left a handle open (stdout to a pipe is synchronous on Linux).
process.exit(code);
