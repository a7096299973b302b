/** Median of the numbers in `values` (null/undefined entries, i.e. failed rounds, are skipped). */
export function median(values) {
  const xs = values.filter((v) => typeof v === 'number' && Number.isFinite(v)).sort((a, b) => a - b);
  if (xs.length === 0) return null;
  const mid = Math.floor(xs.length / 2);
  return xs.length % 2 === 1 ? xs[mid] : (xs[mid - 1] + xs[mid]) / 2;
}

/** A number for the table: thousands separators for big values, a few significant digits for small ones. */
export function formatNumber(value) {
  if (value === null || value === undefined || !Number.isFinite(value)) return 'n/a';
  const abs = Math.abs(value);
  if (abs >= 999.5) return Math.round(value).toLocaleString('en-US');
  if (abs >= 99.95) return value.toFixed(0);
  if (abs >= 9.995) return value.toFixed(1);
  return value.toFixed(2);
}

/** Renders rows (arrays of strings) as an aligned text table; the first column left-aligned. */
export function renderTable(header, rows) {
  const all = [header, ...rows];
  const widths = header.map((_, col) => Math.max(...all.map((row) => String(row[col]).length)));
  const line = (row) => row.map((cell, col) => (col === 0 ? String(cell).padEnd(widths[col]) : String(cell).padStart(widths[col]))).join(' | ');
  const rule = widths.map((w) => '-'.repeat(w)).join('-|-');
  return [line(header), rule, ...rows.map(line)].join('\n');
}
