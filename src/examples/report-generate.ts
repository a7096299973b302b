/** report:generate (queue `critical`, timeout 60 s): writes a CSV of the synced records and its checksum. */
import { createHash } from 'node:crypto';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskContext } from '../worker/context.js';
import { openAppDatabase } from './app-db.js';
import type { ExampleOptions } from './options.js';

export interface ReportPayload {
  /** Default `Synced records`. */
  title?: string;
  source?: string;
}

export function reportGenerateHandler(options: ExampleOptions) {
  return async (payload: ReportPayload, ctx: TaskContext) => {
    const db = openAppDatabase(options.appDatabase);
    const rows: string[] = [['source', 'id', 'synced_at', 'data'].join(',')];
    try {
      const query =
        payload.source === undefined
          ? db.prepare('SELECT source, id, synced_at, data FROM external_records ORDER BY source, id')
          : db.prepare('SELECT source, id, synced_at, data FROM external_records WHERE source = ? ORDER BY id');
      const records = (payload.source === undefined ? query.iterate() : query.iterate(payload.source)) as Iterable<{ source: string; id: string; synced_at: number; data: string }>;
      for (const r of records) {
        if (ctx.signal.aborted) break;
        rows.push([r.source, r.id, new Date(r.synced_at).toISOString(), r.data].map(csvCell).join(','));
      }
    } finally {
      db.close();
    }
    ctx.signal.throwIfAborted();
    const content = `# ${payload.title ?? 'Synced records'}\n${rows.join('\n')}\n`;
    const dir = join(options.dataDir, 'reports');
    mkdirSync(dir, { recursive: true });
    const path = join(dir, `${ctx.task.id.replace(/[^A-Za-z0-9._-]/g, '_')}.csv`);
    writeFileSync(`${path}.tmp`, content);
    renameSync(`${path}.tmp`, path);
    const sha256 = createHash('sha256').update(content).digest('hex');
    ctx.log(`wrote ${rows.length - 1} records to ${path}`);
    return { path, records: rows.length - 1, bytes: Buffer.byteLength(content), sha256 };
  };
}

/** RFC 4180: quote a cell holding a comma, quote or line break; double its quotes. */
export function csvCell(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}
