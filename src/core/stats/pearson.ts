import { assertSameLength, mean } from './descriptive.js';

// The correlations (pearson, spearman, kendall) return `NaN` where the statistic is undefined instead of
// throwing like the tests of this folder, so that `bootstrapStatisticCi` can skip such resamples.

/** Pearson's product-moment correlation; `NaN` when n < 2, a value is not finite, or either variable is constant. */
export function pearson(x: readonly number[], y: readonly number[]): number {
  assertSameLength(x, y, 'pearson');
  const n = x.length;
  if (n < 2 || !allFinite(x) || !allFinite(y)) return Number.NaN;
  // Constant by exact equality, as scipy decides it: the mean of [0.1, 0.1, 0.1] is not exactly 0.1, and the
  // deviations it leaves would give a "correlation" of rounding noise (r = 1 for two such constants).
  if (x.every((v) => v === x[0]) || y.every((v) => v === y[0])) return Number.NaN;
  const dx = deviations(x);
  const dy = deviations(y);
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const a = dx[i] as number;
    const b = dy[i] as number;
    sxy += a * b;
    sxx += a * a;
    syy += b * b;
  }
  if (sxx === 0 || syy === 0) return Number.NaN;
  // Clamp: rounding can push a perfect correlation a hair past 1.
  return Math.max(-1, Math.min(1, sxy / Math.sqrt(sxx * syy)));
}

/** Whether every value is a finite number (a NaN makes a correlation undefined, as in scipy). */
function allFinite(xs: readonly number[]): boolean {
  return xs.every(Number.isFinite);
}

/** `x − mean(x)` scaled by its largest magnitude, so that the sums of squares neither overflow nor underflow. */
function deviations(x: readonly number[]): number[] {
  const m = mean(x);
  const d = x.map((v) => v - m);
  const scale = Math.max(...d.map(Math.abs));
  return scale > 0 && Number.isFinite(scale) ? d.map((v) => v / scale) : d;
}
