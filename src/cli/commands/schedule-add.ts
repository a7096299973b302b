/** `taskline schedule add <id> --cron … --type …` or `taskline schedule add --file schedules.json`. */
import { readFileSync } from 'node:fs';
import { Option, type Command } from 'commander';
import { TasklineError } from '../../core/errors.js';
import { type ScheduleInput } from '../../core/schedule.js';
import { validateSchedule } from '../../scheduler/schedule.js';
import { duration, parsePayload, wholeNumber } from '../args.js';
import { UsageError } from '../errors.js';
import { scheduleJson } from '../json.js';
import { formatTime } from '../output.js';
import { withContext } from '../run.js';
import { nextFire } from '../start-scheduler.js';
import { catchUp, localTime, overlapPolicy, pointInTime } from './schedule-options.js';
import { RecordedTypes } from '../../client/recorded-types.js';

interface AddOptions {
  cron?: string;
  timezone?: string;
  type?: string;
  payload?: string;
  queue?: string;
  group?: string;
  maxRetries?: number;
  timeout?: number;
  overlap?: ScheduleInput['overlap'];
  catchUp?: { policy: NonNullable<NonNullable<ScheduleInput['catchUp']>['policy']>; window?: number };
  jitter?: number;
  startAt?: string;
  endAt?: string;
  paused?: boolean;
  note?: string;
  file?: string;
  replace?: boolean;
}

/** Options that describe one schedule, and so cannot be combined with --file. */
const DEFINITION_FLAGS: [keyof AddOptions, string][] = [
  ['cron', '--cron'], ['timezone', '--tz'], ['type', '--type'], ['payload', '--payload'], ['queue', '--queue'], ['group', '--group'], ['maxRetries', '--max-retries'],
  ['timeout', '--timeout'], ['overlap', '--overlap'], ['catchUp', '--catch-up'], ['jitter', '--jitter'], ['startAt', '--start-at'], ['endAt', '--end-at'],
  ['paused', '--paused'], ['note', '--note'],
];

export function registerScheduleAddCommand(schedule: Command): void {
  schedule
    .command('add')
    .description('create a schedule from flags, or every schedule of a JSON file (--file)')
    .usage('<id> --cron <expr> --type <type> [options] | --file <path>')
    .argument('[id]', 'schedule id: letters, digits and _ . @ -, e.g. weekly-report')
    .option('--cron <expr>', 'cron expression: 5 or 6 fields (seconds first), L W #, @daily …, @every 5m; quote it')
    .option('--tz, --timezone <zone>', 'IANA time zone of the expression (default UTC)')
    .option('--type <type>', 'task type each fire enqueues')
    .option('--payload <json>', 'task payload as JSON (- reads stdin; default {})')
    .option('--queue <name>', 'queue of the tasks (default "default")')
    .option('--group <group>', "the tasks' group in their queue (queue limit --group-concurrency)")
    .addOption(new Option('--max-retries <n>', 'retries after the first attempt (default 3)').argParser(wholeNumber(1000)))
    .addOption(new Option('--timeout <duration>', 'time allowed per attempt (default 30m)').argParser(duration(1)))
    .addOption(new Option('--overlap <policy>', 'while the previous run is unfinished: skip, allow, bufferOne, cancelPrevious (default skip)').argParser(overlapPolicy))
    .addOption(new Option('--catch-up <policy[:window]>', 'missed fires: skip, latest or all, within a window (default latest:1h)').argParser(catchUp))
    .addOption(new Option('--jitter <duration>', 'up to this much random delay per fire (default 0)').argParser(duration()))
    .option('--start-at <time>', 'no fires before: ISO-8601 with a zone, a date (UTC) or epoch ms')
    .option('--end-at <time>', 'no fires after: ISO-8601 with a zone, a date (UTC) or epoch ms')
    .option('--paused', 'create it paused')
    .option('--note <text>', 'with --paused: why')
    .option('--file <path>', 'a JSON file holding a schedule { id, cron, timezone?, task: { type, … }, … } or a list of them (- reads stdin)')
    .option('--replace', 'replace a schedule that has the id (default: an existing id is an error)')
    .action(async (id: string | undefined, options: AddOptions, command: Command) => {
      const inputs = options.file === undefined ? [await fromFlags(id, options)] : fromFile(id, options);
      // Validate everything before storing anything.
      for (const input of inputs) validateSchedule(input);
      await withContext(command, async (ctx) => {
        const store = await ctx.backend();
        if (options.replace !== true) {
          const taken = new Set((await store.listSchedules()).map((s) => s.id));
          const conflict = inputs.find((input) => taken.has(input.id));
          if (conflict) throw new TasklineError('TL_SCHEDULE_CONFLICT', `a schedule with id ${JSON.stringify(conflict.id)} already exists (give --replace to replace it)`);
        }
        // Payloads of types workers recorded with a schema are checked, all before storing any.
        const recorded = new RecordedTypes(store);
        for (const input of inputs) {
          const { task } = validateSchedule(input);
          await recorded.check(task.type, JSON.stringify(task.payload ?? null));
        }
        const added = [];
        for (const input of inputs) {
          const definition = validateSchedule(input);
          added.push(options.replace === true ? await store.upsertSchedule(definition) : await store.createSchedule(definition));
        }
        const now = await store.now();
        const listed = added.map((s) => scheduleJson(s, nextFire(s, now)));
        ctx.out.data(options.file === undefined ? listed[0] : { schedules: listed });
        for (const [i, s] of added.entries()) {
          const next = listed[i].nextRunAt;
          const when = s.paused ? 'paused' : next === null ? 'no fire ahead' : `next fire ${localTime(next, s.timezone)} (${formatTime(next)})`;
          ctx.out.line(`${options.replace === true ? 'saved' : 'added'} schedule ${s.id}: ${s.cron} (${s.timezone}) → ${s.task.type} on queue ${s.task.queue}; ${when}`);
        }
      });
    });
}

