import { describe, expect, it } from 'vitest';
import { Rng } from '../core/rng.js';
import {
  averageRanks,
  bootstrapInterval,
  kendallTauB,
  mean,
  normalQuantile,
  pairCounts,
  pairwiseAgreement,
  pearson,
  quantileSorted,
  spearman,
  wilsonInterval,
} from './stats.js';

// Reference values below were computed independently with Python 3.11 + scipy 1.17.1 in a throwaway
// venv (`pip install scipy`), on exactly these arrays:
//   scipy.stats.pearsonr(x, y).statistic, spearmanr(x, y).statistic, kendalltau(x, y).statistic (tau-b)
//   scipy.stats.norm.ppf(p)
// and pairwise agreement by brute force over all pairs in Python (skip pairs tied in human; auto tie = 0.5).
const TIED_AUTO = [0.1, 0.4, 0.35, 0.8, 0.4, 0.9, 0.2, 0.65, 0.65, 0.5];
const TIED_HUMAN = [1, 3, 2, 5, 2, 4, 1, 4, 3, 3];
const X = [0.12, 0.95, 0.33, 0.47, 0.71, 0.05, 0.88, 0.29, 0.64, 0.51, 0.18, 0.79];
const Y = [0.3, 0.8, 0.2, 0.55, 0.6, 0.1, 0.95, 0.4, 0.5, 0.7, 0.15, 0.65];

describe('correlations against scipy', () => {
  it('matches pearsonr, spearmanr and kendalltau on data with ties', () => {
    expect(pearson(TIED_AUTO, TIED_HUMAN)).toBeCloseTo(0.9217866018475814, 12);
    expect(spearman(TIED_AUTO, TIED_HUMAN)).toBeCloseTo(0.9346928345920194, 12);
    expect(kendallTauB(TIED_AUTO, TIED_HUMAN)).toBeCloseTo(0.8546760083846326, 12);
    // 39 pairs differ in human; 36 concordant, 1 tied in auto (0.4 vs 0.4 with human 3 vs 2), 2 discordant.
    expect(pairwiseAgreement(TIED_AUTO, TIED_HUMAN)).toBeCloseTo(37 / 39, 12);
  });

  it('matches scipy on data without ties', () => {
    expect(pearson(X, Y)).toBeCloseTo(0.9043139754441135, 12);
    expect(spearman(X, Y)).toBeCloseTo(0.9020979020979022, 12);
    expect(kendallTauB(X, Y)).toBeCloseTo(0.7575757575757575, 12);
  });

  it('returns NaN where undefined', () => {
    expect(pearson([1], [2])).toBeNaN();
    expect(pearson([1, 1, 1], [1, 2, 3])).toBeNaN();
    expect(kendallTauB([1, 2, 3], [4, 4, 4])).toBeNaN();
    expect(pairwiseAgreement([1, 2, 3], [4, 4, 4])).toBeNaN();
    expect(() => pearson([1, 2], [1])).toThrow(/x has 2 values, y has 1/);
    // Constants whose mean is not exactly representable (scipy's exact-equality rule), and NaN inputs.
    expect(pearson([0.1, 0.1, 0.1], [1, 2, 3])).toBeNaN();
    expect(pearson([0.1, 0.1, 0.1], [0.1, 0.1, 0.1])).toBeNaN();
    expect(pearson(new Array(6).fill(1 / 9), [2 / 9, 1 / 9, 1 / 9, 1 / 9, 1 / 9, 1 / 9])).toBeNaN();
    for (const f of [pearson, spearman, kendallTauB, pairwiseAgreement]) expect(f([1, Number.NaN, 3], [1, 2, 3])).toBeNaN();
  });

  it('keeps Pearson exact at extreme scales (scipy: 0.98198 for both)', () => {
    expect(pearson([1e200, 2e200, 3e200], [1, 2, 4])).toBeCloseTo(0.9819805060619657, 12);
    expect(pearson([1e-200, 2e-200, 3e-200], [1, 2, 4])).toBeCloseTo(0.9819805060619657, 12);
  });

  it('counts pairs in O(n log n) exactly as brute force does', () => {
    const rng = new Rng(7);
    for (let trial = 0; trial < 20; trial++) {
      const n = 1 + rng.int(0, 40);
      const x = Array.from({ length: n }, () => rng.int(0, 6));
      const y = Array.from({ length: n }, () => rng.int(0, 6));
      const brute = { pairs: 0, concordant: 0, discordant: 0, tiedX: 0, tiedY: 0, tiedBoth: 0 };
      for (let i = 0; i < n; i++) {
        for (let j = i + 1; j < n; j++) {
          const dx = Math.sign(x[i]! - x[j]!);
          const dy = Math.sign(y[i]! - y[j]!);
          brute.pairs++;
          if (dx === 0) brute.tiedX++;
          if (dy === 0) brute.tiedY++;
          if (dx === 0 && dy === 0) brute.tiedBoth++;
          if (dx !== 0 && dy !== 0) {
            if (dx === dy) brute.concordant++;
            else brute.discordant++;
          }
        }
      }
      expect(pairCounts(x, y)).toEqual(brute);
    }
  });

  it('ranks ties by their average rank', () => {
    expect(averageRanks([10, 20, 20, 5])).toEqual([2, 3.5, 3.5, 1]);
  });
});

describe('intervals', () => {
  it('normal quantiles match scipy.stats.norm.ppf', () => {
    expect(normalQuantile(0.975)).toBeCloseTo(1.959963984540054, 8);
    expect(normalQuantile(0.95)).toBeCloseTo(1.6448536269514722, 8);
    expect(normalQuantile(0.995)).toBeCloseTo(2.5758293035489004, 8);
    expect(normalQuantile(0.5)).toBeCloseTo(0, 12);
    expect(normalQuantile(0.01)).toBeCloseTo(-2.3263478740408408, 8);
    expect(normalQuantile(1e-6)).toBeCloseTo(-4.753424308822899, 7);
  });

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
    const ninety = wilsonInterval(2, 3, 0.9);
    expect(ninety.lo).toBeCloseTo(0.2535338682812241, 8);
    expect(ninety.hi).toBeCloseTo(0.9217342736662717, 8);
  });

  it('type-7 quantiles interpolate between order statistics', () => {
    expect(quantileSorted([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantileSorted([1, 2, 3, 4], 0)).toBe(1);
    expect(quantileSorted([1, 2, 3, 4], 1)).toBe(4);
    expect(quantileSorted([1, 2, 3, 4, 5], 0.25)).toBe(2);
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
  });

  it('skips resamples where the statistic is undefined', () => {
    const x = [0, 0, 0, 0, 1];
    const y = [0, 1, 0, 1, 1];
    const ci = bootstrapInterval(x.length, (idx) => pearson(idx.map((i) => x[i]!), idx.map((i) => y[i]!)), { seed: 1, resamples: 200 });
    expect(ci.valid).toBeLessThan(200);
    expect(ci.valid).toBeGreaterThan(0);
  });
});
