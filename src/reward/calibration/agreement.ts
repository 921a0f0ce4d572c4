import { kendallTauB } from '../../core/stats/kendall.js';
import { pearson } from '../../core/stats/pearson.js';
import { spearman } from '../../core/stats/spearman.js';
import { bootstrapInterval, pairwiseAgreement, type BootstrapInterval, type BootstrapOptions } from '../stats.js';

/**
 * How well automatic scores agree with human ones: Pearson, Spearman, Kendall tau-b and pairwise
 * agreement, each with a seeded bootstrap percentile interval (pairs resampled with replacement).
 * Spearman, Kendall and pairwise agreement depend only on order, so a monotone calibration leaves them
 * unchanged; Pearson (linearity) is what a calibration can improve.
 */

/** The four agreement statistics with intervals. */
export interface AgreementStats {
  n: number;
  pearson: BootstrapInterval;
  spearman: BootstrapInterval;
  kendallTauB: BootstrapInterval;
  /** Fraction of human-ordered pairs the automatic score orders the same way (auto ties count ½). */
  pairwiseAgreement: BootstrapInterval;
}

/** Computes {@link AgreementStats}; every statistic uses the same resample indices (same seed). */
export function agreementStats(auto: readonly number[], human: readonly number[], options: BootstrapOptions = {}): AgreementStats {
  if (auto.length !== human.length) throw new RangeError(`agreementStats: ${auto.length} automatic scores but ${human.length} human ones`);
  const on = (f: (a: readonly number[], h: readonly number[]) => number) => (idx: readonly number[]): number =>
    f(idx.map((i) => auto[i] as number), idx.map((i) => human[i] as number));
  return {
    n: auto.length,
    pearson: bootstrapInterval(auto.length, on(pearson), options),
    spearman: bootstrapInterval(auto.length, on(spearman), options),
    kendallTauB: bootstrapInterval(auto.length, on(kendallTauB), options),
    pairwiseAgreement: bootstrapInterval(auto.length, on(pairwiseAgreement), options),
  };
}
