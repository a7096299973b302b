/** The `taskline` command tree (DESIGN §11). One file per command under commands/. */
import { Command, Option } from 'commander';
import { VERSION } from '../version.js';
import { registerDevCommand } from './commands/dev.js';
import { registerEnqueueCommand } from './commands/enqueue.js';
import { registerQueueCommands } from './commands/queue.js';
import { registerScheduleCommands } from './commands/schedule.js';
import { registerSchedulersCommand } from './commands/schedulers.js';
import { registerServerCommand } from './commands/server.js';
import { registerStatsCommand } from './commands/stats.js';
import { registerTaskCommands } from './commands/task.js';
import { registerWorkerCommand } from './commands/worker.js';
import { registerWorkersCommand } from './commands/workers.js';
import { UsageError } from './errors.js';

export function createProgram(): Command {
  const program = new Command('taskline')
    .description('Taskline: durable task queue and workers on Redis or an embedded SQLite file')
    .version(VERSION, '-V, --version')
    .addOption(new Option('--backend <url>', 'store: redis://host:port[/db], rediss://…, sqlite:<path> (env TASKLINE_BACKEND, REDIS_URL …; default sqlite:./taskline.db)'))
    .addOption(new Option('--prefix <prefix>', 'Redis key prefix (env TASKLINE_PREFIX; default tl)'))
    .addOption(new Option('--config <path>', 'config file (env TASKLINE_CONFIG; default ./taskline.config.json|mjs|yaml if present)'))
    .option('--json', 'print JSON for scripts instead of tables')
    .usage('[options] <command>')
    .argument('[command]')
    .action((command: string | undefined) => {
      const names = program.commands.map((c) => c.name()).join(', ');
      throw new UsageError(command === undefined ? `missing command: ${names}` : `unknown command ${JSON.stringify(command)}: ${names}`);
    });
  registerDevCommand(program);
  registerWorkerCommand(program);
  registerServerCommand(program);
  registerEnqueueCommand(program);
  registerTaskCommands(program);
  registerQueueCommands(program);
  registerScheduleCommands(program);
  registerSchedulersCommand(program);
  registerWorkersCommand(program);
  registerStatsCommand(program);
  return program;
}

/** `taskline task ls` for argv `['task', 'ls', '--state', 'x']`: the command a usage error is about. */
export function commandPath(program: Command, args: string[]): string {
  const path = ['taskline'];
  let current = program;
  for (const arg of args) {
    if (arg.startsWith('-')) continue;
    const next = current.commands.find((c) => c.name() === arg || c.aliases().includes(arg));
    if (!next) continue;
    path.push(next.name());
    current = next;
  }
  return path.join(' ');
}
