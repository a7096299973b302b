/**
 * Bulk actions by filter (`POST /api/v1/bulk`): run, archive, delete or cancel every task a
 * search query matches in a state the action takes (core/transitions.ts). A job first counts
 * those tasks (`matched`), then acts on them a batch at a time, one store transition per task,
 * yielding to other requests between batches; a cancel stops it before its next batch. A query
 * that is exactly one queue and one state (`queue:mail state:dead`) of an action other than
 * cancel is done by the store's own call for that (runAll, archiveAll, deleteAll: batched in the
 * store, without a search or one call per task — on Redis each queued task's archive alone is an
 * O(N) LREM); such a job is one batch: a cancel takes effect once it returns.
 *
 * Jobs live in this task center's memory: a restart forgets them (the tasks already acted on
 * stay so), and another task center does not see them. The newest finished ones are kept.
 */
import type { Backend, BulkState, TaskSearchPage } from '../backend/contract.js';
import { isTasklineError } from '../core/errors.js';
import { uuidv7 } from '../core/ids.js';
import { emptyFilter, filterKey, type TaskFilter } from '../core/task-query.js';
import { TASK_STATES } from '../core/task.js';
import { accepts, type OperatorAction } from '../core/transitions.js';
import { systemClock, type Clock } from '../core/clock.js';

export type BulkJobState = 'running' | 'done' | 'cancelled' | 'failed';

export interface BulkJob {
  id: string;
  action: OperatorAction;
  /** The query, as given. */
  q: string;
  state: BulkJobState;
  /** Tasks the query matched in a state the action takes (counted first; raised if more turn up while acting). */
  matched: number;
  /** Tasks acted on. */
  done: number;
  /** Matched tasks the action could no longer take (moved or deleted since). */
  failed: number;
  startedAt: number;
  finishedAt: number | null;
  /** Why a failed job stopped (e.g. the store became unreachable); null otherwise. */
  error: string | null;
}

export interface BulkJobsOptions {
  /** Tasks acted on per batch; the job yields between batches. Default 500. */
  batchSize?: number;
  /** Store calls in flight at once within a batch. Default 16. */
  parallel?: number;
  /** Finished jobs kept for listing. Default 100. */
  keepFinished?: number;
  clock?: Clock;
}

/** Tasks per search page while counting (the most a page holds). */
const COUNT_PAGE = 1000;

const ACTS: Record<OperatorAction, (backend: Backend, id: string) => Promise<unknown>> = {
  run: (backend, id) => backend.runTask(id),
  archive: (backend, id) => backend.archiveTask(id),
  delete: (backend, id) => backend.deleteTask(id),
  cancel: (backend, id) => backend.cancelTask(id),
};

/** The store's calls for an action on every task of a queue in one state (none for cancel). */
const ACTS_ALL: Partial<Record<OperatorAction, (backend: Backend, queue: string, state: BulkState) => Promise<number>>> = {
  run: (backend, queue, state) => backend.runAll(queue, state),
  archive: (backend, queue, state) => backend.archiveAll(queue, state),
  delete: (backend, queue, state) => backend.deleteAll(queue, state),
};

/** The queue and state a scope names when it names nothing else, and the action has a store call for all of them; else null. */
export function wholeSegment(scope: TaskFilter, action: OperatorAction): { queue: string; state: BulkState } | null {
  const [state] = scope.states ?? [];
  if (ACTS_ALL[action] === undefined || scope.queue === null || scope.states?.length !== 1 || state === 'running') return null;
  if (filterKey(scope) !== filterKey({ ...emptyFilter(), queue: scope.queue, states: [state] })) return null;
  return { queue: scope.queue, state };
}

/** The filter narrowed to the states the action takes. */
export function actionScope(filter: TaskFilter, action: OperatorAction): TaskFilter {
  return { ...filter, states: (filter.states ?? TASK_STATES).filter((state) => accepts(action, state)) };
}

