/**
 * Task search (Backend.searchTasks; search-scope.ts has what both stores share). A search walks
 * its scope segment by segment through the `tasks_by_state` index (queue, state, sort_key) in
 * listing order, a window of rows at a time; SQL tests each row (json_extract for payload
 * terms) with the rules the Redis store applies in code. `id:` is a primary-key lookup. The
 * whole call reads one snapshot.
 */
import { testsRecords, type TaskFilter } from '../../core/task-query.js';
import type { TaskRecord } from '../../core/task.js';
import type { SearchPageOptions, TaskSearchPage } from '../search-contract.js';
import { encodeSearchCursor, newestFirst, resumeIndex, searchBounds, searchSegments, type Segment } from '../search-scope.js';
import type { StatementCache } from './database.js';
import { decodeRecord, TASK_COLUMNS, TASK_FROM, type TaskRow } from './rows.js';

/**
 * A place in a segment: the sort key and id of the last task examined (a keyset: tasks that
 * move elsewhere do not shift it), or [] for the segment's start.
 */
type Position = [sortKey: number, id: string] | [];

function isPosition(position: unknown[]): position is Position {
  return position.length === 0 || (position.length === 2 && typeof position[0] === 'number' && Number.isFinite(position[0]) && typeof position[1] === 'string');
}

type Params = Record<string, string | number>;

/** The filter's tests of one row `t` (and its payload `p`) as an SQL expression, with its parameters. */
function rowTest(filter: TaskFilter): { sql: string; params: Params; payload: boolean } {
  const params: Params = {};
  const bind = (value: string | number) => {
    const name = `p${Object.keys(params).length}`;
    params[name] = value;
    return `@${name}`;
  };
  const tests: string[] = [];
  if (filter.type !== null) tests.push(`t.type = ${bind(filter.type)}`);
  if (filter.createdAfter !== null) tests.push(`t.created_at >= ${bind(filter.createdAfter)}`);
  if (filter.createdBefore !== null) tests.push(`t.created_at < ${bind(filter.createdBefore)}`);
  // lower() folds ASCII letters only, as asciiLower does for the filter's text.
  for (const text of filter.errors) tests.push(`(t.last_error IS NOT NULL AND instr(lower(t.last_error), ${bind(text)}) > 0)`);
  for (const word of filter.words) {
    const w = bind(word);
    tests.push(`(instr(lower(t.id), ${w}) > 0 OR instr(lower(t.type), ${w}) > 0)`);
  }
  if (filter.payload.length > 0) {
    const matches = filter.payload.map(({ path, value }) => {
      const at = bind(`$${path.map((key) => `."${key}"`).join('')}`);
      const type = `json_type(p.body, ${at})`;
      if (value === null) return `${type} = 'null'`;
      if (typeof value === 'boolean') return `${type} = '${value}'`;
      if (typeof value === 'number') return `(${type} IN ('integer', 'real') AND json_extract(p.body, ${at}) = ${bind(value)})`;
      if (typeof value === 'string') return `(${type} = 'text' AND json_extract(p.body, ${at}) = ${bind(value)})`;
      // Objects and arrays: the same JSON text (json_extract gives it minified, as JSON.stringify).
      return `(${type} = '${Array.isArray(value) ? 'array' : 'object'}' AND json_extract(p.body, ${at}) = ${bind(JSON.stringify(value))})`;
    });
    // json_type fails on text that is not JSON: such a payload matches nothing.
    tests.push(`(CASE WHEN json_valid(p.body) THEN (${matches.join(' AND ')}) ELSE 0 END)`);
  }
  for (const text of filter.texts) tests.push(`(p.body IS NOT NULL AND instr(lower(p.body), ${bind(text)}) > 0)`);
  return { sql: tests.length === 0 ? '1' : tests.join(' AND '), params, payload: filter.payload.length > 0 || filter.texts.length > 0 };
}

interface WindowRow {
  id: string;
  sort_key: number;
  hit: number;
}

