/**
 * What the fuzzer has learned from the server's answers: task ids, schedule ids, queues, types
 * and cursors that later requests reuse, so that requests reach past "not found".
 */
import type { Rng } from './rng.js';

const CAP = 400;

export interface Cursor {
  queue: string;
  state: string;
  cursor: string;
}

export class World {
  readonly taskIds: string[] = [];
  readonly scheduleIds: string[] = [];
  readonly queues: string[] = ['default', 'fz-a', 'fz-b', 'fz.c:1'];
  readonly types: string[] = ['email.send', 'report', 'fz:t', 'resize image'];
  readonly cursors: Cursor[] = [];
  /** Bulk job ids (POST /api/v1/bulk answers), for the job routes. */
  readonly jobIds: string[] = [];
  /** Every task id a 2xx answer named, for the sweep (unbounded, deduplicated). */
  readonly everyTaskId = new Set<string>();
  /** Every schedule id a 2xx answer named, for the sweep. */
  readonly everyScheduleId = new Set<string>();
  /** The last few successful requests that named an id: what to look at when it reads badly. */
  readonly touchedBy = new Map<string, string[]>();
  private counter = 0;

  constructor(
    private readonly rng: Rng,
    /** Base time of the run: times are drawn around it. */
    readonly now: number,
  ) {}

  /** A new valid id, deterministic for a seed. */
  freshId(prefix: string): string {
    this.counter += 1;
    return `${prefix}-${this.counter.toString(36)}`;
  }

  private remember<T>(list: T[], value: T, same: (a: T) => boolean): void {
    if (list.some(same)) return;
    if (list.length >= CAP) list.splice(this.rng.int(0, list.length - 1), 1);
    list.push(value);
  }

  private touch(kind: 'task' | 'schedule', id: string, by: string): void {
    const key = `${kind}:${id}`;
    const list = this.touchedBy.get(key) ?? [];
    if (list[list.length - 1] !== by) list.push(by);
    this.touchedBy.set(key, list.slice(-3));
  }

  addTask(id: unknown, by = ''): void {
    if (typeof id !== 'string' || id === '') return;
    this.everyTaskId.add(id);
    if (by) this.touch('task', id, by);
    this.remember(this.taskIds, id, (x) => x === id);
  }

  addSchedule(id: unknown, by = ''): void {
    if (typeof id !== 'string' || id === '') return;
    this.everyScheduleId.add(id);
    if (by) this.touch('schedule', id, by);
    this.remember(this.scheduleIds, id, (x) => x === id);
  }

  addQueue(name: unknown): void {
    if (typeof name === 'string' && name !== '') this.remember(this.queues, name, (x) => x === name);
  }

  addType(type: unknown): void {
    if (typeof type === 'string' && type !== '' && type.length <= 200) this.remember(this.types, type, (x) => x === type);
  }

  addJob(job: unknown): void {
    const id = (job as { id?: unknown } | null)?.id;
    if (typeof id === 'string' && id !== '') this.remember(this.jobIds, id, (x) => x === id);
  }

  addCursor(cursor: Cursor): void {
    this.remember(this.cursors, cursor, (x) => x.cursor === cursor.cursor && x.queue === cursor.queue && x.state === cursor.state);
  }

  /**
   * Learns from a 2xx JSON answer to a request of `route`; `queue` is the path's queue segment,
   * decoded; `by` describes the request (kept for ids it created or changed).
   */
  learn(route: string, query: URLSearchParams, queue: string, body: unknown, by: string): void {
    if (typeof body !== 'object' || body === null) return;
    const record = body as Record<string, unknown>;
    const writes = !route.startsWith('GET ');
    const mark = writes ? by : '';
    this.addTask(record.task_id, mark);
    if (Array.isArray(record.tasks)) {
      for (const t of record.tasks as Record<string, unknown>[]) {
        this.addTask(t?.task_id ?? t?.id, mark);
        this.addType(t?.type);
      }
    }
    if (Array.isArray(record.fires)) for (const f of record.fires as Record<string, unknown>[]) this.addTask(f?.task_id, mark);
    if (Array.isArray(record.schedules)) for (const s of record.schedules as Record<string, unknown>[]) this.addSchedule(s?.id);
    if (Array.isArray(record.queues)) for (const q of record.queues as Record<string, unknown>[]) this.addQueue(q?.name);
    if (route.includes('/api/v1/bulk')) {
      this.addJob(record.job);
      if (Array.isArray(record.jobs)) for (const job of record.jobs as unknown[]) this.addJob(job);
    }
    if (route.includes('/schedules') && typeof record.cron === 'string') this.addSchedule(record.id, mark);
    if (route.startsWith('POST /api/v1/tasks/{id}/') || route === 'DELETE /api/v1/tasks/{id}') this.addTask(record.id, mark);
    if (route === 'GET /api/v1/tasks/{id}') {
      this.addTask(record.id);
      this.addType(record.type);
    }
    if (typeof record.next_cursor === 'string') {
      this.addCursor({ queue, state: query.get('state') ?? '', cursor: record.next_cursor });
    }
  }
}
