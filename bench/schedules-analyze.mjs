// Pure analysis for the schedule benchmark (bench/schedules.mjs): what was created per
// (schedule, nominal slot), and how late the handlers started. No I/O, so it can be checked
// on hand-made data (node bench/schedules-analyze.mjs --self-test).

/** Nearest-rank percentile of an ascending array (null when empty). */
export function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export function summarize(values) {
  const sorted = Float64Array.from(values).sort();
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1] : null,
    min: sorted.length ? sorted[0] : null,
  };
}

/** The most frequent `at mod period` of a schedule's nominal times (its grid's phase). */
export function phaseOf(times, periodMs) {
  const counts = new Map();
  for (const t of times) {
    const r = ((t % periodMs) + periodMs) % periodMs;
    counts.set(r, (counts.get(r) ?? 0) + 1);
  }
  let best = 0;
  let bestCount = -1;
  for (const [r, n] of counts) {
    if (n > bestCount || (n === bestCount && r < best)) {
      best = r;
      bestCount = n;
    }
  }
  return best;
}

/**
 * Counts, for every schedule, the tasks/jobs that exist per nominal slot of its grid
 * (`phase + k·period`; Taskline's phase is 0, a BullMQ `every` scheduler's is set by its first
 * upsert), inside the window [windowStart, windowEnd).
 *
 * items: [{ schedule, nominalAt, id }] — everything found in the store.
 * Returns fires (items whose slot is in the window), duplicates (items beyond the first in a slot),
 * missed (slots of the window with no item), offGrid (items not on their schedule's grid, counted
 * in the nearest slot), and `slots` (Map id → slot time, for joining handler records).
 */
export function analyzeSlots({ items, schedules, windowStart, windowEnd, periodMs, fixedPhase = null }) {
  const bySchedule = new Map(schedules.map((s) => [s, []]));
  let unknown = 0;
  for (const item of items) {
    const list = bySchedule.get(item.schedule);
    if (list) list.push(item);
    else unknown += 1;
  }
  let fires = 0;
  let duplicates = 0;
  let missed = 0;
  let offGrid = 0;
  let expected = 0;
  const slotOf = new Map();
  const duplicateExamples = [];
  const missedExamples = [];
  const missedBySecond = new Map();
  for (const [schedule, list] of bySchedule) {
    const phase = fixedPhase ?? phaseOf(list.map((i) => i.nominalAt), periodMs);
    const perSlot = new Map();
    for (const item of list) {
      const k = Math.round((item.nominalAt - phase) / periodMs);
      const slot = phase + k * periodMs;
      if (slot !== item.nominalAt && slot >= windowStart && slot < windowEnd) offGrid += 1;
      slotOf.set(item.id, slot);
      if (slot < windowStart || slot >= windowEnd) continue;
      fires += 1;
      const n = (perSlot.get(slot) ?? 0) + 1;
      perSlot.set(slot, n);
      if (n > 1) {
        duplicates += 1;
        if (duplicateExamples.length < 5) duplicateExamples.push({ schedule, slot, id: item.id });
      }
    }
    const first = phase + Math.ceil((windowStart - phase) / periodMs) * periodMs;
    for (let slot = first; slot < windowEnd; slot += periodMs) {
      expected += 1;
      if (!perSlot.has(slot)) {
        missed += 1;
        const second = Math.floor(slot / 1000) * 1000;
        missedBySecond.set(second, (missedBySecond.get(second) ?? 0) + 1);
        if (missedExamples.length < 5) missedExamples.push({ schedule, slot });
      }
    }
  }
  return {
    expected,
    fires,
    duplicates,
    missed,
    offGrid,
    unknownItems: unknown,
    duplicateExamples,
    missedExamples,
    missedBySecond: [...missedBySecond].sort((a, b) => a[0] - b[0]).map(([second, n]) => ({ second: new Date(second).toISOString(), missed: n })),
    slotOf,
  };
}

/**
 * Joins handler starts to slots: lag = start − nominal for the first start of each item whose
 * slot is in the window; later starts of the same item are duplicate executions.
 * starts: [{ id, startedAt }] from all workers; nominalOf: Map id → nominal ms.
 */
