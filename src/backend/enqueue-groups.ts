import type { NewTask } from '../core/task.js';
import type { EnqueueOutcome } from './contract.js';

interface Pending<T, R> {
  tasks: T[];
  resolve: (outcomes: R[]) => void;
  reject: (error: unknown) => void;
}

/**
 * Enqueues made in the same tick (say, 100 producers each awaiting `client.enqueue`) are stored
 * together: one store call for all of them instead of one each — a script call per queue on
 * Redis, one transaction on SQLite (a group commit, as for acks). Each call still gets its own
 * outcomes, exactly as if the calls had run one after another in arrival order (the store handles
 * a batch in order: an id taken by an earlier task of the batch is a conflict); a group never
 * exceeds `maxGroup` tasks unless one call alone does. A failed store call fails every call of
 * its group. Workflows are created the same way (T a workflow, its weight its node count).
 */
export class EnqueueGroups<T = NewTask, R = EnqueueOutcome> {
  private pending: Pending<T, R>[] = [];

  constructor(
    /** Stores the items of several calls at once; `sizes`: how many items each call brought, in order (a batch is one call's). */
    private readonly store: (tasks: T[], sizes: number[]) => Promise<R[]>,
    /** Most tasks of one group: a store call's batch stays bounded under many producers. */
    private readonly maxGroup = 1000,
    /** What one item counts towards maxGroup. */
    private readonly weight: (item: T) => number = () => 1,
  ) {}

  enqueue(tasks: T[]): Promise<R[]> {
    if (tasks.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      this.pending.push({ tasks, resolve, reject });
      if (this.pending.length === 1) process.nextTick(() => this.flush());
    });
  }

  private flush(): void {
    const pending = this.pending;
    this.pending = [];
    let group: Pending<T, R>[] = [];
    let size = 0;
    for (const call of pending) {
      let weight = 0;
      for (const item of call.tasks) weight += this.weight(item);
      if (group.length > 0 && size + weight > this.maxGroup) {
        this.send(group);
        group = [];
        size = 0;
      }
      group.push(call);
      size += weight;
    }
    if (group.length > 0) this.send(group);
  }

  private send(calls: Pending<T, R>[]): void {
    const all = calls.length === 1 ? calls[0].tasks : calls.flatMap((c) => c.tasks);
    let stored: Promise<R[]>;
    try {
      stored = this.store(all, calls.map((c) => c.tasks.length));
    } catch (error) {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passed on as thrown
      stored = Promise.reject(error);
    }
    stored.then(
      (outcomes) => {
        let offset = 0;
        for (const call of calls) {
          call.resolve(calls.length === 1 ? outcomes : outcomes.slice(offset, offset + call.tasks.length));
          offset += call.tasks.length;
        }
      },
      (error: unknown) => calls.forEach((call) => call.reject(error)),
    );
  }
}
