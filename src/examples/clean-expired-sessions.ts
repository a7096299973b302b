/** clean_expired_sessions: deletes sessions not seen for N days, in batches (short write locks). */
import type { TaskContext } from '../worker/context.js';
import { openAppDatabase } from './app-db.js';
import type { ExampleOptions } from './options.js';

export interface CleanSessionsPayload {
  /** Sessions not seen for this many days are deleted. Default 30. */
  olderThanDays?: number;
  /** Rows deleted per write transaction. Default 1 000. */
  batchSize?: number;
}

export function cleanExpiredSessionsHandler(options: ExampleOptions) {
  return async (payload: CleanSessionsPayload, ctx: TaskContext) => {
    const olderThanDays = payload.olderThanDays ?? 30;
    const batchSize = payload.batchSize ?? 1_000;
    const db = openAppDatabase(options.appDatabase);
    try {
      const cutoff = Date.now() - olderThanDays * 86_400_000;
      const deleteBatch = db.prepare('DELETE FROM sessions WHERE rowid IN (SELECT rowid FROM sessions WHERE last_seen_at < ? LIMIT ?)');
      let deleted = 0;
      for (;;) {
        ctx.signal.throwIfAborted();
        const { changes } = deleteBatch.run(cutoff, batchSize);
        deleted += changes;
        if (changes < batchSize) break;
        ctx.progress({ deleted });
        // Let other writers (and this worker's timers) in between batches.
        await new Promise((resolve) => setImmediate(resolve));
      }
      const { remaining } = db.prepare('SELECT count(*) AS remaining FROM sessions').get() as { remaining: number };
      ctx.log(`deleted ${deleted} sessions last seen before ${new Date(cutoff).toISOString()}; ${remaining} remain`);
      return { deleted, remaining, cutoff: new Date(cutoff).toISOString() };
    } finally {
      db.close();
    }
  };
}
