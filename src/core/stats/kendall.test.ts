import { describe, expect, it } from 'vitest';
import { Rng } from '../rng.js';
import { kendallTauB, pairCounts } from './kendall.js';

// Reference values computed with Python 3.11 + scipy 1.17.1: scipy.stats.kendalltau(x, y).statistic (tau-b)
describe('kendall', () => {
  it('matches scipy.stats.kendalltau with and without ties', () => {
    expect(kendallTauB([0.1, 0.4, 0.35, 0.8, 0.4, 0.9, 0.2, 0.65, 0.65, 0.5], [1, 3, 2, 5, 2, 4, 1, 4, 3, 3])).toBeCloseTo(0.8546760083846326, 12);
    expect(
      kendallTauB([0.12, 0.95, 0.33, 0.47, 0.71, 0.05, 0.88, 0.29, 0.64, 0.51, 0.18, 0.79], [0.3, 0.8, 0.2, 0.55, 0.6, 0.1, 0.95, 0.4, 0.5, 0.7, 0.15, 0.65]),
    ).toBeCloseTo(0.7575757575757575, 12);
  });

  it('returns NaN where undefined', () => {
    expect(kendallTauB([1, 2, 3], [4, 4, 4])).toBeNaN();
    expect(kendallTauB([1, Number.NaN, 3], [1, 2, 3])).toBeNaN();
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
});
