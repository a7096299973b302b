import { afterEach, beforeEach } from 'vitest';
import { Client, type Worker } from '../../src/index.js';
import type { TestStore } from './stores.js';

export interface ClientStore {
  readonly store: TestStore;
  readonly client: Client;
  /** A worker the test starts; stopped after it. */
  worker: Worker | null;
}

/**
 * A fresh store and a client on it before each test of the enclosing block; after it, the test's
 * worker stopped, the client closed and the store removed.
 */
export function useClientStore(openStore: () => Promise<TestStore>): ClientStore {
  let current: { store: TestStore; client: Client } | null = null;
  const state = {
    worker: null as Worker | null,
    get store(): TestStore {
      if (!current) throw new Error('the store is only there inside a test');
      return current.store;
    },
    get client(): Client {
      if (!current) throw new Error('the client is only there inside a test');
      return current.client;
    },
  };
  beforeEach(async () => {
    const store = await openStore();
    current = { store, client: new Client(store.backend) };
  });
  afterEach(async () => {
    await state.worker?.stop({ timeout: 1000 });
    state.worker = null;
    const done = current;
    current = null;
    await done?.client.close();
    await done?.store.cleanup();
  });
  return state;
}
