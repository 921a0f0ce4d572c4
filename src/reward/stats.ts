import { bootstrapStatisticCi } from '../core/stats/bootstrap.js';
import { pairCounts } from '../core/stats/kendall.js';
import { wilsonInterval as wilson } from '../core/stats/wilson.js';

/**
 * What the reward layers add to the statistics of `src/core/stats`: the agreement of an automatic score
 * with a human one (pairwise agreement), and the interval shape their reports (calibration agreement,
 * leaderboards) carry — `{ estimate, lo, hi, level }`. The statistics themselves (correlations, the
 * bootstrap, the Wilson interval) are the ones in `src/core/stats`.
 */

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

/** A point estimate with an interval, as the reward reports write it. */
export interface Interval {
  estimate: number;
  lo: number;
  hi: number;
  /** Confidence level, e.g. 0.95. */
  level: number;
}

/** Options of the reward reports' bootstrap. */
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
 * {@link bootstrapStatisticCi} (percentile bootstrap of a statistic of n paired observations, resamples
 * whose statistic is `NaN` skipped) with the reward reports' defaults (1000 resamples) and shape.
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
  const ci = bootstrapStatisticCi(n, statistic, {
    resamples: options.resamples ?? 1000,
    confidence: options.level ?? 0.95,
    seed: options.seed ?? 0,
  });
  return { estimate: ci.estimate, lo: ci.low, hi: ci.high, level: ci.confidence, resamples: ci.resamples, valid: ci.valid };
}

/**
 * The Wilson score interval of `successes` out of `n` (see `src/core/stats/wilson.ts`) in the reward
 * reports' shape. `n = 0` gives [0, 1] with a `NaN` estimate: a leaderboard row with no episodes says
 * "anything" instead of failing.
 */
export function wilsonInterval(successes: number, n: number, level = 0.95): Interval {
  if (n === 0) return { estimate: Number.NaN, lo: 0, hi: 1, level };
  const ci = wilson(successes, n, level);
  return { estimate: ci.estimate, lo: ci.low, hi: ci.high, level: ci.confidence };
}
