import { Rng } from '../core/rng.js';

/**
 * Small, dependency-free statistics for the reward layers: correlations between automatic and human
 * scores (Pearson, Spearman, Kendall tau-b, pairwise agreement), bootstrap percentile intervals, and the
 * Wilson interval for a proportion. Every function returns `NaN` where the statistic is undefined
 * (fewer than two points, a constant variable) instead of throwing, so a bootstrap can skip such
 * resamples.
 */

/** Arithmetic mean; `NaN` for an empty list. */
export function mean(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

/**
 * The q-quantile of already **sorted** values with linear interpolation between order statistics
 * (Hyndman–Fan type 7, the default of numpy and R).
 */
export function quantileSorted(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const h = (sorted.length - 1) * Math.min(1, Math.max(0, q));
  const lo = Math.floor(h);
  const hi = Math.ceil(h);
  const a = sorted[lo] as number;
  const b = sorted[hi] as number;
  return a + (h - lo) * (b - a);
}

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

/** Ranks 1..n with ties given the average of the ranks they span (the "fractional" ranking). */
export function averageRanks(x: readonly number[]): number[] {
  const order = x.map((_, i) => i).sort((a, b) => (x[a] as number) - (x[b] as number));
  const ranks = new Array<number>(x.length);
  let i = 0;
  while (i < order.length) {
    let j = i;
    while (j + 1 < order.length && x[order[j + 1] as number] === x[order[i] as number]) j++;
    const r = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) ranks[order[k] as number] = r;
    i = j + 1;
  }
  return ranks;
}

/** Spearman's rho: Pearson's correlation of the average ranks (tie-aware, as scipy's `spearmanr`). */
export function spearman(x: readonly number[], y: readonly number[]): number {
  assertSameLength(x, y, 'spearman');
  if (x.some(Number.isNaN) || y.some(Number.isNaN)) return Number.NaN; // infinities rank like other values
  return pearson(averageRanks(x), averageRanks(y));
}

/**
 * Pair counts of two paired variables, in O(n log n) (Knight's algorithm, as scipy's `kendalltau`).
 * Over the n(n−1)/2 unordered pairs: `concordant` and `discordant` count pairs ordered the same /
 * opposite way in both; `tiedX` pairs tied in x (including those also tied in y), `tiedY` likewise,
 * `tiedBoth` pairs tied in both.
 */
export interface PairCounts {
  pairs: number;
  concordant: number;
  discordant: number;
  tiedX: number;
  tiedY: number;
  tiedBoth: number;
}

/** Counts concordant, discordant and tied pairs of (x, y); see {@link PairCounts}. */
export function pairCounts(x: readonly number[], y: readonly number[]): PairCounts {
  assertSameLength(x, y, 'pairCounts');
  const n = x.length;
  const idx = x.map((_, i) => i).sort((a, b) => (x[a] as number) - (x[b] as number) || (y[a] as number) - (y[b] as number));
  const xs = idx.map((i) => x[i] as number);
  const ys = idx.map((i) => y[i] as number);
  const tiesIn = (v: readonly number[]): number => {
    const sorted = [...v].sort((a, b) => a - b);
    let t = 0;
    let run = 1;
    for (let i = 1; i <= sorted.length; i++) {
      if (i < sorted.length && sorted[i] === sorted[i - 1]) run++;
      else {
        t += (run * (run - 1)) / 2;
        run = 1;
      }
    }
    return t;
  };
  let tiedBoth = 0;
  let run = 1;
  for (let i = 1; i <= n; i++) {
    if (i < n && xs[i] === xs[i - 1] && ys[i] === ys[i - 1]) run++;
    else {
      tiedBoth += (run * (run - 1)) / 2;
      run = 1;
    }
  }
  // Sorted by (x, y), a pair is discordant exactly when it is an inversion of y (strictly): pairs tied
  // in x are already in y order, so they never count.
  const discordant = countInversions(ys);
  const pairs = (n * (n - 1)) / 2;
  const tiedX = tiesIn(x);
  const tiedY = tiesIn(y);
  const untied = pairs - tiedX - tiedY + tiedBoth;
  return { pairs, concordant: untied - discordant, discordant, tiedX, tiedY, tiedBoth };
}

