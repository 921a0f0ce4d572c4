import { describe, expect, it } from 'vitest';
import { spearman } from './spearman.js';

// Reference values computed with Python 3.11 + scipy 1.17.1: scipy.stats.spearmanr(x, y).statistic
describe('spearman', () => {
  it('matches scipy.stats.spearmanr with and without ties', () => {
    expect(spearman([0.1, 0.4, 0.35, 0.8, 0.4, 0.9, 0.2, 0.65, 0.65, 0.5], [1, 3, 2, 5, 2, 4, 1, 4, 3, 3])).toBeCloseTo(0.9346928345920194, 12);
    expect(
      spearman([0.12, 0.95, 0.33, 0.47, 0.71, 0.05, 0.88, 0.29, 0.64, 0.51, 0.18, 0.79], [0.3, 0.8, 0.2, 0.55, 0.6, 0.1, 0.95, 0.4, 0.5, 0.7, 0.15, 0.65]),
    ).toBeCloseTo(0.9020979020979022, 12);
  });

  it('is NaN on a NaN input', () => {
    expect(spearman([1, Number.NaN, 3], [1, 2, 3])).toBeNaN();
  });
});
