import type { ClaimRequest } from '../backend/contract.js';
import { TasklineError } from '../core/errors.js';
import { validateQueueName } from '../core/options.js';

export interface WeightedQueue {
  name: string;
  weight: number;
}

/**
 * Parses the queues a worker serves: `['a', 'b']` (equal weights), `{ critical: 6, low: 1 }`
 * or `'critical=6,default=3,low=1'`.
 */
export function parseQueues(value: string[] | Record<string, number> | string | undefined): WeightedQueue[] {
  if (value === undefined) return [{ name: 'default', weight: 1 }];
  let entries: [string, number][];
  if (typeof value === 'string') {
    entries = value.split(',').filter((part) => part.trim() !== '').map((part) => {
      const [name, weight] = part.split('=').map((s) => s.trim());
      return [name, weight === undefined ? 1 : Number(weight)];
    });
  } else if (Array.isArray(value)) {
    entries = value.map((name) => [name, 1]);
  } else if (typeof value === 'object' && value !== null) {
    entries = Object.entries(value);
  } else {
    throw new TasklineError('TL_INVALID_OPTION', 'queues must be a list of names, an object { name: weight } or "name=weight,…"');
  }
  if (entries.length === 0) throw new TasklineError('TL_INVALID_OPTION', 'queues: at least one queue is needed');
  const seen = new Set<string>();
  return entries.map(([name, weight]) => {
    validateQueueName(name, 'queue in the queues option');
    if (seen.has(name)) throw new TasklineError('TL_INVALID_OPTION', `queues: ${name} is listed twice`);
    seen.add(name);
    if (typeof weight !== 'number' || !Number.isInteger(weight) || weight < 1 || weight > 1000) {
      throw new TasklineError('TL_INVALID_OPTION', `queues: the weight of ${name} must be a whole number from 1 to 1000, got ${String(weight)}`);
    }
    return { name, weight };
  });
}

/**
 * Decides which queues a claim asks, and for how many tasks.
 * - weighted: each free slot goes to a queue picked at random in proportion to its weight,
 *   among the queues not known to be empty;
 * - strict: every slot goes to the first queue (in the given order, highest weight first) not
 *   known to be empty.
 */
export class QueuePicker {
  readonly queues: WeightedQueue[];

  constructor(queues: WeightedQueue[], private readonly strict: boolean, private readonly random: () => number = Math.random) {
    this.queues = strict ? [...queues].sort((a, b) => b.weight - a.weight) : queues;
  }

  get names(): string[] {
    return this.queues.map((q) => q.name);
  }

  plan(slots: number, exhausted: ReadonlySet<string>): ClaimRequest[] {
    const candidates = this.queues.filter((q) => !exhausted.has(q.name));
    if (candidates.length === 0 || slots <= 0) return [];
    if (this.strict || candidates.length === 1) return [{ queue: candidates[0].name, count: slots }];
    const total = candidates.reduce((sum, q) => sum + q.weight, 0);
    const counts = new Map<string, number>();
    for (let i = 0; i < slots; i++) {
      let pick = this.random() * total;
      let chosen = candidates[candidates.length - 1];
      for (const q of candidates) {
        pick -= q.weight;
        if (pick < 0) {
          chosen = q;
          break;
        }
      }
      counts.set(chosen.name, (counts.get(chosen.name) ?? 0) + 1);
    }
    return [...counts].map(([queue, count]) => ({ queue, count }));
  }
}