function countInversions(values: readonly number[]): number {
  const a = [...values];
  const buf = new Array<number>(a.length);
  let inversions = 0;
  for (let width = 1; width < a.length; width *= 2) {
    for (let lo = 0; lo < a.length; lo += 2 * width) {
      const mid = Math.min(lo + width, a.length);
      const hi = Math.min(lo + 2 * width, a.length);
      let i = lo;
      let j = mid;
      let k = lo;
      while (i < mid && j < hi) {
        if ((a[j] as number) < (a[i] as number)) {
          inversions += mid - i;
          buf[k++] = a[j++] as number;
        } else buf[k++] = a[i++] as number;
      }
      while (i < mid) buf[k++] = a[i++] as number;
      while (j < hi) buf[k++] = a[j++] as number;
      for (let t = lo; t < hi; t++) a[t] = buf[t] as number;
    }
  }
  return inversions;
}

/**
 * Kendall's tau-b: (C − D) / sqrt((P − Tx)(P − Ty)), where P is the number of pairs and Tx, Ty the pairs
 * tied in x and in y. Equals scipy's `kendalltau(x, y)` (variant 'b'). `NaN` when either variable is
 * constant.
 */
export function kendallTauB(x: readonly number[], y: readonly number[]): number {
  if (x.some(Number.isNaN) || y.some(Number.isNaN)) return Number.NaN;
  const c = pairCounts(x, y);
  const denom = Math.sqrt((c.pairs - c.tiedX) * (c.pairs - c.tiedY));
  if (!(denom > 0)) return Number.NaN;
  return Math.max(-1, Math.min(1, (c.concordant - c.discordant) / denom));
}

/**
 * Pairwise agreement of an automatic score with a human one: over the pairs the **human** ranks
 * (pairs tied in the human score are left out: there is no order to agree with), the fraction the
 * automatic score orders the same way; a pair the automatic score ties counts one half (a coin flip).
 * `(C + Ta/2) / (C + D + Ta)` with Ta the pairs tied in auto but not in human. 1 is perfect, 0.5 is
 * chance. `NaN` when every pair is tied in the human score.
 */
export function pairwiseAgreement(auto: readonly number[], human: readonly number[]): number {
  if (auto.some(Number.isNaN) || human.some(Number.isNaN)) return Number.NaN;
  const c = pairCounts(auto, human);
  const tiedAutoOnly = c.tiedX - c.tiedBoth;
  const ranked = c.concordant + c.discordant + tiedAutoOnly;
  if (ranked === 0) return Number.NaN;
  return (c.concordant + tiedAutoOnly / 2) / ranked;
}

/** A point estimate with a bootstrap percentile interval. */
export interface Interval {
  estimate: number;
  lo: number;
  hi: number;
  /** Confidence level, e.g. 0.95. */
  level: number;
}

/** Options of the bootstrap. */
export interface BootstrapOptions {
  /** Number of resamples (default 1000). */
  resamples?: number;
  /** Seed of the resampling PRNG (default 0); the same seed gives the same interval. */
  seed?: number;
  /** Confidence level (default 0.95). */
  level?: number;
}

/** A bootstrap interval with how many resamples gave a defined statistic. */
export interface BootstrapInterval extends Interval {
  resamples: number;
  /** Resamples whose statistic was defined (not `NaN`); the percentiles are taken over these. */
  valid: number;
}

/**
 * Nonparametric bootstrap percentile interval of a statistic of n paired observations: draw n indices
 * with replacement `resamples` times (seeded), evaluate `statistic` on each resample, and take the
 * (1−level)/2 and (1+level)/2 quantiles (type 7) of the defined values. Resamples where the statistic
 * is `NaN` (e.g. a constant resample for a correlation) are skipped and counted out of `valid`.
 *
 * @example
 * ```ts
 * const ci = bootstrapInterval(n, (idx) => pearson(idx.map((i) => a[i]!), idx.map((i) => h[i]!)), { seed: 1 });
 * ```
 */
