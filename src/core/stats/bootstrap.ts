import { Rng } from '../rng.js';
import { assertFinite, assertMinLength, mean, quantileSorted } from './descriptive.js';

/**
 * Nonparametric bootstrap confidence intervals (Efron 1979), **percentile method**: resample the data
 * with replacement B times, recompute the statistic each time, and take the α/2 and 1 − α/2 quantiles
 * (Hyndman–Fan type 7) of the B replicates as the interval (Efron & Tibshirani 1993, §13.3). Resampling
 * is driven by gymflow's seeded {@link Rng}, so the same data, B and seed always give the same interval.
 *
 * The percentile interval is transformation-respecting and needs no variance formula, but with very
 * small samples (n < ~10) it is too narrow; report n beside it. A sample whose values are all equal
 * yields the degenerate interval [v, v].
 */

/** Options shared by the bootstrap functions. */
export interface BootstrapOptions {
  /** Number of bootstrap resamples B. Default 2000. */
  resamples?: number;
  /** Coverage of the interval, in (0, 1). Default 0.95. */
  confidence?: number;
  /** Seed of the resampling {@link Rng}. Default 0. */
  seed?: number;
}

/** A bootstrap percentile interval. */
export interface BootstrapInterval {
  /** The statistic on the original data. */
  estimate: number;
  low: number;
  high: number;
  confidence: number;
  resamples: number;
  /** How resampling was done: `one-sample`, `unpaired` (each group separately) or `paired` (pairs kept). */
  design: 'one-sample' | 'unpaired' | 'paired';
}

function settings(options: BootstrapOptions): { resamples: number; confidence: number; rng: Rng } {
  const resamples = options.resamples ?? 2000;
  const confidence = options.confidence ?? 0.95;
  if (!Number.isInteger(resamples) || resamples < 1) throw new RangeError(`bootstrap: resamples must be a positive integer, got ${resamples}`);
  if (!(confidence > 0 && confidence < 1)) throw new RangeError(`bootstrap: confidence must be in (0, 1), got ${confidence}`);
  return { resamples, confidence, rng: new Rng(options.seed ?? 0) };
}

function resampleMean(xs: readonly number[], rng: Rng): number {
  const n = xs.length;
  let s = 0;
  for (let i = 0; i < n; i++) s += xs[rng.int(0, n - 1)] as number;
  return s / n;
}

function interval(
  estimate: number,
  replicates: number[],
  confidence: number,
  design: BootstrapInterval['design'],
): BootstrapInterval {
  replicates.sort((a, b) => a - b);
  const alpha = 1 - confidence;
  return {
    estimate,
    low: quantileSorted(replicates, alpha / 2),
    high: quantileSorted(replicates, 1 - alpha / 2),
    confidence,
    resamples: replicates.length,
    design,
  };
}

/**
 * Percentile bootstrap interval of the mean of one sample.
 *
 * @example
 * ```ts
 * bootstrapMeanCi([0, 1, 1, 0, 1], { resamples: 5000, seed: 7 }); // { estimate: 0.6, low: 0.2, high: 1, … }
 * ```
 * @throws RangeError when `xs` is empty or holds a non-finite value.
 */
export function bootstrapMeanCi(xs: readonly number[], options: BootstrapOptions = {}): BootstrapInterval {
  assertMinLength(xs, 1, 'xs', 'bootstrapMeanCi');
  assertFinite(xs, 'xs');
  const { resamples, confidence, rng } = settings(options);
  const reps: number[] = [];
  for (let b = 0; b < resamples; b++) reps.push(resampleMean(xs, rng));
  return interval(mean(xs), reps, confidence, 'one-sample');
}

/**
 * Percentile bootstrap interval of mean(x) − mean(y) for **independent** samples: each replicate
 * resamples x (size nₓ) and y (size nᵧ) separately, so the group sizes are kept.
 *
 * @throws RangeError when a sample is empty or holds a non-finite value.
 */
