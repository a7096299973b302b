import type { NewTask } from '../core/task.js';
import type { EnqueueOutcome } from './contract.js';

interface Pending {
  tasks: NewTask[];
  resolve: (outcomes: EnqueueOutcome[]) => void;
  reject: (error: unknown) => void;
}

/**
 * Enqueues made in the same tick (say, 100 producers each awaiting `client.enqueue`) are stored
 * together: one store call for all of them instead of one each — a script call per queue on
 * Redis, one transaction on SQLite (a group commit, as for acks). Each call still gets its own
 * outcomes, exactly as if the calls had run one after another in arrival order (the store handles
 * a batch in order: an id taken by an earlier task of the batch is a conflict); a group never
 * exceeds `maxGroup` tasks unless one call alone does. A failed store call fails every call of
 * its group.
 */
export class EnqueueGroups {
  private pending: Pending[] = [];

  constructor(
    private readonly store: (tasks: NewTask[]) => Promise<EnqueueOutcome[]>,
    /** Most tasks of one group: a store call's batch stays bounded under many producers. */
    private readonly maxGroup = 1000,
  ) {}

  enqueue(tasks: NewTask[]): Promise<EnqueueOutcome[]> {
    if (tasks.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      this.pending.push({ tasks, resolve, reject });
      if (this.pending.length === 1) process.nextTick(() => this.flush());
    });
  }

  private flush(): void {
    const pending = this.pending;
    this.pending = [];
    let group: Pending[] = [];
    let size = 0;
    for (const call of pending) {
      if (group.length > 0 && size + call.tasks.length > this.maxGroup) {
        this.send(group);
        group = [];
        size = 0;
      }
      group.push(call);
      size += call.tasks.length;
    }
    if (group.length > 0) this.send(group);
  }

  private send(calls: Pending[]): void {
    const all = calls.length === 1 ? calls[0].tasks : calls.flatMap((c) => c.tasks);
    let stored: Promise<EnqueueOutcome[]>;
    try {
      stored = this.store(all);
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
