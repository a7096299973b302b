/**
 * Loads `taskline enqueue --definitions <module>`: the task definitions (`defineTask`) a module
 * exports — as named exports, an array, or an object of them. A definition found for the type
 * validates the payload at enqueue and applies its default options (queue, timeout …).
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { isTaskDefinition, type TaskDefinition } from '../core/define-task.js';
import { importUserModule } from '../config/user-module.js';
import { CommandFailed, UsageError } from './errors.js';

export async function loadDefinitions(spec: string, cwd = process.cwd()): Promise<Map<string, TaskDefinition<any, any>>> {
  const path = resolve(cwd, spec);
  if (!existsSync(path)) throw new UsageError(`--definitions ${spec}: no such file (${path}); give a JavaScript module that exports defineTask(…) definitions`);
  let module: Record<string, unknown>;
  try {
    module = await importUserModule(path);
  } catch (error) {
    throw new CommandFailed(`--definitions ${spec} failed to load: ${(error as Error).message}`, { cause: error });
  }
  const found = new Map<string, TaskDefinition<any, any>>();
  const collect = (value: unknown, depth: number) => {
    if (isTaskDefinition(value)) found.set(value.type, value);
    else if (depth > 0 && Array.isArray(value)) value.forEach((item) => collect(item, depth - 1));
    else if (depth > 0 && typeof value === 'object' && value !== null) Object.values(value).forEach((item) => collect(item, depth - 1));
  };
  collect(module, 2);
  if (found.size === 0) throw new UsageError(`--definitions ${spec}: the module exports no task definitions; export the results of defineTask(…)`);
  return found;
}
