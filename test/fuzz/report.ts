/** Findings, grouped by route, status and problem, each with a request that reproduces it. */

export interface Finding {
  /** Request index in the run, or `sweep` for the read-back afterwards. */
  index: number | 'sweep' | 'auth';
  /** The operation the router reached, e.g. `GET /api/v1/tasks/{id}`, or `(no route) METHOD`. */
  route: string;
  method: string;
  url: string;
  body: string;
  headers: Record<string, string>;
  status: number;
  response: string;
  problem: string;
  /** The mutations applied to a valid request to make this one. */
  mutations?: string[];
  /** The last successful requests that made or changed what this read failed on. */
  touchedBy?: string[];
}

const EXAMPLES = 2;

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}

/** Printable: control characters and lone surrogates escaped, so a report is one line per item. */
export function printable(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

/** A problem without its details (the parenthesized values), so alike findings group. */
function problemClass(problem: string): string {
  return problem.replace(/\s*\([^()]*\)/g, '').replace(/\[\d+\]/g, '[]');
}

function errorCode(response: string): string {
  return /^\{"error":\{"code":"([^"]+)"/.exec(response)?.[1] ?? /"code":"([^"]+)"/.exec(response)?.[1] ?? '';
}

/** The class of a finding across routes: status, error code, problem. */
export function classKey(f: Finding): string {
  return `${f.status || 'no answer'} ${errorCode(f.response)}: ${problemClass(f.problem)}`.replace(/ +:/, ':');
}

export function groupKey(f: Finding): string {
  return `${f.route} → ${classKey(f)}`;
}

function example(f: Finding): string[] {
  const headers = Object.entries(f.headers)
    .filter(([k, v]) => k !== 'content-type' || v !== 'application/json')
    .map(([k, v]) => `${k}: ${clip(printable(v), 60)}`);
  const mutations = f.mutations && f.mutations.length > 0 ? `  {${f.mutations.join(', ')}}` : '';
  const lines = [`  #${f.index} ${f.method} ${clip(printable(f.url), 200)}${headers.length > 0 ? `  [${headers.join('; ')}]` : ''}${mutations}`];
  if (f.body !== '') lines.push(`      body ${clip(printable(f.body), 200)}`);
  lines.push(`      → ${f.status || '-'} ${clip(printable(f.response), 300)}`);
  for (const by of f.touchedBy ?? []) lines.push(`      made or changed by ${by}`);
  return lines;
}

function groupBy(findings: Finding[], key: (f: Finding) => string): [string, Finding[]][] {
  const groups = new Map<string, Finding[]>();
  for (const f of findings) groups.set(key(f), [...(groups.get(key(f)) ?? []), f]);
  return [...groups].sort((a, b) => a[0].localeCompare(b[0]));
}

/** The report; `brief`: only its head and the classes, for the assertion message. */
export function formatFindings(findings: Finding[], context: { store: string; seed: number; requests: number }, brief = false): string {
  const classes = groupBy(findings, classKey);
  const groups = groupBy(findings, groupKey);
  const lines = [
    `${findings.length} finding(s) in ${classes.length} class(es), ${groups.length} (route, status) group(s) on ${context.store}, seed ${context.seed}, ${context.requests} requests`,
    `reproduce: TASKLINE_FUZZ_SEED=${context.seed} TASKLINE_FUZZ_REQUESTS=${context.requests} TASKLINE_FUZZ_STORE=${context.store} npx vitest run test/fuzz`,
    '',
    'classes:',
  ];
  for (const [key, items] of classes) {
    const routes = [...new Set(items.map((f) => f.route))];
    lines.push(`  ${key}  (${items.length}× on ${routes.length} route(s): ${routes.slice(0, 4).join(', ')}${routes.length > 4 ? ', …' : ''})`);
  }
  if (brief) return [...lines, '', '(the requests of each class are in the output above)'].join('\n');
  for (const [key, items] of groups) {
    lines.push('', `■ ${key}  (${items.length}×)`);
    for (const f of items.slice(0, EXAMPLES)) lines.push(...example(f));
  }
  return lines.join('\n');
}