async function fromFlags(id: string | undefined, options: AddOptions): Promise<ScheduleInput> {
  const missing = [id === undefined ? '<id>' : null, options.cron === undefined ? '--cron' : null, options.type === undefined ? '--type' : null].filter((m) => m !== null);
  if (missing.length > 0) throw new UsageError(`schedule add needs ${missing.join(', ')} (or --file <path>)`);
  if (options.note !== undefined && options.paused !== true) throw new UsageError('schedule add: --note goes with --paused');
  const input: ScheduleInput = {
    id: id!,
    cron: options.cron!,
    task: { type: options.type!, payload: await parsePayload(options.payload) },
  };
  if (options.timezone !== undefined) input.timezone = options.timezone;
  if (options.queue !== undefined) input.task.queue = options.queue;
  if (options.group !== undefined) input.task.group = options.group;
  if (options.maxRetries !== undefined) input.task.maxRetries = options.maxRetries;
  if (options.timeout !== undefined) input.task.timeout = options.timeout;
  if (options.overlap !== undefined) input.overlap = options.overlap;
  if (options.catchUp !== undefined) input.catchUp = options.catchUp;
  if (options.jitter !== undefined) input.jitter = options.jitter;
  if (options.startAt !== undefined) input.startAt = pointInTime('--start-at', options.startAt);
  if (options.endAt !== undefined) input.endAt = pointInTime('--end-at', options.endAt);
  if (options.paused === true) {
    input.paused = true;
    input.pauseNote = options.note ?? null;
  }
  return input;
}

function fromFile(id: string | undefined, options: AddOptions): ScheduleInput[] {
  const path = options.file!;
  const extra = DEFINITION_FLAGS.filter(([key]) => options[key] !== undefined).map(([, flag]) => flag);
  if (id !== undefined) extra.unshift('<id>');
  if (extra.length > 0) throw new UsageError(`schedule add --file takes everything from the file: drop ${extra.join(', ')}`);
  let text: string;
  try {
    text = readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (error) {
    throw new UsageError(`--file ${path}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
  }
  let content: unknown;
  try {
    content = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--file ${path} is not valid JSON: ${(error as Error).message}`);
  }
  const list = Array.isArray(content) ? content : [content];
  if (list.length === 0) throw new UsageError(`--file ${path} holds an empty list: give a schedule or a list of schedules`);
  const seen = new Set<unknown>();
  for (const item of list as { id?: unknown }[]) {
    if (typeof item === 'object' && item !== null && seen.has(item.id)) throw new UsageError(`--file ${path}: schedule id ${JSON.stringify(item.id)} is listed twice`);
    if (typeof item === 'object' && item !== null) seen.add(item.id);
  }
  return list as ScheduleInput[];
}
