#!/usr/bin/env node
// Summarizes a V8 .cpuprofile (from `npm run bench:schedules -- --cpu-prof`): self time by
// function and by file, and total (inclusive) time of the functions that matter most.
//
//   node bench/schedules-profile.mjs bench/results/profiles/CPU.….cpuprofile [--top 25]
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith('--'));
const topIndex = args.indexOf('--top');
const top = topIndex >= 0 ? Number(args[topIndex + 1]) : 25;
if (!file) {
  console.error('usage: node bench/schedules-profile.mjs <file.cpuprofile> [--top N]');
  process.exit(2);
}

const profile = JSON.parse(readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

// Self time per node from the samples and their time deltas (µs).
const self = new Map();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const total = [...self.values()].reduce((a, b) => a + b, 0);

const shortUrl = (url) => {
  if (!url) return '';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) return url.slice(nm + 'node_modules/'.length);
  const dist = url.lastIndexOf('/dist/');
  if (dist >= 0) return url.slice(dist + 1);
  return url.replace(/^file:\/\//, '');
};
const label = (n) => {
  const f = n.callFrame;
  return `${f.functionName || '(anonymous)'} ${shortUrl(f.url)}${f.url ? `:${f.lineNumber + 1}` : ''}`;
};

const byFunction = new Map();
const byFile = new Map();
for (const [id, us] of self) {
  const n = nodes.get(id);
  byFunction.set(label(n), (byFunction.get(label(n)) ?? 0) + us);
  const where = shortUrl(n.callFrame.url) || n.callFrame.functionName || '(native)';
  const key = where.startsWith('dist/') ? where : where.split('/').slice(0, where.startsWith('@') ? 2 : 1).join('/');
  byFile.set(key, (byFile.get(key) ?? 0) + us);
}

// Inclusive time per function label (counted once per sample even under recursion).
const inclusive = new Map();
profile.samples.forEach((id, i) => {
  const dt = profile.timeDeltas[i] ?? 0;
  const seen = new Set();
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const l = label(nodes.get(cur));
    if (seen.has(l)) continue;
    seen.add(l);
    inclusive.set(l, (inclusive.get(l) ?? 0) + dt);
  }
});

const pct = (us) => `${((100 * us) / total).toFixed(1).padStart(5)} %`;
const secs = (us) => `${(us / 1e6).toFixed(2).padStart(6)} s`;
const print = (title, map, n) => {
  console.log(`\n${title}`);
  for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, n)) console.log(`${secs(us)} ${pct(us)}  ${key}`);
};
console.log(`${file}: ${secs(total)} sampled`);
print('self time by file/package', byFile, top);
print('self time by function', byFunction, top);
print('total (inclusive) time, Taskline functions', new Map([...inclusive].filter(([l]) => l.includes(' dist/'))), top);
