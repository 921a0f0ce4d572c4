import { describe, expect, it } from 'vitest';
import { TIED_AUTO, TIED_HUMAN, X, Y } from './__fixtures__/paired-samples.js';
import { pearson } from './pearson.js';

// Reference values: scipy.stats.pearsonr(x, y).statistic (see the fixture).

describe('pearson', () => {
  it('matches scipy.stats.pearsonr with and without ties', () => {
    expect(pearson(TIED_AUTO, TIED_HUMAN)).toBeCloseTo(0.9217866018475814, 12);
    expect(pearson(X, Y)).toBeCloseTo(0.9043139754441135, 12);
  });

  it('returns NaN where undefined and throws on unpaired lengths', () => {
    expect(pearson([1], [2])).toBeNaN();
    expect(pearson([1, 1, 1], [1, 2, 3])).toBeNaN();
    expect(() => pearson([1, 2], [1])).toThrow(/x has 2 values, y has 1/);
    // Constants whose mean is not exactly representable (scipy's exact-equality rule), and NaN inputs.
    expect(pearson([0.1, 0.1, 0.1], [1, 2, 3])).toBeNaN();
    expect(pearson([0.1, 0.1, 0.1], [0.1, 0.1, 0.1])).toBeNaN();
    expect(pearson(new Array(6).fill(1 / 9), [2 / 9, 1 / 9, 1 / 9, 1 / 9, 1 / 9, 1 / 9])).toBeNaN();
    expect(pearson([1, Number.NaN, 3], [1, 2, 3])).toBeNaN();
  });

  it('keeps Pearson exact at extreme scales (scipy: 0.98198 for both)', () => {
    expect(pearson([1e200, 2e200, 3e200], [1, 2, 4])).toBeCloseTo(0.9819805060619657, 12);
    expect(pearson([1e-200, 2e-200, 3e-200], [1, 2, 4])).toBeCloseTo(0.9819805060619657, 12);
  });
});
