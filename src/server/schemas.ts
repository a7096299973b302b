/** The API's zod schemas: request validation and the OpenAPI document come from these. */
import { z } from 'zod';
import { MAX_CONCURRENCY_LIMIT, MAX_KEEP, MAX_QUEUE_LENGTH, MAX_RATE_INTERVAL_MS, MAX_RATE_LIMIT } from '../backend/contract.js';
import { GROUP_PATTERN } from '../core/options.js';
import { TASK_STATES } from '../core/task.js';
import { WAITING_REASONS } from '../core/why-waiting.js';

// A `.describe()` text is the accepted form that validation messages name (invalid-input.ts)
// and the description in the OpenAPI document; without one the form is read from the schema.
const WHOLE_MS = 'a whole number of milliseconds >= 0';
const POSITIVE_MS = 'a whole number of milliseconds > 0';
const INSTANT = 'epoch milliseconds (a whole number >= 0) or an ISO-8601 time with a UTC offset, e.g. 2026-03-01T09:00:00Z';
const wholeMs = z.number().int().nonnegative().describe(WHOLE_MS);
const positiveMs = z.number().int().positive().describe(POSITIVE_MS);
/** Epoch ms or an ISO-8601 time. */
const instant = z.union([wholeMs, z.string().datetime({ offset: true })]).describe(INSTANT);
const taskType = z.string().min(1).describe('a task type string of 1–200 characters');
/** The enqueue option `group`, as core/options.ts validateGroup takes it (checked here too, so a bad one names its field). */
const group = z
  .string()
  .regex(GROUP_PATTERN)
  .describe('a group: 1–200 characters of letters, digits and _ . : @ / + = -');
