/** A store that child processes can open too: its URL (and key prefix) plus an in-test backend. */
import { join } from 'node:path';
import { connect, type Backend } from '../../src/index.js';
import { REDIS_URL, deletePrefix, tempDir, uniquePrefix } from './stores.js';

export interface SharedStore {
  url: string;
  prefix: string;
  /** Env for a child process's connect(BACKEND_URL, { prefix: PREFIX }). */
  env: Record<string, string>;
  backend: Backend;
  cleanup(): Promise<void>;
}

export type SharedStoreKind = 'redis' | 'sqlite';

export const SHARED_STORE_KINDS: SharedStoreKind[] = ['redis', 'sqlite'];

export async function sharedStore(kind: SharedStoreKind): Promise<SharedStore> {
  const prefix = uniquePrefix(kind);
  const dir = kind === 'sqlite' ? tempDir('taskline-shared') : null;
  const url = dir ? `sqlite:${join(dir.path, 'taskline.db')}` : REDIS_URL;
  const backend = await connect(url, { prefix });
  return {
    url,
    prefix,
    env: { BACKEND_URL: url, PREFIX: prefix },
    backend,
    cleanup: async () => {
      await backend.close();
      if (dir) dir.remove();
      else await deletePrefix(REDIS_URL, prefix);
    },
  };
}
