import { TasklineError } from '../../core/errors.js';
import type { Backend } from '../contract.js';

/** Placeholder until the SQLite backend lands. */
export class SqliteBackend {
  static async open(_path: string, _options: { clockOffsetMs?: number } = {}): Promise<Backend> {
    throw new TasklineError('TL_INVALID_CONFIG', 'the SQLite backend is not available yet');
  }
}
