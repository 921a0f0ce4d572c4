/** A column of {@link formatTable}: header and alignment. */
export interface Column {
  key: string;
  header?: string;
  align?: 'left' | 'right';
}

/**
 * Formats rows as a plain-text table with a header rule, for terminals and logs.
 *
 * @example
 * ```ts
 * formatTable([{ env: 'a', steps: 3 }], [{ key: 'env' }, { key: 'steps', align: 'right' }]);
 * ```
 */
export function formatTable(rows: readonly Record<string, unknown>[], columns: readonly Column[]): string {
  const cell = (v: unknown): string => (typeof v === 'number' ? formatNumber(v) : v === undefined || v === null ? '' : String(v));
  const headers = columns.map((c) => c.header ?? c.key);
  const body = rows.map((r) => columns.map((c) => cell(r[c.key])));
  const widths = headers.map((h, i) => Math.max(h.length, ...body.map((r) => (r[i] as string).length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((v, i) => (columns[i]?.align === 'right' ? v.padStart(widths[i] as number) : v.padEnd(widths[i] as number)))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

/** Integers as they are, NaN as a dash, other numbers with 3 decimals (1 from 100 up). */
export function formatNumber(v: number): string {
  if (Number.isInteger(v)) return String(v);
  if (Number.isNaN(v)) return '—';
  if (!Number.isFinite(v)) return String(v);
  return Math.abs(v) >= 100 ? v.toFixed(1) : v.toFixed(3);
}
