/** Output: aligned tables and short durations for people; stable JSON for scripts. */

export interface Output {
  readonly json: boolean;
  /** A line for people (skipped in --json mode). */
  line(text?: string): void;
  /** A JSON document (printed only in --json mode). */
  data(value: unknown): void;
  /** One compact JSON line (streams: `stats --watch`, worker events). */
  event(value: unknown): void;
  table(headers: string[], rows: (string | number)[][]): void;
}

export function createOutput(json: boolean, write: (text: string) => void = (text) => process.stdout.write(text)): Output {
  return {
    json,
    line: (text = '') => {
      if (!json) write(`${text}\n`);
    },
    data: (value) => {
      if (json) write(`${JSON.stringify(value, null, 2)}\n`);
    },
    event: (value) => write(`${JSON.stringify(value)}\n`),
    table: (headers, rows) => {
      if (!json) write(formatTable(headers, rows));
    },
  };
}

/** Columns padded to their widest cell; numbers right-aligned. */
export function formatTable(headers: string[], rows: (string | number)[][]): string {
  const cells = [headers, ...rows.map((row) => row.map((cell) => String(cell)))];
  const numeric = headers.map((_, column) => rows.length > 0 && rows.every((row) => typeof row[column] === 'number'));
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => (row[column] ?? '').length)));
  const render = (row: string[]) =>
    row
      .map((cell, column) => (numeric[column] ? cell.padStart(widths[column]) : cell.padEnd(widths[column])))
      .join('  ')
      .trimEnd();
  return `${cells.map(render).join('\n')}\n`;
}

/** `850ms`, `12s`, `3m 05s`, `2h 10m`, `3d 4h`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '-';
  if (ms < 1_000) return `${Math.round(ms)}ms`;
  const s = Math.floor(ms / 1_000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${String(m % 60).padStart(2, '0')}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** An instant as local-free UTC text: `2025-01-31 09:00:00Z`. */
export function formatTime(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '-';
  return new Date(ms).toISOString().replace('T', ' ').replace(/\.\d{3}Z$/, 'Z');
}

/** Shortens text for a table cell. */
export function clip(text: string | null | undefined, max = 60): string {
  if (text === null || text === undefined || text === '') return '-';
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