interface Entry {
  job: BulkJob;
  cancelled: boolean;
  finished: Promise<void>;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export class BulkJobs {
  private readonly entries = new Map<string, Entry>();
  private readonly batchSize: number;
  private readonly parallel: number;
  private readonly keepFinished: number;
  private readonly clock: Clock;

  constructor(private readonly backend: Backend, options: BulkJobsOptions = {}) {
    this.batchSize = options.batchSize ?? 500;
    this.parallel = options.parallel ?? 16;
    this.keepFinished = options.keepFinished ?? 100;
    this.clock = options.clock ?? systemClock;
  }

  /** A dry run: how many tasks the filter matches in a state the action takes. */
  async count(action: OperatorAction, filter: TaskFilter): Promise<number> {
    const scope = actionScope(filter, action);
    let page = await this.backend.searchTasks(scope, { limit: COUNT_PAGE });
    let count = page.tasks.length;
    while (page.nextCursor !== null) {
      page = await this.backend.searchTasks(scope, { limit: COUNT_PAGE, cursor: page.nextCursor });
      count += page.tasks.length;
    }
    return count;
  }

  /**
   * Starts a job. Its first search page is read before this returns, so a store that cannot be
   * reached fails the request rather than the job.
   */
  async start(action: OperatorAction, q: string, filter: TaskFilter): Promise<BulkJob> {
    const scope = actionScope(filter, action);
    const first = await this.backend.searchTasks(scope, { limit: COUNT_PAGE });
    const job: BulkJob = { id: uuidv7(), action, q, state: 'running', matched: first.tasks.length, done: 0, failed: 0, startedAt: this.clock.now(), finishedAt: null, error: null };
    const entry: Entry = { job, cancelled: false, finished: Promise.resolve() };
    entry.finished = this.run(entry, scope, first);
    this.entries.set(job.id, entry);
    return { ...job };
  }

  get(id: string): BulkJob | null {
    const entry = this.entries.get(id);
    return entry ? { ...entry.job } : null;
  }

  /** The jobs, newest first. */
  list(): BulkJob[] {
    return [...this.entries.values()].reverse().map((entry) => ({ ...entry.job }));
  }

  /** Stops a running job before its next batch (or store call group); a finished job stays as it is. Null: no such job. */
  cancel(id: string): BulkJob | null {
    const entry = this.entries.get(id);
    if (!entry) return null;
    if (entry.job.state === 'running') {
      entry.cancelled = true;
      entry.job.state = 'cancelled';
    }
    return { ...entry.job };
  }

  /** Cancels every running job and waits for each to stop (before the store is closed). */
  async stop(): Promise<void> {
    for (const entry of this.entries.values()) if (entry.job.state === 'running') entry.cancelled = true;
    await Promise.all([...this.entries.values()].map((entry) => entry.finished));
  }

  private async run(entry: Entry, scope: TaskFilter, first: TaskSearchPage): Promise<void> {
    const { job } = entry;
    try {
      let cursor = first.nextCursor;
      while (cursor !== null && !entry.cancelled) {
        await nextTurn();
        const page = await this.backend.searchTasks(scope, { limit: COUNT_PAGE, cursor });
        job.matched += page.tasks.length;
        cursor = page.nextCursor;
      }
      const whole = wholeSegment(scope, job.action);
      if (whole !== null && !entry.cancelled) {
        await nextTurn();
        // Tasks that left since they were counted are not taken, as a search would not find them.
        if (!entry.cancelled) job.done += await ACTS_ALL[job.action]!(this.backend, whole.queue, whole.state);
      }
      // A new search from the start: acting moves each task out of the scope, and the stores'
      // cursors keep their place when tasks before it move (search-scope.ts).
      let page: TaskSearchPage | null = null;
      while (whole === null && !entry.cancelled && (page === null || page.nextCursor !== null)) {
        await nextTurn();
        if (entry.cancelled) break;
        page = await this.backend.searchTasks(scope, { limit: this.batchSize, cursor: page?.nextCursor ?? undefined });
        await this.act(entry, page.tasks.map((task) => task.id));
      }
      job.state = entry.cancelled ? 'cancelled' : 'done';
    } catch (error) {
      job.state = 'failed';
      job.error = error instanceof Error ? error.message : String(error);
    }
    job.matched = Math.max(job.matched, job.done + job.failed);
    job.finishedAt = this.clock.now();
    this.forgetOldest();
  }

  /** Acts on one batch, `parallel` store calls at a time; a task the action can no longer take counts as failed. */
  private async act(entry: Entry, ids: string[]): Promise<void> {
    const act = ACTS[entry.job.action];
    for (let i = 0; i < ids.length && !entry.cancelled; i += this.parallel) {
      const outcomes = await Promise.allSettled(ids.slice(i, i + this.parallel).map((id) => act(this.backend, id)));
      for (const outcome of outcomes) {
        if (outcome.status === 'fulfilled') entry.job.done += 1;
        else if (isTasklineError(outcome.reason, 'TL_INVALID_STATE') || isTasklineError(outcome.reason, 'TL_TASK_NOT_FOUND')) entry.job.failed += 1;
        else throw outcome.reason;
      }
    }
  }

  private forgetOldest(): void {
    const finished = [...this.entries.values()].filter((entry) => entry.job.state !== 'running');
    for (const entry of finished.slice(0, Math.max(0, finished.length - this.keepFinished))) this.entries.delete(entry.job.id);
  }
}
