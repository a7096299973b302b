/**
 * Notifications across processes sharing one database file, without polling the tables.
 *
 * `PRAGMA data_version` changes when another connection commits; reading it costs a few
 * microseconds and touches no table. It is read only while someone waits for work or listens for
 * events, when one of these says another process may have committed:
 * - a file watch (inotify, kqueue, …) on the WAL file, which every commit writes to: when it
 *   fires, data_version is read at once and then every BURST_INTERVAL_MS for BURST_MS (the commit
 *   becomes visible just after its last write), so a wake-up takes a millisecond or two;
 * - a timer every `intervalMs` as the safety net (the only source when the file cannot be
 *   watched: then give it a short interval, e.g. 5 ms).
 * Idle, that costs one timer tick per `intervalMs` — the timer wake-up, not the query, is what
 * costs (≈0.1 ms of CPU each on a small VM). When data_version moved:
 * - waiting workers compare their queues' `signal` (bumped by every commit that may have made
 *   work claimable) with the values they started from, and wake if one moved;
 * - subscribers read the `events` rows written since the last one they saw.
 * Commits of this backend's own connection do not move its data_version, so the backend reports
 * them (`committed`) and they wake waiters and subscribers at once.
 */
import { watch, type FSWatcher } from 'node:fs';
import type { Statement } from 'better-sqlite3';
import type { BackendEvent, WorkflowState } from '../contract.js';
import type { StatementCache } from './database.js';

interface Waiter {
  queues: string[];
  baseline: Map<string, number>;
  wake: () => void;
}

interface EventRow {
  id: number;
  kind: string;
  queue: string;
  task_id: string;
  state: string | null;
  /** Written with the event (joined from tasks for events older than migration 0003); lifecycle subscribers only. */
  type?: string | null;
}

/** Without a lifecycle subscriber only these rows are read (workers never see lifecycle rows). */
const READ_PLAIN = "SELECT id, kind, queue, task_id, state FROM events WHERE id > ? AND kind IN ('finished', 'cancel-requested', 'workflow') ORDER BY id";
const READ_ALL = 'SELECT e.id, e.kind, e.queue, e.task_id, e.state, COALESCE(e.type, t.type) AS type FROM events e LEFT JOIN tasks t ON t.id = e.task_id WHERE e.id > ? ORDER BY e.id';

export interface NotifierOptions {
  /** The WAL file to watch for commits of other processes; null: poll only. */
  walFile: string | null;
  /** ms between data_version checks without a file event. */
  intervalMs: number;
}

/** After a file event, data_version is checked this often, for this long. */
const BURST_INTERVAL_MS = 2;
const BURST_MS = 20;

export class Notifier {
  private readonly waiters = new Set<Waiter>();
  private readonly listeners = new Set<(event: BackendEvent) => void>();
  private readonly lifecycleListeners = new Set<(event: BackendEvent) => void>();
  private readonly dataVersion: Statement;
  private timer: NodeJS.Timeout | null = null;
  private watcher: FSWatcher | null = null;
  private burst: NodeJS.Timeout | null = null;
  private burstUntil = 0;
  private pendingRead: NodeJS.Immediate | null = null;
  private lastVersion = 0;
  private lastEventId = 0;
  private closed = false;

  constructor(private readonly sql: StatementCache, private readonly options: NotifierOptions) {
    this.dataVersion = sql.db.prepare('PRAGMA data_version').pluck();
  }

  /** The current signal of each queue (0 for a queue never used). */
  signals(queues: string[]): Map<string, number> {
    const read = this.sql.get('SELECT signal FROM queues WHERE name = ?').pluck();
    return new Map(queues.map((q) => [q, (read.get(q) as number | undefined) ?? 0]));
  }

  /**
   * Waits until one of the queues' signal moves past what this backend has seen (`seen`: from
   * its last claim or wait), the timeout passes, the abort signal fires or the notifier closes.
   * A signal already past `seen` ends the wait at once, like a marker left for the next waiter;
   * every wait marks the signals it read as seen.
   */
  async waitForSignal(queues: string[], seen: Map<string, number>, timeoutMs: number, abort: AbortSignal): Promise<void> {
    if (this.closed || abort.aborted) return;
    // Start watching before reading the baseline, so that no commit falls between the two.
    this.watch();
    const baseline = this.signals(queues);
    const unseen = queues.some((q) => baseline.get(q)! > (seen.get(q) ?? 0));
    for (const [q, signal] of baseline) seen.set(q, Math.max(signal, seen.get(q) ?? 0));
    if (unseen) {
      this.unwatchIfIdle();
      return;
    }
    const woken = await new Promise<boolean>((resolve) => {
      const waiter: Waiter = { queues, baseline, wake: () => done(true) };
      const timer = setTimeout(() => done(false), Math.max(0, timeoutMs));
      const onAbort = () => done(false);
      abort.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(waiter);
      const waiters = this.waiters;
      function done(byWake: boolean): void {
        clearTimeout(timer);
        abort.removeEventListener('abort', onAbort);
        waiters.delete(waiter);
        resolve(byWake);
      }
    });
    this.unwatchIfIdle();
    if (woken && !this.closed) {
      for (const [q, signal] of this.signals(queues)) seen.set(q, Math.max(signal, seen.get(q) ?? 0));
    }
  }

  /** `lifecycle`: also enqueued/started/retrying events, and task types on every task event. */
  subscribe(listener: (event: BackendEvent) => void, lifecycle = false): () => void {
    if (this.listenerCount() === 0) {
      this.watch();
      this.lastEventId = (this.sql.get('SELECT COALESCE(MAX(id), 0) FROM events').pluck().get() as number) ?? 0;
    }
    const set = lifecycle ? this.lifecycleListeners : this.listeners;
    set.add(listener);
    return () => {
      set.delete(listener);
      this.unwatchIfIdle();
    };
  }