export function analyzeStarts({ starts, nominalOf, slotOf, windowStart, windowEnd }) {
  const firstStart = new Map();
  let duplicateRuns = 0;
  let unknownRuns = 0;
  for (const { id, startedAt } of starts) {
    if (!nominalOf.has(id)) {
      unknownRuns += 1;
      continue;
    }
    const previous = firstStart.get(id);
    if (previous === undefined) firstStart.set(id, startedAt);
    else {
      const slot = slotOf.get(id);
      if (slot >= windowStart && slot < windowEnd) duplicateRuns += 1;
      if (startedAt < previous) firstStart.set(id, startedAt);
    }
  }
  const lags = [];
  let notStarted = 0;
  for (const [id, nominal] of nominalOf) {
    const slot = slotOf.get(id);
    if (slot === undefined || slot < windowStart || slot >= windowEnd) continue;
    const started = firstStart.get(id);
    if (started === undefined) notStarted += 1;
    else lags.push(started - nominal);
  }
  return { lag: summarize(lags), duplicateRuns, notStarted, unknownRuns };
}

// ── self-test ──────────────────────────────────────────────────────────────────
if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()) && process.argv.includes('--self-test')) {
  const assert = (await import('node:assert/strict')).default;
  assert.equal(percentile([1, 2, 3, 4], 50), 2);
  assert.equal(percentile([1, 2, 3, 4], 99), 4);
  assert.equal(percentile([], 50), null);
  assert.equal(phaseOf([1250, 2250, 3250, 3700], 1000), 250);
  // Schedule a: on the 0-phase grid 10..14 s with 12 s missing and 13 s twice (one off-grid).
  // Schedule b: phase 400, all five slots.
  const items = [
    { schedule: 'a', nominalAt: 10_000, id: 'a10' },
    { schedule: 'a', nominalAt: 11_000, id: 'a11' },
    { schedule: 'a', nominalAt: 13_000, id: 'a13' },
    { schedule: 'a', nominalAt: 13_000 + 300, id: 'a13b' },
    { schedule: 'a', nominalAt: 14_000, id: 'a14' },
    { schedule: 'a', nominalAt: 15_000, id: 'a15' }, // outside the window
    ...[9_400, 10_400, 11_400, 12_400, 13_400, 14_400].map((t) => ({ schedule: 'b', nominalAt: t, id: `b${t}` })),
    { schedule: 'zz', nominalAt: 10_000, id: 'zz' },
  ];
  const slots = analyzeSlots({ items, schedules: ['a', 'b'], windowStart: 10_000, windowEnd: 15_000, periodMs: 1000 });
  assert.equal(slots.expected, 10);
  assert.equal(slots.fires, 10);
  assert.equal(slots.duplicates, 1);
  assert.equal(slots.missed, 1);
  assert.equal(slots.offGrid, 1);
  assert.equal(slots.unknownItems, 1);
  const fixed = analyzeSlots({ items, schedules: ['a', 'b'], windowStart: 10_000, windowEnd: 15_000, periodMs: 1000, fixedPhase: 0 });
  assert.equal(fixed.offGrid, 6); // b's five in-window items and a13b are off the 0 grid
  const nominalOf = new Map(items.map((i) => [i.id, i.nominalAt]));
  const starts = [
    { id: 'a10', startedAt: 10_010 },
    { id: 'a10', startedAt: 10_500 },
    { id: 'a11', startedAt: 11_020 },
    { id: 'b10400', startedAt: 10_430 },
    { id: 'nope', startedAt: 1 },
  ];
  const runs = analyzeStarts({ starts, nominalOf, slotOf: slots.slotOf, windowStart: 10_000, windowEnd: 15_000 });
  assert.equal(runs.duplicateRuns, 1);
  assert.equal(runs.unknownRuns, 1);
  assert.equal(runs.lag.count, 3);
  assert.equal(runs.lag.p50, 20);
  assert.equal(runs.notStarted, 7);
  console.log('schedules-analyze self-test: ok');
}