export function bootstrapInterval(
  n: number,
  statistic: (indices: readonly number[]) => number,
  options: BootstrapOptions = {},
): BootstrapInterval {
  const resamples = options.resamples ?? 1000;
  const level = options.level ?? 0.95;
  if (!(level > 0 && level < 1)) throw new RangeError(`bootstrap: level must be in (0, 1), got ${level}`);
  if (!Number.isInteger(resamples) || resamples < 1) throw new RangeError(`bootstrap: resamples must be a positive integer, got ${resamples}`);
  const identity = Array.from({ length: n }, (_, i) => i);
  const estimate = statistic(identity);
  if (n === 0) return { estimate, lo: Number.NaN, hi: Number.NaN, level, resamples, valid: 0 };
  const rng = new Rng(options.seed ?? 0);
  const values: number[] = [];
  const idx = new Array<number>(n);
  for (let b = 0; b < resamples; b++) {
    for (let i = 0; i < n; i++) idx[i] = Math.floor(rng.next() * n);
    const v = statistic(idx);
    if (!Number.isNaN(v)) values.push(v);
  }
  values.sort((a, b) => a - b);
  const alpha = (1 - level) / 2;
  return { estimate, lo: quantileSorted(values, alpha), hi: quantileSorted(values, 1 - alpha), level, resamples, valid: values.length };
}

/**
 * The standard normal quantile Φ⁻¹(p) by Acklam's rational approximation (relative error below
 * 1.2e-9 on (0, 1): far finer than any interval needs).
 */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile: p must be in (0, 1), got ${p}`);
  const a = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const [a0, a1, a2, a3, a4, a5] = a as [number, number, number, number, number, number];
  const [b0, b1, b2, b3, b4] = b as [number, number, number, number, number];
  const [c0, c1, c2, c3, c4, c5] = c as [number, number, number, number, number, number];
  const [d0, d1, d2, d3] = d as [number, number, number, number];
  const plow = 0.02425;
  let x: number;
  if (p < plow) {
    const q = Math.sqrt(-2 * Math.log(p));
    x = (((((c0 * q + c1) * q + c2) * q + c3) * q + c4) * q + c5) / ((((d0 * q + d1) * q + d2) * q + d3) * q + 1);
  } else if (p <= 1 - plow) {
    const q = p - 0.5;
    const r = q * q;
    x = ((((((a0 * r + a1) * r + a2) * r + a3) * r + a4) * r + a5) * q) / (((((b0 * r + b1) * r + b2) * r + b3) * r + b4) * r + 1);
  } else {
    const q = Math.sqrt(-2 * Math.log(1 - p));
    x = -(((((c0 * q + c1) * q + c2) * q + c3) * q + c4) * q + c5) / ((((d0 * q + d1) * q + d2) * q + d3) * q + 1);
  }
  return x;
}

/**
 * The Wilson score interval of a proportion (`successes` out of `n`) at confidence `level`:
 * centre (p̂ + z²/2n) / (1 + z²/n), half-width z/(1 + z²/n) · sqrt(p̂(1−p̂)/n + z²/4n²), with
 * z = Φ⁻¹((1+level)/2). Unlike the normal ("Wald") interval it stays inside [0, 1] and is sensible at
 * p̂ = 0 or 1 and for small n. `n = 0` gives [0, 1].
 */
export function wilsonInterval(successes: number, n: number, level = 0.95): Interval {
  if (n === 0) return { estimate: Number.NaN, lo: 0, hi: 1, level };
  if (successes < 0 || successes > n) throw new RangeError(`wilsonInterval: successes ${successes} not in [0, ${n}]`);
  const z = normalQuantile((1 + level) / 2);
  const p = successes / n;
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (z / denom) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  // At p̂ = 0 (or 1) the exact bound is 0 (or 1); say so instead of returning a rounding error.
  const lo = successes === 0 ? 0 : Math.max(0, centre - half);
  const hi = successes === n ? 1 : Math.min(1, centre + half);
  return { estimate: p, lo, hi, level };
}

function assertSameLength(x: readonly number[], y: readonly number[], name: string): void {
  if (x.length !== y.length) throw new RangeError(`${name}: x has ${x.length} values, y has ${y.length}`);
}