  private listenerCount(): number {
    return this.listeners.size + this.lifecycleListeners.size;
  }

  /** After a commit of this backend's own connection. */
  committed(woken: ReadonlySet<string>, events: number): void {
    if (this.closed) return;
    if (woken.size > 0) {
      for (const waiter of this.waiters) {
        if (waiter.queues.some((q) => woken.has(q))) this.release(waiter);
      }
    }
    if (events > 0 && this.listenerCount() > 0) {
      // Deliver after the caller's operation returns, in commit order, as other processes see them.
      this.pendingRead ??= setImmediate(() => {
        this.pendingRead = null;
        try {
          this.readEvents();
        } catch {
          // the next tick reads them
        }
      });
    }
  }

  close(): void {
    this.closed = true;
    for (const waiter of this.waiters) this.release(waiter);
    this.listeners.clear();
    this.lifecycleListeners.clear();
    this.unwatch();
    if (this.pendingRead) clearImmediate(this.pendingRead);
    this.pendingRead = null;
  }

  private release(waiter: Waiter): void {
    this.waiters.delete(waiter);
    waiter.wake();
  }

  private watch(): void {
    if (this.timer || this.closed) return;
    this.lastVersion = this.dataVersion.get() as number;
    this.timer = setInterval(() => this.tick(), this.options.intervalMs);
    this.timer.unref();
    if (this.options.walFile !== null) {
      try {
        this.watcher = watch(this.options.walFile, { persistent: false }, () => this.onFileEvent());
        this.watcher.on('error', () => this.stopFileWatch());
      } catch {
        this.watcher = null; // not watchable here: the timer alone
      }
    }
  }

  private unwatchIfIdle(): void {
    if (this.waiters.size === 0 && this.listenerCount() === 0) this.unwatch();
  }

  private unwatch(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.stopFileWatch();
  }

  private stopFileWatch(): void {
    this.watcher?.close();
    this.watcher = null;
    if (this.burst) clearInterval(this.burst);
    this.burst = null;
  }

  private onFileEvent(): void {
    if (this.closed || !this.timer) return;
    this.tick();
    this.burstUntil = Date.now() + BURST_MS;
    if (this.burst) return;
    this.burst = setInterval(() => {
      this.tick();
      if (Date.now() > this.burstUntil && this.burst) {
        clearInterval(this.burst);
        this.burst = null;
      }
    }, BURST_INTERVAL_MS);
    this.burst.unref();
  }

  /**
   * Runs from timers and file events: a failure (the database closing, an I/O error) must not
   * escape as an uncaught exception. Waiters then wake at their timeout; the next tick retries.
   */
  private tick(): void {
    try {
      const version = this.dataVersion.get() as number;
      if (version === this.lastVersion) return;
      this.lastVersion = version;
      if (this.waiters.size > 0) this.checkWaiters();
      if (this.listenerCount() > 0) this.readEvents();
    } catch {
      // see above
    }
  }

  private checkWaiters(): void {
    const queues = new Set<string>();
    for (const waiter of this.waiters) for (const q of waiter.queues) queues.add(q);
    const current = this.signals([...queues]);
    for (const waiter of this.waiters) {
      if (waiter.queues.some((q) => current.get(q)! > (waiter.baseline.get(q) ?? 0))) this.release(waiter);
    }
  }

  private readEvents(): void {
    if (this.closed || this.listenerCount() === 0) return;
    const lifecycle = this.lifecycleListeners.size > 0;
    const rows = this.sql.get(lifecycle ? READ_ALL : READ_PLAIN).all(this.lastEventId) as EventRow[];
    for (const row of rows) {
      this.lastEventId = row.id;
      const event = toEvent(row);
      if (!event) continue;
      if (event.kind === 'finished' || event.kind === 'cancel-requested' || event.kind === 'workflow') deliver(this.listeners, event);
      if (lifecycle) deliver(this.lifecycleListeners, withType(event, row.type));
    }
  }
}

function deliver(listeners: Set<(event: BackendEvent) => void>, event: BackendEvent): void {
  for (const listener of listeners) {
    try {
      listener(event);
    } catch {
      // A listener's failure is its own; the others still hear the event.
    }
  }
}

function withType(event: BackendEvent, type: string | null | undefined): BackendEvent {
  if (event.kind === 'finished') return type ? { ...event, type } : event;
  if (event.kind === 'cancel-requested' || event.kind === 'workflow') return event;
  return { ...event, type: type ?? '' };
}

function toEvent(row: EventRow): BackendEvent | null {
  if (row.kind === 'finished') return { kind: 'finished', id: row.task_id, queue: row.queue, state: row.state as 'completed' | 'dead' | 'cancelled' };
  if (row.kind === 'cancel-requested') return { kind: 'cancel-requested', id: row.task_id, queue: row.queue };
  if (row.kind === 'workflow') return { kind: 'workflow', id: row.task_id, state: row.state as WorkflowState };
  const detail = row.state ?? '';
  if (row.kind === 'enqueued') return { kind: 'enqueued', id: row.task_id, queue: row.queue, type: '', state: detail === 'scheduled' ? 'scheduled' : 'queued' };
  if (row.kind === 'started') return { kind: 'started', id: row.task_id, queue: row.queue, type: '', attempt: Number(detail) };
  if (row.kind === 'retrying') {
    const [attempt, due] = detail.split(',');
    return { kind: 'retrying', id: row.task_id, queue: row.queue, type: '', attempt: Number(attempt), nextRunAt: Number(due) };
  }
  return null;
}