export function searchTasks(sql: StatementCache, filter: TaskFilter, page: SearchPageOptions = {}): TaskSearchPage {
  const { limit, scanLimit, resume } = searchBounds(filter, page, isPosition);
  const test = rowTest(filter);
  if (filter.id !== null) return searchById(sql, filter.id, filter, test);
  const queues = filter.queue !== null ? [filter.queue] : (sql.get('SELECT name FROM queues ORDER BY name').all() as { name: string }[]).map((r) => r.name);
  const segments = searchSegments(queues, filter);
  const total = resume?.total ?? countScope(sql, filter);
  const first = resumeIndex(segments, resume);
  const window = windowQueries(sql, test);

  const hits: string[] = [];
  let scanned = 0;
  let next: { index: number; position: Position } | null = null;
  const full = () => hits.length >= limit || scanned >= scanLimit;
  for (let index = first; index < segments.length && next === null; index++) {
    const segment = segments[index];
    const resumed = index === first && resume !== null && resume.queue === segment.queue && resume.state === segment.state;
    let after: Position = resumed ? (resume.position as Position) : [];
    let more = true;
    while (more) {
      if (full()) {
        next = { index, position: after };
        break;
      }
      const want = Math.min(scanLimit - scanned, testsRecords(filter) ? scanLimit : limit - hits.length);
      // One row past the window tells whether the segment goes on.
      const rows = window(newestFirst(segment.state), after.length > 0).all({
        ...test.params, queue: segment.queue, state: segment.state, n: want + 1, ...(after.length > 0 ? { k: after[0], id: after[1] } : {}),
      }) as WindowRow[];
      const look = rows.slice(0, want);
      let examined = 0;
      for (const row of look) {
        examined += 1;
        after = [row.sort_key, row.id];
        if (row.hit === 1) hits.push(row.id);
        if (hits.length >= limit) break;
      }
      scanned += examined;
      more = examined < look.length || rows.length > want;
    }
    if (next === null && full()) {
      const rest = segments.findIndex((s, j) => j > index && hasTasks(sql, s));
      if (rest >= 0) next = { index: rest, position: [] };
      break;
    }
  }
  const tasks = recordsOf(sql, hits);
  const nextCursor = next === null ? null : encodeSearchCursor(filter, { ...segments[next.index], total, position: next.position });
  return { tasks, nextCursor, scanned, total };
}

/**
 * The next rows of one segment (from its start, or after a place), in listing order, each
 * tested: four statements (order × start or not), so that each uses the index's range.
 */
function windowQueries(sql: StatementCache, test: { sql: string; payload: boolean }) {
  const prepared = new Map<string, ReturnType<StatementCache['db']['prepare']>>();
  return (desc: boolean, after: boolean) => {
    const key = `${desc}${after}`;
    let statement = prepared.get(key);
    if (!statement) {
      const dir = desc ? 'DESC' : 'ASC';
      const place = after ? `AND (sort_key, id) ${desc ? '<' : '>'} (@k, @id)` : '';
      statement = sql.db.prepare(`
        SELECT t.id, t.sort_key, (${test.sql}) AS hit FROM (
          SELECT id, sort_key, type, created_at, last_error FROM tasks
          WHERE queue = @queue AND state = @state ${place}
          ORDER BY sort_key ${dir}, id ${dir} LIMIT @n
        ) t ${test.payload ? 'LEFT JOIN payloads p ON p.id = t.id' : ''}
        ORDER BY t.sort_key ${dir}, t.id ${dir}`);
      prepared.set(key, statement);
    }
    return statement;
  };
}

function countScope(sql: StatementCache, filter: TaskFilter): number {
  const where: string[] = [];
  const params: (string | number)[] = [];
  if (filter.queue !== null) {
    where.push('queue = ?');
    params.push(filter.queue);
  }
  if (filter.states !== null) {
    where.push(`state IN (${filter.states.map(() => '?').join(', ')})`);
    params.push(...filter.states);
  }
  // The counts per queue and state the transitions keep (migration 0008): one read per segment.
  const row = sql.get(`SELECT COALESCE(SUM(n), 0) AS n FROM state_counts ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}`).get(...params) as { n: number };
  return row.n;
}

function hasTasks(sql: StatementCache, segment: Segment): boolean {
  return sql.get('SELECT 1 FROM tasks WHERE queue = ? AND state = ? LIMIT 1').get(segment.queue, segment.state) !== undefined;
}

/** The full records of the hits, in their order. */
function recordsOf(sql: StatementCache, ids: string[]): TaskRecord[] {
  if (ids.length === 0) return [];
  const rows = sql.get(`${TASK_COLUMNS} ${TASK_FROM} WHERE t.id IN (SELECT value FROM json_each(?))`).all(JSON.stringify(ids)) as TaskRow[];
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.flatMap((id) => {
    const row = byId.get(id);
    return row ? [decodeRecord(row)] : [];
  });
}

/** `id:`: one primary-key lookup, then the other terms. */
function searchById(sql: StatementCache, id: string, filter: TaskFilter, test: { sql: string; params: Params }): TaskSearchPage {
  const row = sql.db
    .prepare(`SELECT t.queue, t.state, (${test.sql}) AS hit FROM tasks t LEFT JOIN payloads p ON p.id = t.id WHERE t.id = @id`)
    .get({ ...test.params, id }) as { queue: string; state: TaskRecord['state']; hit: number } | undefined;
  if (!row || (filter.queue !== null && row.queue !== filter.queue)) return { tasks: [], nextCursor: null, scanned: 0, total: 0 };
  const matches = row.hit === 1 && (filter.states === null || filter.states.includes(row.state));
  return { tasks: matches ? recordsOf(sql, [id]) : [], nextCursor: null, scanned: 1, total: 1 };
}
