import { describe, expect, it } from 'vitest';
import { TIED_AUTO, TIED_HUMAN } from '../core/stats/__fixtures__/paired-samples.js';
import { mean } from '../core/stats/descriptive.js';
import { bootstrapInterval, pairwiseAgreement, wilsonInterval } from './stats.js';

// Reference values below were computed independently with Python 3.11 + scipy 1.17.1 in a throwaway
// venv (`pip install scipy`): scipy.stats.norm.ppf for the Wilson bounds, and pairwise agreement by brute
// force over all pairs in Python (skip pairs tied in human; auto tie = 0.5).

describe('pairwise agreement', () => {
  it('counts the pairs the human ranks that the automatic score orders the same way', () => {
    // 39 pairs differ in human; 36 concordant, 1 tied in auto (0.4 vs 0.4 with human 3 vs 2), 2 discordant.
    expect(pairwiseAgreement(TIED_AUTO, TIED_HUMAN)).toBeCloseTo(37 / 39, 12);
  });

  it('returns NaN where undefined', () => {
    expect(pairwiseAgreement([1, 2, 3], [4, 4, 4])).toBeNaN();
    expect(pairwiseAgreement([1, Number.NaN, 3], [1, 2, 3])).toBeNaN();
  });
});

describe('intervals', () => {
  it('Wilson intervals match the formula evaluated with scipy', () => {
    // Python: z = norm.ppf((1+level)/2); p = s/n; d = 1+z²/n; c = (p+z²/2n)/d; h = z/d·sqrt(p(1−p)/n + z²/4n²)
    const a = wilsonInterval(7, 10);
    expect(a.estimate).toBe(0.7);
    expect(a.lo).toBeCloseTo(0.39677814746114537, 8);
    expect(a.hi).toBeCloseTo(0.8922087325936989, 8);
    const zero = wilsonInterval(0, 5);
    expect(zero.lo).toBe(0);
    expect(zero.hi).toBeCloseTo(0.43448246478317476, 8);
    const all = wilsonInterval(5, 5);
    expect(all.lo).toBeCloseTo(0.5655175352168251, 8);
    expect(all.hi).toBe(1);
    expect(wilsonInterval(0, 0)).toEqual({ estimate: Number.NaN, lo: 0, hi: 1, level: 0.95 });
    const ninety = wilsonInterval(2, 3, 0.9);
    expect(ninety.lo).toBeCloseTo(0.2535338682812241, 8);
    expect(ninety.hi).toBeCloseTo(0.9217342736662717, 8);
  });

  it('bootstraps deterministically from a seed, and the interval covers the estimate', () => {
    const xs = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3];
    const stat = (idx: readonly number[]): number => mean(idx.map((i) => xs[i]!));
    const a = bootstrapInterval(xs.length, stat, { seed: 42, resamples: 500 });
    const b = bootstrapInterval(xs.length, stat, { seed: 42, resamples: 500 });
    const c = bootstrapInterval(xs.length, stat, { seed: 43, resamples: 500 });
    expect(a).toEqual(b);
    expect(c.lo === a.lo && c.hi === a.hi).toBe(false);
    expect(a.estimate).toBe(3.9);
    expect(a.lo).toBeLessThan(3.9);
    expect(a.hi).toBeGreaterThan(3.9);
    expect(a.valid).toBe(500);
    // A rough check against the normal approximation: sd/sqrt(n) ≈ 2.51/√10 ≈ 0.79, so ±1.55.
    expect(a.hi - a.lo).toBeGreaterThan(2);
    expect(a.hi - a.lo).toBeLessThan(4);
    // Skipping resamples whose statistic is undefined is bootstrapStatisticCi's: src/core/stats/bootstrap.test.ts.
  });
});