const queryInt = (max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().nonnegative().max(max);

export const TaskState = z.enum(TASK_STATES);
export const BulkState = z.enum(['scheduled', 'queued', 'retrying', 'completed', 'dead', 'cancelled']);

/** Enqueue options, as JSON. */
const enqueueOptions = {
  queue: z.string().optional(),
  id: z.string().optional(),
  maxRetries: z.number().int().nonnegative().max(1000).optional(),
  timeout: positiveMs.optional(),
  deadline: instant.optional(),
  delay: wholeMs.optional(),
  runAt: instant.optional(),
  uniqueFor: positiveMs.optional(),
  uniqueKey: z.string().optional(),
  retention: wholeMs.optional(),
  headers: z.record(z.string()).optional(),
  group: group.optional(),
};

export const EnqueueItem = z.object({ type: taskType, payload: z.unknown().optional(), ...enqueueOptions }).strict();
/** The batch first: a body is taken as the batch form when it has `tasks` (route.ts parseInput). */
export const EnqueueBody = z
  .union([z.object({ tasks: z.array(EnqueueItem).min(1).max(1000).describe('a list of 1–1000 tasks {type, payload?, queue?, …}') }).strict(), EnqueueItem])
  .describe('a task {type, payload?, queue?, …} or a batch {tasks: [task, …]}');

/** `POST /api/v1/tasks/{type}`: the options as query parameters. */
export const EnqueueQuery = z
  .object({
    queue: z.string().optional(),
    id: z.string().optional(),
    maxRetries: queryInt(1000).optional(),
    timeout: z.coerce.number().int().positive().describe(POSITIVE_MS).optional(),
    deadline: z.union([queryInt(), z.string().datetime({ offset: true })]).describe(INSTANT).optional(),
    delay: queryInt().describe(WHOLE_MS).optional(),
    runAt: z.union([queryInt(), z.string().datetime({ offset: true })]).describe(INSTANT).optional(),
    uniqueFor: z.coerce.number().int().positive().describe(POSITIVE_MS).optional(),
    uniqueKey: z.string().optional(),
    retention: queryInt().describe(WHOLE_MS).optional(),
    group: group.optional(),
  })
  .strict();

export const Enqueued = z.object({ task_id: z.string(), queue: z.string(), status: z.enum(['enqueued', 'scheduled']) });
export const EnqueuedBatch = z.object({ tasks: z.array(Enqueued) });

export const TaskIdParams = z.object({ id: z.string().min(1).max(200) }).strict();
export const TaskTypeParams = z.object({ type: z.string().min(1).max(200) }).strict();
export const WaitQuery = z.object({ wait: z.coerce.number().min(0).max(300).describe('a number of seconds from 0 to 300').optional() }).strict();

/** An ISO-8601 time; null when unset, or when the stored value is not a time (listed in `invalid`). */
const time = z.string().datetime().nullable();
/** The fields of a view whose stored values could not be presented as stored (see present.ts). */
const invalid = z.array(z.string()).optional();
export const TaskStatus = z.object({
  id: z.string(),
  type: z.string(),
  queue: z.string(),
  state: TaskState,
  payload: z.unknown(),
  result: z.unknown(),
  error: z.string().nullable(),
  attempt: z.number().int(),
  max_retries: z.number().int(),
  created_at: time,
  enqueued_at: time,
  started_at: time,
  finished_at: time,
  next_run_at: time,
  worker_id: z.string().nullable(),
  progress: z.unknown(),
  cancel_requested: z.boolean(),
  group: z.string().nullable().describe('the task\'s group in its queue (the enqueue option group); null: none'),
  waiting: z
    .object({
      reason: z.enum(WAITING_REASONS),
      message: z.string(),
      until: time,
    })
    .nullable()
    .optional()
    .describe('GET /api/v1/tasks/{id} and a queue\'s task lists: why a waiting task has not started yet; null when it runs, finished or is about to be claimed'),
  logs: z.array(z.object({ at: time, message: z.string() })),
  links: z.object({ schedule_id: z.string().nullable(), schedule_fire_id: z.string().nullable(), workflow_id: z.string().nullable(), workflow_node: z.string().nullable(), parent_id: z.string().nullable() }),
  attempts: z.array(
    z.object({ attempt: z.number().int(), started_at: time, finished_at: time, outcome: z.string(), error: z.string().nullable(), worker_id: z.string().nullable() }),
  ),
  invalid,
});

export const Done = z.object({ ok: z.literal(true) });
export const CancelResult = z.object({ id: z.string(), status: z.enum(['cancelled', 'cancel-requested']) });

export const QueueParams = z.object({ queue: z.string().min(1).max(100) }).strict();
export const QueueStateParams = z.object({ queue: z.string().min(1).max(100), state: z.string() }).strict();
/** How many finished tasks of a state the queue keeps at most; null: no bound. */
const keepBound = z.number().int().nonnegative().max(MAX_KEEP).nullable().describe(`a whole number of tasks from 0 to ${MAX_KEEP}, or null for no bound`);
export const QueueKeepView = z.object({ completed: keepBound, dead: keepBound, cancelled: keepBound });
/** The bounds to change: a state left out keeps its bound, null removes it. */
export const QueueKeepBody = z.object({ completed: keepBound.optional(), dead: keepBound.optional(), cancelled: keepBound.optional() }).strict();
/** A limit to change: a whole number in its range; null or "none" removes it. */
const limitCount = (max: number, what: string) =>
  z.union([z.number().int().min(1).max(max), z.literal('none')]).nullable().describe(`a whole number from 1 to ${max} (${what}), or null or "none" for no limit`);
const RateBody = z
  .object({
    limit: z.number().int().min(1).max(MAX_RATE_LIMIT).describe(`a whole number of starts from 1 to ${MAX_RATE_LIMIT}`),
    intervalMs: z.number().int().min(1).max(MAX_RATE_INTERVAL_MS).describe(`a whole number of milliseconds from 1 to ${MAX_RATE_INTERVAL_MS} (24 h)`),
  })
  .strict()
  .describe(`at most limit (1 to ${MAX_RATE_LIMIT}) starts in any intervalMs (1 to ${MAX_RATE_INTERVAL_MS}), across all workers`);
/** The limits to change (a limit left out keeps its value), as the library's setQueueLimits takes them. */
export const QueueLimitsBody = z
  .object({
    rate: z.union([RateBody, z.literal('none')]).nullable().optional(),
    concurrency: limitCount(MAX_CONCURRENCY_LIMIT, 'most tasks of the queue running at once').optional(),
    groupConcurrency: limitCount(MAX_CONCURRENCY_LIMIT, 'most tasks of one group running at once').optional(),
    maxLength: limitCount(MAX_QUEUE_LENGTH, 'most tasks waiting (queued, scheduled, retrying); an enqueue past it gets 429').optional(),
  })
  .strict();
export const QueueLimitsView = z.object({
  rate: z.object({ limit: z.number().int(), interval_ms: z.number().int() }).nullable(),
  concurrency: z.number().int().nullable(),
  group_concurrency: z.number().int().nullable(),
  max_length: z.number().int().nullable(),
});
export const QueueView = z.object({
  name: z.string(),
  paused: z.boolean(),
  keep: QueueKeepView,
  limits: QueueLimitsView,
  counts: z.record(z.number().int()),
  size: z.number().int(),
  processed: z.number().int(),
  failed: z.number().int(),
  latency_ms: z.number().int(),
  groups: z
    .object({
      waiting: z.number().int().describe('groups with queued tasks'),
      running: z.record(z.number().int()).describe('running tasks per group, for each group with one (at most 1,000 groups)'),
    })
    .describe('the queue\'s groups (the enqueue option group)'),
  invalid,
});
export const QueueList = z.object({ queues: z.array(QueueView) });
export const TaskListQuery = z
  .object({ state: TaskState, limit: z.coerce.number().int().min(1).max(1000).optional(), cursor: z.string().max(500).optional() })
  .strict();
export const TaskList = z.object({ tasks: z.array(TaskStatus), next_cursor: z.string().nullable() });
export const BulkResult = z.object({ count: z.number().int() });

export const ScheduleParams = z.object({ id: z.string().min(1).max(200) }).strict();
const duration = z.union([wholeMs, z.string()]).describe('a whole number of milliseconds >= 0 or a duration such as "90s", "5m", "1h30m"');
const ScheduleFields = {
  cron: z.string().min(1).max(500),
  timezone: z.string().max(100).optional(),
  task: z
    .object({
      type: taskType,
      payload: z.unknown().optional(),
      queue: z.string().optional(),
      maxRetries: z.number().int().nonnegative().max(1000).optional(),
      timeout: positiveMs.optional(),
      retention: wholeMs.optional(),
      headers: z.record(z.string()).optional(),
      group: group.optional(),
    })
    .strict(),
  overlap: z.enum(['skip', 'allow', 'bufferOne', 'cancelPrevious']).optional(),
  catchUp: z.object({ policy: z.enum(['skip', 'latest', 'all']).optional(), window: duration.optional() }).strict().optional(),
  jitter: duration.optional(),
  startAt: instant.nullable().optional(),
  endAt: instant.nullable().optional(),
  paused: z.boolean().optional(),
  pauseNote: z.string().max(1000).nullable().optional(),
};
export const ScheduleBody = z.object({ id: z.string().min(1).max(200), ...ScheduleFields }).strict();
export const ScheduleUpdateBody = z.object({ id: z.string().min(1).max(200).optional(), ...ScheduleFields }).strict();
export const PauseBody = z.object({ note: z.string().max(1000).nullable().optional(), until: instant.nullable().optional() }).strict().optional();
export const BackfillBody = z.object({ from: instant, to: instant }).strict();
export const PreviewBody = z.object({ cron: z.string().min(1).max(500), timezone: z.string().max(100).optional(), count: z.number().int().min(1).max(1000).optional() }).strict();
export const FiresQuery = z.object({ limit: z.coerce.number().int().min(1).max(1000).optional() }).strict();

export const ScheduleView = z.object({
  id: z.string(),
  cron: z.string(),
  timezone: z.string(),
  task: z.record(z.unknown()),
  overlap: z.string(),
  catch_up: z.object({ policy: z.string(), window_ms: z.number() }),
  jitter_ms: z.number(),
  start_at: time,
  end_at: time,
  paused: z.boolean(),
  pause_note: z.string().nullable(),
  paused_until: time,
  source: z.string(),
  generation: z.number().int(),
  created_at: time,
  updated_at: time,
  next_run_at: time,
  last_fire_at: time,
  last_outcome: z.string().nullable(),
  invalid,
});
export const ScheduleList = z.object({ schedules: z.array(ScheduleView) });
export const FireView = z.object({
  fire_id: z.string(),
  nominal_at: time,
  enqueued_at: time,
  lag_ms: z.number().nullable(),
  outcome: z.string(),
  task_id: z.string().nullable(),
  task_state: TaskState.nullable(),
  invalid,
});
export const FireList = z.object({ fires: z.array(FireView) });
export const Preview = z.object({ times: z.array(z.object({ utc: z.string(), local: z.string() })) });

export const SchedulerList = z.object({
  schedulers: z.array(
    z.object({
      id: z.string(),
      host: z.string(),
      pid: z.number().int(),
      leader: z.boolean(),
      epoch: z.number().int().nullable(),
      started_at: time,
      last_tick_at: time,
      last_seen_at: time,
      fires_last_minute: z.number().int(),
      version: z.string(),
      invalid,
    }),
  ),
  leader: z
    .object({ id: z.string(), epoch: z.number().int(), expires_at: time, fired_through: time })
    .nullable(),
});

export const WorkerList = z.object({
  workers: z.array(
    z.object({
      id: z.string(),
      host: z.string(),
      pid: z.number().int(),
      queues: z.array(z.string()),
      concurrency: z.number().int(),
      running: z.array(z.string()),
      started_at: time,
      last_heartbeat_at: time,
      version: z.string(),
      invalid,
    }),
  ),
});

const Series = z.array(z.object({ at: z.string(), processed: z.number().int(), failed: z.number().int() }));
export const Stats = z.object({
  totals: z.object({ processed: z.number().int(), failed: z.number().int(), queued: z.number().int(), running: z.number().int(), dead: z.number().int(), workers: z.number().int() }),
  rates: z.object({ processed_per_minute: z.number(), failed_per_minute: z.number(), failure_ratio: z.number() }),
  minutes: Series,
  days: Series,
  queues: z.array(z.object({ name: z.string(), processed: z.number().int(), failed: z.number().int(), minutes: Series, days: Series })),
});

export const EventsQuery = z
  .object({ queue: z.string().max(100).optional(), type: z.string().max(200).optional(), kinds: z.string().max(200).optional() })
  .strict();

export const Health = z.object({ status: z.enum(['healthy', 'unhealthy']), error: z.string().optional() });
export const ErrorSchema = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

export const TypeList = z.object({
  types: z.array(
    z.object({
      type: z.string(),
      schema: z.record(z.unknown()).nullable(),
      queues: z.array(z.string()),
      recorded_at: time,
      workers: z.array(z.object({ id: z.string(), host: z.string(), queues: z.array(z.string()) })),
    }),
  ),
});
