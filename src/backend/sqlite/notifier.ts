/**
 * Notifications across processes sharing one database file, without polling the tables.
 *
 * `PRAGMA data_version` changes when another connection commits; reading it costs about a
 * microsecond and touches no table. One timer per backend reads it every `intervalMs`, and only
 * while someone waits for work or listens for events. When it moved:
 * - waiting workers compare their queues' `signal` (bumped by every commit that may have made
 *   work claimable) with the values they started from, and wake if one moved;
 * - subscribers read the `events` rows written since the last one they saw.
 * Commits of this backend's own connection do not move its data_version, so the backend reports
 * them (`committed`) and they wake waiters and subscribers at once.
 */
import type { Statement } from 'better-sqlite3';
import type { BackendEvent } from '../contract.js';
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
}

export class Notifier {
  private readonly waiters = new Set<Waiter>();
  private readonly listeners = new Set<(event: BackendEvent) => void>();
  private readonly dataVersion: Statement;
  private timer: NodeJS.Timeout | null = null;
  private pendingRead: NodeJS.Immediate | null = null;
  private lastVersion = 0;
  private lastEventId = 0;
  private closed = false;

  constructor(private readonly sql: StatementCache, private readonly intervalMs: number) {
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

  subscribe(listener: (event: BackendEvent) => void): () => void {
    if (this.listeners.size === 0) {
      this.watch();
      this.lastEventId = (this.sql.get('SELECT COALESCE(MAX(id), 0) FROM events').pluck().get() as number) ?? 0;
    }
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
      this.unwatchIfIdle();
    };
  }

  /** After a commit of this backend's own connection. */
  committed(woken: ReadonlySet<string>, events: number): void {
    if (this.closed) return;
    if (woken.size > 0) {
      for (const waiter of this.waiters) {
        if (waiter.queues.some((q) => woken.has(q))) this.release(waiter);
      }
    }
    if (events > 0 && this.listeners.size > 0) {
      // Deliver after the caller's operation returns, in commit order, as other processes see them.
      this.pendingRead ??= setImmediate(() => {
        this.pendingRead = null;
        this.readEvents();
      });
    }
  }

  close(): void {
    this.closed = true;
    for (const waiter of this.waiters) this.release(waiter);
    this.listeners.clear();
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
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
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
  }

  private unwatchIfIdle(): void {
    if (this.timer && this.waiters.size === 0 && this.listeners.size === 0) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  private tick(): void {
    let version: number;
    try {
      version = this.dataVersion.get() as number;
    } catch {
      return; // closing
    }
    if (version === this.lastVersion) return;
    this.lastVersion = version;
    if (this.waiters.size > 0) this.checkWaiters();
    if (this.listeners.size > 0) this.readEvents();
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
    if (this.closed || this.listeners.size === 0) return;
    const rows = this.sql.get('SELECT id, kind, queue, task_id, state FROM events WHERE id > ? ORDER BY id').all(this.lastEventId) as EventRow[];
    for (const row of rows) {
      this.lastEventId = row.id;
      const event = toEvent(row);
      if (!event) continue;
      for (const listener of this.listeners) {
        try {
          listener(event);
        } catch {
          // A listener's failure is its own; the others still hear the event.
        }
      }
    }
  }
}

function toEvent(row: EventRow): BackendEvent | null {
  if (row.kind === 'finished') return { kind: 'finished', id: row.task_id, queue: row.queue, state: row.state as 'completed' | 'dead' | 'cancelled' };
  if (row.kind === 'cancel-requested') return { kind: 'cancel-requested', id: row.task_id, queue: row.queue };
  return null;
}
