#!/usr/bin/env node
// Taskline's own chaos suite: `npm run chaos` (the full run, a few minutes) or
// `npm run chaos -- --quick` (a minute or two, run by the test suite).
// Options: --store redis|sqlite (default both), --json <file> (the rows as JSON).
// Prints one table row per scenario and store; exits 1 if any acknowledged task was lost,
// completed twice (or completed by no handler run of its attempt), any scheduled fire was missed
// or doubled, or a worker fault hit a worker with nothing in flight.
import { writeFileSync } from 'node:fs';
import { cleanupNow, installCleanup } from './processes.mjs';
import { leaderKills, redisRestarts, workerFaults } from './scenarios.mjs';

const args = process.argv.slice(2);
const option = (name) => {
  const at = args.indexOf(name);
  return at === -1 ? null : args[at + 1];
};
for (const arg of args) {
  if (arg.startsWith('--') && !['--quick', '--store', '--json'].includes(arg)) {
    console.error(`chaos: unknown option ${arg} (accepted: --quick, --store redis|sqlite, --json <file>)`);
    process.exit(2);
  }
}
const quick = args.includes('--quick');
const storeOption = option('--store');
if (storeOption !== null && !['redis', 'sqlite'].includes(storeOption)) {
  console.error(`chaos: --store takes redis or sqlite, not ${JSON.stringify(storeOption)}`);
  process.exit(2);
}
const stores = storeOption ? [storeOption] : ['redis', 'sqlite'];

const SIZES = quick
  ? { kill: { tasks: 400, faults: 3, everyMs: 700 }, freeze: { tasks: 400, faults: 2, everyMs: 500 }, redis: { restarts: 1, everyMs: 2000 }, leader: { kills: 2, everyMs: 3500 } }
  : { kill: { tasks: 3000, faults: 20, everyMs: 800 }, freeze: { tasks: 2000, faults: 6, everyMs: 300 }, redis: { restarts: 5, everyMs: 4000 }, leader: { kills: 8, everyMs: 4000 } };

const plan = [];
for (const kind of stores) {
  plan.push(() => workerFaults(kind, { fault: 'kill', ...SIZES.kill }));
  plan.push(() => workerFaults(kind, { fault: 'freeze', ...SIZES.freeze }));
  if (kind === 'redis') plan.push(() => redisRestarts(SIZES.redis));
  plan.push(() => leaderKills(kind, SIZES.leader));
}

installCleanup();
const COLUMNS = [
  ['scenario', 'scenario', 28], ['store', 'store', 7], ['tasks', 'tasks', 6], ['faults', 'faults', 7], ['lost', 'lost', 5], ['duplicates', 'dupl.', 6],
  ['reexecutions', 're-exec', 8], ['lateRefused', 'late', 5], ['resumeMs', 'resume', 8], ['missedFires', 'missed', 7], ['seconds', 'time', 6],
];
const cell = (row, key) => {
  const value = row[key];
  if (value === null || value === undefined) return '–';
  if (key === 'resumeMs') return `${(value / 1000).toFixed(1)} s`;
  if (key === 'seconds') return `${Math.round(value)} s`;
  return String(value);
};
const line = (values) => values.map((v, i) => (i === 0 ? v.padEnd(COLUMNS[i][2]) : v.padStart(COLUMNS[i][2]))).join(' ');

console.log(`Taskline chaos suite${quick ? ' (quick)' : ''}: ${stores.join(' and ')}`);
console.log(line(COLUMNS.map((c) => c[1])));
const rows = [];
let failed = false;
for (const run of plan) {
  let row;
  try {
    row = await run();
  } catch (error) {
    console.error(`chaos: a scenario failed to run: ${error instanceof Error ? error.stack : String(error)}`);
    failed = true;
    continue;
  }
  rows.push(row);
  console.log(line(COLUMNS.map(([key]) => cell(row, key))));
  if ((row.lost ?? 0) > 0 || row.duplicates > 0 || (row.missedFires ?? 0) > 0) failed = true;
  // A fault that found its worker idle proves nothing: the load must outlast the faults.
  if (row.idleFaults > 0) {
    console.error(`chaos: ${row.idleFaults} of the ${row.faults} faults of "${row.scenario}" on ${row.store} hit a worker with no task in flight`);
    failed = true;
  }
}
const output = option('--json');
if (output) writeFileSync(output, `${JSON.stringify({ quick, rows, failed }, null, 2)}\n`);
console.log(failed ? 'chaos: FAILED (a task lost or completed twice, a fire missed or doubled, or a scenario that could not run)' : 'chaos: passed — nothing acknowledged was lost, nothing completed twice, no fire missed');
cleanupNow();
process.exit(failed ? 1 : 0);
