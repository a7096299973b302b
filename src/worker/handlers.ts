import { TasklineError } from '../core/errors.js';
import type { TaskDefinition } from '../core/define-task.js';
import type { TaskContext } from './context.js';
import { quote } from '../core/validate.js';
import { validateTaskType } from '../core/options.js';

export type Handler<P = any, R = unknown> = (payload: P, ctx: TaskContext) => Promise<R> | R;

export interface Registration {
  pattern: string;
  handler: Handler;
  definition: TaskDefinition<any, any> | null;
}

/**
 * Handlers by task type. A pattern ending in `*` matches a prefix (`email:*`); an exact type
 * beats any pattern, and a longer prefix beats a shorter one.
 */
export class HandlerRegistry {
  private readonly exact = new Map<string, Registration>();
  private prefixes: { prefix: string; registration: Registration }[] = [];

  register(pattern: string, handler: Handler, definition: TaskDefinition<any, any> | null): void {
    if (typeof pattern !== 'string' || pattern.length === 0) {
      throw new TasklineError('TL_INVALID_ARGUMENT', `handle: the type must be a non-empty string or a defined task, got ${quote(pattern)}`);
    }
    // Recorded in the store as the types this worker handles: the rules of a task type.
    validateTaskType(pattern, 'handler type');
    if (typeof handler !== 'function') {
      throw new TasklineError('TL_INVALID_ARGUMENT', `handle(${quote(pattern)}): the handler must be a function`);
    }
    const registration = { pattern, handler, definition };
    if (pattern.endsWith('*')) {
      const prefix = pattern.slice(0, -1);
      this.prefixes = this.prefixes.filter((p) => p.prefix !== prefix);
      this.prefixes.push({ prefix, registration });
      this.prefixes.sort((a, b) => b.prefix.length - a.prefix.length);
    } else {
      this.exact.set(pattern, registration);
    }
  }

  find(type: string): Registration | null {
    const exact = this.exact.get(type);
    if (exact) return exact;
    for (const { prefix, registration } of this.prefixes) if (type.startsWith(prefix)) return registration;
    return null;
  }

  /** Every registration, exact types first, then patterns from the longest prefix. */
  registrations(): Registration[] {
    return [...this.exact.values(), ...this.prefixes.map((p) => p.registration)];
  }

  get size(): number {
    return this.exact.size + this.prefixes.length;
  }
}
