import { describe, expect, it } from 'vitest';
import { Rng } from '../rng.js';
import { TIED_AUTO, TIED_HUMAN, X, Y } from './__fixtures__/paired-samples.js';
import { kendallTauB, pairCounts } from './kendall.js';

// Reference values: scipy.stats.kendalltau(x, y).statistic, tau-b (see the fixture).
describe('kendall', () => {
  it('matches scipy.stats.kendalltau with and without ties', () => {
    expect(kendallTauB(TIED_AUTO, TIED_HUMAN)).toBeCloseTo(0.8546760083846326, 12);
    expect(kendallTauB(X, Y)).toBeCloseTo(0.7575757575757575, 12);
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
