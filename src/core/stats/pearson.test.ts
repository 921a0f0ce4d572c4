import { describe, expect, it } from 'vitest';
import { pearson } from './pearson.js';

// Reference values computed with Python 3.11 + scipy 1.17.1 on exactly these arrays:
//   scipy.stats.pearsonr(x, y).statistic
const TIED_AUTO = [0.1, 0.4, 0.35, 0.8, 0.4, 0.9, 0.2, 0.65, 0.65, 0.5];
const TIED_HUMAN = [1, 3, 2, 5, 2, 4, 1, 4, 3, 3];
const X = [0.12, 0.95, 0.33, 0.47, 0.71, 0.05, 0.88, 0.29, 0.64, 0.51, 0.18, 0.79];
const Y = [0.3, 0.8, 0.2, 0.55, 0.6, 0.1, 0.95, 0.4, 0.5, 0.7, 0.15, 0.65];

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
