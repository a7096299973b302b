/** Runs a command's body with a CliContext that is always closed afterwards. */
import type { Command } from 'commander';
import { CliContext } from './context.js';

export async function withContext(command: Command, body: (ctx: CliContext) => Promise<void>): Promise<void> {
  const ctx = await CliContext.fromCommand(command);
  try {
    await body(ctx);
  } finally {
    await ctx.close();
  }
}
