/** The task types workers record, one row per type or pattern. */
import type { TaskTypeInfo } from '../contract.js';
import { decodeTaskType, encodeTaskType } from '../task-types.js';
import type { StatementCache } from './database.js';
import type { Transition } from './transition.js';

export function recordTaskTypes(t: Transition, types: TaskTypeInfo[]): void {
  for (const info of types) t.run('INSERT OR REPLACE INTO task_types (type, info) VALUES (?, ?)', info.type, encodeTaskType(info, t.now));
}

export function listTaskTypes(sql: StatementCache): TaskTypeInfo[] {
  const rows = sql.get('SELECT type, info FROM task_types ORDER BY type').all() as { type: string; info: string }[];
  return rows.map((r) => decodeTaskType(r.type, r.info));
}