export function bootstrapMeanDifferenceCi(
  x: readonly number[],
  y: readonly number[],
  options: BootstrapOptions = {},
): BootstrapInterval {
  assertMinLength(x, 1, 'x', 'bootstrapMeanDifferenceCi');
  assertMinLength(y, 1, 'y', 'bootstrapMeanDifferenceCi');
  assertFinite(x, 'x');
  assertFinite(y, 'y');
  const { resamples, confidence, rng } = settings(options);
  const reps: number[] = [];
  for (let b = 0; b < resamples; b++) reps.push(resampleMean(x, rng) - resampleMean(y, rng));
  return interval(mean(x, 'x') - mean(y, 'y'), reps, confidence, 'unpaired');
}

/**
 * Percentile bootstrap interval of the mean paired difference mean(x − y) when `x[i]` and `y[i]`
 * belong to the same unit (task): each replicate resamples whole pairs, keeping the within-pair
 * correlation that makes paired designs tighter.
 *
 * @throws RangeError when the lengths differ, are 0, or a value is non-finite.
 */
export function pairedBootstrapMeanDifferenceCi(
  x: readonly number[],
  y: readonly number[],
  options: BootstrapOptions = {},
): BootstrapInterval {
  if (x.length !== y.length) {
    throw new RangeError(`pairedBootstrapMeanDifferenceCi: x has ${x.length} values but y has ${y.length}; pairs need equal lengths`);
  }
  assertMinLength(x, 1, 'x', 'pairedBootstrapMeanDifferenceCi');
  assertFinite(x, 'x');
  assertFinite(y, 'y');
  const d = x.map((v, i) => v - (y[i] as number));
  const { resamples, confidence, rng } = settings(options);
  const reps: number[] = [];
  for (let b = 0; b < resamples; b++) reps.push(resampleMean(d, rng));
  return interval(mean(d), reps, confidence, 'paired');
}

/** A bootstrap percentile interval of any statistic, with how many resamples gave a defined value. */
export interface StatisticBootstrapInterval {
  /** The statistic on the original data (all n indices in order). */
  estimate: number;
  /** `NaN` when no resample gave a defined statistic. */
  low: number;
  high: number;
  confidence: number;
  resamples: number;
  /** Resamples whose statistic was defined (not `NaN`); the percentiles are taken over these. */
  valid: number;
}

/**
 * Percentile bootstrap interval of an arbitrary statistic of n observations (paired observations stay
 * paired: the statistic receives the resampled **indices**). Each of the B resamples draws n indices
 * with replacement from the seeded {@link Rng}; a resample whose statistic is `NaN` (a correlation of a
 * constant resample) is skipped and counted out of `valid`. With n = 0 the interval is [NaN, NaN].
 *
 * @example
 * ```ts
 * const ci = bootstrapStatisticCi(a.length, (idx) => pearson(idx.map((i) => a[i]!), idx.map((i) => h[i]!)), { seed: 1 });
 * ```
 */
export function bootstrapStatisticCi(
  n: number,
  statistic: (indices: readonly number[]) => number,
  options: BootstrapOptions = {},
): StatisticBootstrapInterval {
  const { resamples, confidence, rng } = settings(options);
  const estimate = statistic(Array.from({ length: n }, (_, i) => i));
  if (n === 0) return { estimate, low: Number.NaN, high: Number.NaN, confidence, resamples, valid: 0 };
  const values: number[] = [];
  const idx = new Array<number>(n);
  for (let b = 0; b < resamples; b++) {
    for (let i = 0; i < n; i++) idx[i] = rng.int(0, n - 1);
    const v = statistic(idx);
    if (!Number.isNaN(v)) values.push(v);
  }
  values.sort((a, b) => a - b);
  const alpha = 1 - confidence;
  const quantile = (q: number): number => (values.length === 0 ? Number.NaN : quantileSorted(values, q));
  return { estimate, low: quantile(alpha / 2), high: quantile(1 - alpha / 2), confidence, resamples, valid: values.length };
}
