/**
 * Loads the module given to `taskline worker --handlers`: its default export is either a map
 * `{ [type]: handler }` or a function that receives the worker and registers handlers.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { importUserModule } from '../config/user-module.js';
import type { Worker } from '../worker/worker.js';
import type { Handler } from '../worker/handlers.js';
import { CommandFailed, UsageError } from './errors.js';

const ACCEPTED = 'a JavaScript module whose default export is { [type]: handler } or (worker) => { worker.handle(…) }';

export type RegisterHandlers = (worker: Worker) => Promise<void>;

export async function loadHandlersModule(spec: string, cwd = process.cwd()): Promise<RegisterHandlers> {
  const path = resolve(cwd, spec);
  if (!existsSync(path)) throw new UsageError(`--handlers ${spec}: no such file (${path}); give ${ACCEPTED}`);
  let module: { default?: unknown };
  try {
    module = await importUserModule(path);
  } catch (error) {
    throw new CommandFailed(`--handlers ${spec} failed to load: ${(error as Error).message}`, { cause: error });
  }
  const exported = module.default;
  if (typeof exported === 'function') {
    return async (worker) => {
      await (exported as (worker: Worker) => unknown)(worker);
    };
  }
  if (typeof exported === 'object' && exported !== null && !Array.isArray(exported)) {
    const entries = Object.entries(exported);
    if (entries.length === 0) throw new UsageError(`--handlers ${spec}: the default export registers no handlers; give ${ACCEPTED}`);
    for (const [type, handler] of entries) {
      if (typeof handler !== 'function') throw new UsageError(`--handlers ${spec}: the handler of ${JSON.stringify(type)} is not a function; give ${ACCEPTED}`);
    }
    return async (worker) => {
      for (const [type, handler] of entries) worker.handle(type, handler as Handler);
    };
  }
  throw new UsageError(`--handlers ${spec}: ${exported === undefined ? 'no default export' : `the default export is a ${typeof exported}`}; give ${ACCEPTED}`);
}
