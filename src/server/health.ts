/** Liveness and readiness (DESIGN §9). */
import type { Backend } from '../backend/contract.js';
import { defineRoute, type AnyRoute } from './route.js';
import { Health } from './schemas.js';

/** A store that does not answer within this long is unreachable. */
const READY_TIMEOUT_MS = 2_000;

async function storeAnswers(backend: Backend): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      backend.now(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the ${backend.kind} store did not answer within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
      }),
    ]);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    clearTimeout(timer);
  }
}

export function healthRoutes(backend: Backend): AnyRoute[] {
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
        const error = await storeAnswers(backend);
        if (error === null) return { status: 'healthy' };
        return reply.status(503).send({ status: 'unhealthy', error });
      },
    }),
  ];
}
