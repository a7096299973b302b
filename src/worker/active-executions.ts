import type { Execution } from './context.js';

/**
 * The executions a worker holds, in an array of slots instead of a Map or a Set.
 *
 * Entries come and go thousands of times a second, so a Map would be rebuilt over and over as
 * it grows and shrinks; V8 links each retired table to its successor (for live iterators), and a
 * retired table that reached the old generation keeps the young executions of the tables after
 * it alive, so they are promoted too and die only in a full GC. Measured on the 50k drain: ~1.4 MB
 * promoted per scavenge, ~20 MB of dead executions in the old generation at the peak
 * (docs/performance.md, "Memory"). Slots are reused; an execution knows its own slot.
 */
export class ActiveExecutions {
  private readonly slots: (Execution | undefined)[] = [];
  /** Free slot numbers (small integers: nothing for the GC to follow). */
  private readonly freeSlots: number[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(execution: Execution): void {
    if (execution.slot >= 0) return;
    const slot = this.freeSlots.pop() ?? this.slots.length;
    this.slots[slot] = execution;
    execution.slot = slot;
    this.count += 1;
  }

  delete(execution: Execution): void {
    const slot = execution.slot;
    if (slot < 0 || this.slots[slot] !== execution) return;
    this.slots[slot] = undefined;
    this.freeSlots.push(slot);
    execution.slot = -1;
    this.count -= 1;
  }

  /** The executions of a task id: one, or more when the task came back to this worker after its lease was lost. */
  withId(id: string): Execution[] {
    const found: Execution[] = [];
    for (const execution of this.slots) if (execution?.task.id === id) found.push(execution);
    return found;
  }

  /** The task ids of the executions (the worker's running tasks). */
  ids(): string[] {
    const ids: string[] = [];
    for (const execution of this.slots) if (execution) ids.push(execution.task.id);
    return ids;
  }

  values(): Execution[] {
    const all: Execution[] = [];
    for (const execution of this.slots) if (execution) all.push(execution);
    return all;
  }
}
