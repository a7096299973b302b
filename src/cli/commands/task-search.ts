/** `taskline task search <query>`: tasks across queues and states (the query language of core/task-query.ts). */
import { Option, type Command } from 'commander';
import { isTasklineError } from '../../core/errors.js';
import { parseTaskQuery, type TaskFilter } from '../../core/task-query.js';
import { positiveInt } from '../args.js';
import { UsageError } from '../errors.js';
import { taskSummaryJson } from '../json.js';
import { clip, formatTime } from '../output.js';
import { withContext } from '../run.js';

interface SearchOptions {
  limit: number;
  cursor?: string;
}

const TERMS =
  'Terms (all must hold): id:<id> type:<type> queue:<name> state:<state> err:<text> (in the last error) after:<ISO time> before:<ISO time> ' +
  '(created) payload.<key>.<key>:<value> (JSON when it parses: payload.user_id:42 is the number) and bare words (in the id or type); ' +
  'quote a value with spaces: err:"connection refused". Each call examines at most 5,000 tasks and prints the command for the next page.';

export function registerTaskSearch(task: Command): void {
  task
    .command('search')
    .summary('search tasks across queues and states')
    .description(`search tasks across queues and states. ${TERMS}`)
    .argument('<query...>', 'search terms (one argument or several)')
    .addOption(new Option('--limit <n>', 'matching tasks per page').default(20).argParser(positiveInt(1000)))
    .option('--cursor <cursor>', 'continue after a previous page (its nextCursor), with the same query')
    .action(async (words: string[], options: SearchOptions, command: Command) => {
      const query = words.join(' ');
      const filter = parse(query);
      await withContext(command, async (ctx) => {
        const page = await (await ctx.backend()).searchTasks(filter, { limit: options.limit, cursor: options.cursor });
        ctx.out.data({ query, tasks: page.tasks.map(taskSummaryJson), nextCursor: page.nextCursor, scanned: page.scanned, total: page.total });
        if (ctx.out.json) return;
        if (page.tasks.length > 0) {
          ctx.out.table(
            ['ID', 'QUEUE', 'TYPE', 'STATE', 'CREATED', 'ERROR'],
            page.tasks.map((t) => [t.id, t.queue, t.type, t.state, formatTime(t.createdAt), clip(t.lastError, 50)]),
          );
        }
        const found = `${page.tasks.length === 0 ? 'no' : page.tasks.length} matching task${page.tasks.length === 1 ? '' : 's'}`;
        ctx.out.line(`${found}; scanned ${page.scanned} of ${page.total}`);
        if (page.nextCursor !== null) ctx.out.line(`more: taskline task search ${shellQuote(query)} --limit ${options.limit} --cursor ${page.nextCursor}`);
      });
    });
}

/** A bad term is a usage error (exit 2), with the parser's message. */
function parse(query: string): TaskFilter {
  try {
    return parseTaskQuery(query, 'query');
  } catch (error) {
    if (isTasklineError(error, 'TL_INVALID_REQUEST')) throw new UsageError(`task search: ${error.message}`);
    throw error;
  }
}

function shellQuote(text: string): string {
  return /^[\w:.@/=+-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
