/** Liveness and readiness. */
import type { Backend } from '../backend/contract.js';
import { storeOutage } from './errors.js';
import { defineRoute, type AnyRoute } from './route.js';
import { Health } from './schemas.js';

/** A store that does not answer within this long is unreachable. */
const READY_TIMEOUT_MS = 2_000;

/** Null when the store answers; else why not, in the words of an outage's 503. */
async function storeAnswers(backend: Backend, store: string): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      backend.now(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the store (${store}) did not answer within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
      }),
    ]);
    return null;
  } catch (error) {
    return storeOutage(error, store)?.message ?? (error instanceof Error ? error.message : String(error));
  } finally {
    clearTimeout(timer);
  }
}

/** `store` names the store in messages (`redis 127.0.0.1:6379`). */
export function healthRoutes(backend: Backend, store: string = backend.kind): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      url: '/healthz',
      summary: 'Liveness: the process serves requests',
      tag: 'health',
      access: 'public',
      responses: { 200: { description: 'alive', schema: Health } },
      handler: async () => ({ status: 'healthy' }),
    }),
    defineRoute({
      method: 'GET',
      url: '/readyz',
      summary: 'Readiness: the store answers',
      tag: 'health',
      access: 'public',
      responses: { 200: { description: 'ready', schema: Health }, 503: { description: 'the store is unreachable', schema: Health } },
      handler: async ({ reply }) => {
        const error = await storeAnswers(backend, store);
        if (error === null) return { status: 'healthy' };
        return reply.status(503).send({ status: 'unhealthy', error });
      },
    }),
  ];
}
