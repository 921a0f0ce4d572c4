/**
 * Number formatting for evaluation reports (Markdown and terminal): compact, stable, and honest about
 * missing values.
 */

/** `—` for null, integers as they are, p-values and small numbers in scientific notation when tiny. */
export function formatValue(v: number | null | undefined, digits = 3): string {
  if (v === null || v === undefined || Number.isNaN(v)) return '—';
  if (!Number.isFinite(v)) return v > 0 ? '∞' : '−∞';
  if (Number.isInteger(v)) return String(v);
  if (Math.abs(v) >= 1000) return v.toFixed(1);
  if (Math.abs(v) < 10 ** -digits) return v.toExponential(1);
  return v.toFixed(digits);
}

/**
 * A p-value: 2 significant digits, scientific below 1e−4; an exact 0 (a t-test on samples without
 * variance) prints as `0`.
 */
export function formatP(p: number | null | undefined): string {
  if (p === null || p === undefined || Number.isNaN(p)) return '—';
  if (p === 0) return '0';
  if (p < 1e-4) return p.toExponential(1);
  return p.toPrecision(2);
}

/** `[low, high]` of an interval, or `—`. */
export function formatInterval(ci: { low: number; high: number } | null | undefined, digits = 3): string {
  if (!ci) return '—';
  return `[${formatValue(ci.low, digits)}, ${formatValue(ci.high, digits)}]`;
}

/**
 * A comparison's bootstrap interval as reports print it, `[low, high] design`, led by the interval's own
 * estimate when that is not A − B: paired by task, it is the mean of per-task differences, which differs when
 * tasks ran unequally often (a diff outside its own interval would read as an error).
 */
export function formatDifferenceInterval(c: { difference: number; bootstrap: { low: number; high: number; estimate: number; design: string } }): string {
  const own = Math.abs(c.bootstrap.estimate - c.difference) > 1e-12 ? `${formatValue(c.bootstrap.estimate)} ` : '';
  return `${own}${formatInterval(c.bootstrap)} ${c.bootstrap.design}`;
}

/**
 * pass^1 … pass^k with their intervals on one line, as the reports print them:
 * `pass^1 0.600 [0.400, 0.800] · pass^2 0.450 [0.250, 0.650]`.
 */
export function formatPassK(passK: readonly { k: number; value: number; low: number; high: number }[], digits = 3): string {
  return passK.map((p) => `pass^${p.k} ${formatValue(p.value, digits)} ${formatInterval(p, digits)}`).join(' · ');
}

/**
 * The sentence that introduces a result's pass^k (`pass^k over 5 tasks, 3 trials, 95% bootstrap over tasks`), or
 * undefined for a result without trials.
 */
export function passKHeading(result: { tasks: number; trials?: number; confidence: number; passK?: readonly unknown[] }): string | undefined {
  if (result.passK === undefined || result.trials === undefined) return undefined;
  return `pass^k over ${result.tasks} tasks, ${result.trials} trials, ${Math.round(result.confidence * 100)}% bootstrap over tasks`;
}

/**
 * The pass^k table of a comparison whose every row ran trials: a header (`agent`, `pass^1`, … up to the largest
 * k) and one row per leaderboard row, `value [low, high]`, `—` past a row's own trials. Undefined when a row has
 * no pass^k (a result without trials), since pass^k of one agent says nothing beside another's success rate.
 */
export function passKComparisonRows(
  rows: readonly { label: string; passK?: readonly { k: number; value: number; low: number; high: number }[] }[],
): { header: string[]; rows: string[][] } | undefined {
  if (rows.length === 0 || rows.some((r) => r.passK === undefined)) return undefined;
  const kMax = Math.max(...rows.map((r) => r.passK?.length ?? 0));
  const ks = Array.from({ length: kMax }, (_, i) => i + 1);
  return {
    header: ['agent', ...ks.map((k) => `pass^${k}`)],
    rows: rows.map((r) => [
      r.label,
      ...ks.map((k) => {
        const p = r.passK?.find((q) => q.k === k);
        return p ? `${formatValue(p.value)} ${formatInterval(p)}` : '—';
      }),
    ]),
  };
}

/** Converts NaN and ±Infinity to null, so a value survives JSON unchanged. */
export function finiteOrNull(v: number): number | null {
  return Number.isFinite(v) ? v : null;
}

/**
 * The note under a comparison table with an exact Mann–Whitney p-value (`mannWhitney.method: 'exact'`),
 * for the column that holds them (`MWU p` in the terminal, `Mann–Whitney p` in Markdown).
 */
export function exactMannWhitneyNote(column: string): string {
  return `${column} marked exact: the exact null distribution of U (no ties, a group of at most 8); unmarked: the normal approximation`;
}

/**
 * The calibration line of a result whose episodes stated confidences: `RMS calibration error 0.123 (12.3 as HLE
 * prints it) over 40 stated confidences, bins of 100`.
 */
export function formatCalibration(c: { n: number; rmsError: number; binSize: number; bins: readonly unknown[] }): string {
  const bins = c.bins.length === 1 ? 'one bin' : `${c.bins.length} bins of ${c.binSize}`;
  return `RMS calibration error ${formatValue(c.rmsError)} (${(100 * c.rmsError).toFixed(1)} as HLE reports it) over ${c.n} stated confidence${c.n === 1 ? '' : 's'}, ${bins}`;
}
