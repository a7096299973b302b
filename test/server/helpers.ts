/** An in-process task center on a real store, for inject() tests. */
import { buildServer, type ServerOptions, type TaskCenterServer } from '../../src/server/app.js';
import type { TestStore } from '../helpers/stores.js';

export interface TestApi extends TaskCenterServer {
  store: TestStore;
  close(): Promise<void>;
}

export async function startApi(open: () => Promise<TestStore>, options: Omit<ServerOptions, 'backend'> = {}): Promise<TestApi> {
  const store = await open();
  const server = await buildServer({ backend: store.backend, ...options });
  await server.app.ready();
  return {
    ...server,
    store,
    close: async () => {
      await server.app.close();
      await store.cleanup();
    },
  };
}

export const JSON_HEADERS = { 'content-type': 'application/json' };
