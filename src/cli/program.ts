/** The `taskline` command tree. One file per command under commands/. */
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
import { registerWorkflowCommands } from './commands/workflow.js';
import { registerWorkerCommand } from './commands/worker.js';
import { registerTypesCommand } from './commands/types.js';
import { registerWorkersCommand } from './commands/workers.js';
import { UsageError } from './errors.js';

export function createProgram(): Command {
  const program = new Command('taskline')
    .description('Taskline: durable task queue and workers on Redis or an embedded SQLite file')
    .version(VERSION, '-V, --version')
    .addOption(new Option('--backend <url>', 'store: redis://host:port[/db], rediss://…, redis+sentinel://host:port,…/<master>, redis+cluster://host:port,… [?durability=replicated], sqlite:<path> (env TASKLINE_BACKEND, REDIS_URL …; default sqlite:./taskline.db)'))
    .addOption(new Option('--prefix <prefix>', 'Redis key prefix (env TASKLINE_PREFIX; default tl)'))
    .addOption(new Option('--config <path>', 'config file (env TASKLINE_CONFIG; default ./taskline.config.json|mjs|yaml if present)'))
    .option('--json', 'print JSON for scripts instead of tables')
    .usage('[options] <command>')
    .argument('[command]')
    .argument('[args...]')
    .action((command: string | undefined, args: string[]) => {
      const names = program.commands.map((c) => c.name());
      // `taskline help` and `taskline help schedule add`: that command's help, exit 0.
      if (command === 'help') {
        let target: Command = program;
        for (const name of args) {
          const next = target.commands.find((c) => c.name() === name || c.aliases().includes(name));
          if (!next) throw new UsageError(`no command ${JSON.stringify(name)} to show help for: ${target.commands.map((c) => c.name()).join(', ')}`);
          target = next;
        }
        target.outputHelp();
        return;
      }
      if (command === undefined) throw new UsageError(`missing command: ${names.join(', ')}`);
      const near = closest(command, names);
      throw new UsageError(`unknown command ${JSON.stringify(command.slice(0, 100))}${near ? ` — did you mean ${near}?` : ''}; commands: ${names.join(', ')}`);
    });
  registerDevCommand(program);
  registerWorkerCommand(program);
  registerServerCommand(program);
  registerEnqueueCommand(program);
  registerTaskCommands(program);
  registerWorkflowCommands(program);
  registerQueueCommands(program);
  registerScheduleCommands(program);
  registerSchedulersCommand(program);
  registerWorkersCommand(program);
  registerTypesCommand(program);
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

/** The name within two edits of `typed` (a typo), if one is. */
function closest(typed: string, names: string[]): string | null {
  let best: string | null = null;
  let bestDistance = 3;
  for (const name of names) {
    const d = editDistance(typed.toLowerCase(), name);
    if (d < bestDistance) {
      best = name;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length];
}
